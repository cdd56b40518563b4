"""Bad input to pxq-ring: each case exits 2 with a message naming the problem, and writes
no record. A tile larger than the buffer is not an error: it is clamped with a note."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

CASES = [
    (["--tile", "0"], "must be > 0"),
    (["--tile", "-1"], "invalid size '-1'"),
    (["--tile", "12Q"], "unknown suffix"),
    (["--block", "1001"], "not a multiple of 8"),
    (["--mode", "fast"], "--mode"),
    (["--backend", "cuda"], "--backend"),
    (["--mode", "flat", "--threads", "2"], "--mode flat means 1 thread"),
    (["--mode", "hybrid", "--tile", "64K"], "use --mode tiled"),
    (["--nodes", "2", "--ranks-per-node", "2"], "needs 4 ranks"),
]


def main() -> int:
    exe, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures = 0
    results = work / "r.jsonl"

    def run(args: list[str], json_path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([exe, "--block", "64K", "--iterations", "1", *args, "--json", str(json_path)],
                              capture_output=True, text=True, timeout=60)

    for args, needle in CASES:
        p = run(args, results)
        ok = p.returncode == 2 and needle in p.stderr and not results.exists()
        print(f"{'ok  ' if ok else 'FAIL'} {' '.join(args)!s:40} exit {p.returncode}: {p.stderr.strip()[:150]}")
        failures += not ok
    for bad_path, needle in ((work / "missing" / "r.jsonl", "does not exist"), (work, "is a directory")):
        p = run([], bad_path)
        ok = p.returncode == 2 and needle in p.stderr and not (work / "missing").exists()
        print(f"{'ok  ' if ok else 'FAIL'} --json {bad_path}: exit {p.returncode}: {p.stderr.strip()[:150]}")
        failures += not ok
    p = run(["--tile", "4M"], results)
    rec = json.loads(results.read_text()) if results.exists() else {}
    ok = p.returncode == 0 and "clamped" in p.stdout and any("clamped" in n for n in rec.get("notes", []))
    print(f"{'ok  ' if ok else 'FAIL'} --tile 4M on a 64K block is clamped with a note: exit {p.returncode}")
    failures += not ok
    print(f"{len(CASES) + 3 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
