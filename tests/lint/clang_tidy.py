"""clang-tidy over pxq's C++: every source file of the build's compile_commands.json that lives in
this checkout, with the checks of .clang-tidy (bug-prone patterns and performance). Exits 1 on any
finding (each printed with its file, line and check), 2 when it cannot run (no build, no
clang-tidy), 0 when the sources are clean.

    tests/lint/clang_tidy.py BUILD_DIR [--jobs N] [FILE...]

CTest runs it as lint.clang-tidy (label slow: about 5 minutes on 2 cores). The compiler is GCC, so
clang-tidy is given GCC's omp.h (its own resource folder has none)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[2]
OWN = ("kernels", "tiling", "comm", "miniapps", "drivers", "tests", "labs")


def cannot_run(why: str) -> NoReturn:
    """Exit 2: nothing was checked (not a finding)."""
    print(f"clang_tidy.py: {why}", file=sys.stderr)
    sys.exit(2)


def tool() -> str:
    """The pinned clang-tidy of .venv (drivers/requirements.txt), else one on PATH."""
    venv = ROOT / ".venv" / "bin" / "clang-tidy"
    found = str(venv) if venv.exists() else shutil.which("clang-tidy")
    if not found:
        cannot_run("no clang-tidy: run ./pxq setup (it installs drivers/requirements.txt)")
    return found


def sources(build: Path) -> list[str]:
    """This checkout's C++ sources the build compiles (never Kokkos's, .deps' or generated ones)."""
    db = build / "compile_commands.json"
    if not db.is_file():
        cannot_run(f"{db} is missing: configure the build first (./pxq build)")
    out = set()
    for entry in json.loads(db.read_text(encoding="utf-8")):
        path = Path(entry["directory"], entry["file"]).resolve()
        try:
            rel = path.relative_to(ROOT)
        except ValueError:
            continue
        if rel.parts[0] in OWN and path.suffix == ".cpp":
            out.add(str(path))
    return sorted(out)


def omp_include(scratch: Path) -> list[str]:
    """An include folder holding GCC's omp.h alone (GCC's whole folder would shadow clang's own
    intrinsics headers), less GCC's deallocator attribute `__malloc__ (omp_free)`, which clang
    refuses; nothing pxq calls depends on it."""
    gcc = subprocess.run(["gcc", "-print-file-name=include/omp.h"], capture_output=True, text=True)
    header = Path(gcc.stdout.strip())
    if gcc.returncode != 0 or not header.is_file():
        return []
    text = re.sub(r"__malloc__ \(omp_free\),?", "", header.read_text(encoding="utf-8"))
    (scratch / "omp.h").write_text(text, encoding="utf-8")
    return [f"--extra-arg=-isystem{scratch}"]


def check(exe: str, build: Path, extra: list[str], path: str) -> tuple[str, int, str]:
    p = subprocess.run(
        [exe, "-p", str(build), "--quiet", *extra, path], capture_output=True, text=True, cwd=ROOT, timeout=900
    )
    findings = [line for line in p.stdout.splitlines() if ": warning: " in line or ": error: " in line]
    return path, p.returncode, "\n".join(findings) if findings else (p.stderr.strip() if p.returncode else "")


def main() -> int:
    ap = argparse.ArgumentParser(description="clang-tidy over pxq's C++ sources")
    ap.add_argument("build", type=Path, help="the build folder (holding compile_commands.json)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files checked at once")
    ap.add_argument("files", nargs="*", help="these sources only (default: every one the build compiles)")
    args = ap.parse_args()
    exe = tool()
    files = [str(Path(f).resolve()) for f in args.files] or sources(args.build)
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        cannot_run(f"no such source file: {', '.join(missing)}")
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        extra = omp_include(Path(scratch))
        for path, code, text in pool.map(lambda f: check(exe, args.build, extra, f), files):
            if code or text:
                failed.append(path)
                print(text or f"{path}: clang-tidy exited {code}", flush=True)
    print(f"clang-tidy ({', '.join(OWN)}): {len(files)} files, {len(failed)} with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
