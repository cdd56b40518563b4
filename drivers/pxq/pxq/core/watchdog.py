"""The driver's watchdog (see procs.py): reads what the driver tracks from its standard input;
when that pipe closes, whatever the driver did not finish is stopped and removed.

Messages, one JSON object a line: watch/done a run (its session id and run tag), tmp/tmpdone
a temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys

from pxq.core.procs import stop_tree


def main() -> int:
    # The driver's terminal signals are the driver's business; the pipe closing is ours.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    runs: dict[str, int | None] = {}
    tmpdirs: set[str] = set()
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        op = msg.get("op")
        if op == "watch":
            runs[msg["run_id"]] = msg.get("pgid")
        elif op == "done":
            runs.pop(msg["run_id"], None)
        elif op == "tmp":
            tmpdirs.add(msg["path"])
        elif op == "tmpdone":
            tmpdirs.discard(msg["path"])
    for run_id, pgid in runs.items():
        stop_tree(pgid, run_id, grace=1.0)
    for path in tmpdirs:
        if os.path.basename(path).startswith("pxq-"):
            shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
