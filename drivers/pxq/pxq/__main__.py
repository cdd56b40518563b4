from pxq.cli import main

raise SystemExit(main())
