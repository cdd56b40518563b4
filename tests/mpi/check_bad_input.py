"""Bad input to a miniapp: each case exits 2 with a message naming the problem, and writes
no record. A tile larger than the buffer is not an error: it is clamped with a note.

usage: check_bad_input.py APP EXE WORKDIR [MPIRUN]"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

COMMON_CASES = [
    (["--tile", "0"], "must be > 0"),
    (["--tile", "-1"], "invalid size '-1'"),
    (["--tile", "12Q"], "unknown suffix"),
    (["--mode", "fast"], "--mode"),
    (["--backend", "cuda"], "--backend"),
    (["--mode", "flat", "--threads", "2"], "--mode flat means 1 thread"),
    (["--mode", "hybrid", "--tile", "64K"], "use --mode tiled"),
    (["--nodes", "2", "--ranks-per-node", "2"], "needs 4 ranks"),
]

APPS = {
    "ring": {
        "base": ["--block", "64K", "--iterations", "1"],
        "cases": [(["--block", "1001"], "not a multiple of 8")],
        "ranks": [],  # the ring runs on any number of ranks
    },
    "cg": {
        "base": ["--class", "S", "--quiet"],
        "cases": [
            (["--class", "Q"], "unknown class 'Q'"),
            (["--class", "AB"], "use S, W, A, B or C"),
            (["--matrix", "dense"], "--matrix: dense not in {csr,sym}"),
            (["--matrix", "sym", "--mode", "tiled", "--tile", "4K"], "no column windows to tile or fuse"),
            (["--matrix", "sym", "--mode", "hybrid", "--threads", "2", "--fuse", "on"], "no column windows"),
        ],
        "ranks": [(3, "use 2 or 4"), (6, "use 4 or 8"), (2, "needs one rank, not 2", ["--matrix", "sym"])],
    },
    "mg": {"ranks": [(3, "use 2 or 4"), (6, "use 4 or 8")]},
    "ft": {"cases": [(["--decomp", "3d"], "use 1d, 2d or auto")], "ranks": [(3, "use 2 or 4"), (6, "use 4 or 8")]},
}
# What every NAS proxy (an app not above, or with only its own cases and process counts there)
# is given and must refuse: a class of none, a class pxq does not carry.
NAS = {
    "base": ["--class", "S", "--quiet"],
    "cases": [(["--class", "Q"], "unknown class 'Q'"), (["--class", "D"], "use S, W, A, B or C")],
    "ranks": [],
}


def spec_of(app: str) -> dict:
    own = APPS.get(app, {})
    if "base" in own:
        return own
    return {"base": NAS["base"], "cases": NAS["cases"] + own.get("cases", []), "ranks": own.get("ranks", [])}


def main() -> int:
    app, exe, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    mpirun = sys.argv[4] if len(sys.argv) > 4 else "mpirun"
    spec = spec_of(app)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures = 0
    total = 0
    results = work / "r.jsonl"

    def run(args: list[str], json_path: Path, ranks: int = 0) -> subprocess.CompletedProcess:
        launch = [mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] if ranks else []
        return subprocess.run(
            [*launch, exe, *spec["base"], *args, "--json", str(json_path)], capture_output=True, text=True, timeout=120
        )

    def report(ok: bool, what: str, p: subprocess.CompletedProcess) -> None:
        nonlocal failures, total
        total += 1
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what:45} exit {p.returncode}: {p.stderr.strip()[:160]}")

    for args, needle in COMMON_CASES + spec["cases"]:
        p = run(args, results)
        report(p.returncode == 2 and needle in p.stderr and not results.exists(), " ".join(args), p)
    for ranks, needle, *args in spec["ranks"]:  # (ranks, message[, arguments])
        extra = args[0] if args else []
        p = run(extra, results, ranks)
        report(p.returncode == 2 and needle in p.stderr and not results.exists(), f"{ranks} ranks {' '.join(extra)}", p)
    for bad_path, needle in ((work / "missing" / "r.jsonl", "does not exist"), (work, "is a directory")):
        p = run([], bad_path)
        report(p.returncode == 2 and needle in p.stderr and not (work / "missing").exists(), f"--json {bad_path}", p)
    p = run(["--tile", "64M"], results)
    rec = json.loads(results.read_text()) if results.exists() else {}
    ok = p.returncode == 0 and "clamped" in p.stdout and any("clamped" in n for n in rec.get("notes", []))
    report(ok, "--tile 64M is clamped to the buffer with a note", p)
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
