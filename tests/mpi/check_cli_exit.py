"""pxq's programs that parse their command line with CLI11's usual main (pxq::cli::App::
parse_or_exit) leave a bad command line with pxq's bad-input code, 2, and CLI11's message
(what is wrong, then the hint to --help); --help exits 0.

usage: check_cli_exit.py EXE...   (each takes no MPI launcher: envinfo, stream, noise, stride)"""

from __future__ import annotations

import subprocess
import sys


def main() -> int:
    failed = []
    for exe in sys.argv[1:]:
        for argv, code, said in (
            (["--no-such-option"], 2, "Run with --help"),
            (["--help"], 0, "Usage"),
        ):
            p = subprocess.run([exe, *argv], capture_output=True, text=True, timeout=60)
            out = p.stdout + p.stderr
            if p.returncode != code or said not in out or "terminate called" in out:
                failed.append(f"{exe} {' '.join(argv)}: exit {p.returncode} (want {code}), said:\n{out[-800:]}")
    for f in failed:
        print(f"FAIL: {f}")
    if not failed:
        print(f"PASS: {len(sys.argv) - 1} programs: a bad command line exits 2 with its message, --help 0")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
