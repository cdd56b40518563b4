from pxq.cli import entry

raise SystemExit(entry())
