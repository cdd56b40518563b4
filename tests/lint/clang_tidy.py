"""clang-tidy over pxq's C++: every source file of the build's compile_commands.json that lives in
this checkout, with the checks of .clang-tidy (bug-prone patterns and performance). Exits 1 on any
finding (each printed with its file, line and check), 2 when it cannot run (no build, no
clang-tidy), 0 when the sources are clean.

    tests/lint/clang_tidy.py BUILD_DIR [--jobs N] [FILE...]

CTest runs it as lint.clang-tidy (label slow: about 4 minutes on 2 cores). The compiler is GCC, so
clang-tidy is given GCC's omp.h (its own resource folder has none).

A file found clean is remembered (in $XDG_CACHE_HOME/pxq/clang-tidy, else ~/.cache/pxq/clang-tidy;
PXQ_CLANG_TIDY_CACHE=off checks every file afresh) under a key made of everything its result
depends on: clang-tidy's version, .clang-tidy, the omp.h given, the file's compile command and the
file as the compiler's preprocessor expands it (every header it includes, with its comments and
macro definitions), the checkout's and the build's folders written as placeholders so that a
fresh clone of the same sources finds the same keys. A file whose key is remembered is clean
without running clang-tidy again; a finding is never remembered."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
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


def compile_db(build: Path) -> list[dict]:
    """The build's compile_commands.json (exit 2 when the build has none or it is unreadable)."""
    db = build / "compile_commands.json"
    if not db.is_file():
        cannot_run(f"{db} is missing: configure the build first (./pxq build)")
    try:
        entries = json.loads(db.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        cannot_run(f"{db} cannot be read ({e}): configure the build again (./pxq build)")
    if not isinstance(entries, list):
        cannot_run(f"{db} is not a list of compile commands: configure the build again (./pxq build)")
    return entries


def sources(entries: list[dict]) -> list[str]:
    """This checkout's C++ sources the build compiles (never Kokkos's, .deps' or generated ones)."""
    out = set()
    for entry in entries:
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


def cache_dir() -> Path | None:
    """Where clean files are remembered (None: PXQ_CLANG_TIDY_CACHE=off)."""
    if os.environ.get("PXQ_CLANG_TIDY_CACHE", "").lower() in ("off", "0", "no"):
        return None
    base = Path(os.environ["XDG_CACHE_HOME"]) if os.environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "pxq" / "clang-tidy"


def commands(entries: list[dict]) -> dict[str, dict]:
    """compile_commands.json's entry of each source, by its resolved path."""
    return {str(Path(e["directory"], e["file"]).resolve()): e for e in entries}


def placeholders(text: str, build: Path) -> str:
    """TEXT with the build's and the checkout's folders written as placeholders."""
    return text.replace(str(build.resolve()), "@BUILD@").replace(str(ROOT), "@ROOT@")


def key(common: str, entry: dict | None, build: Path) -> str | None:
    """The cache key of one source: COMMON (tool, configuration, omp.h) and the file's compile
    command and preprocessed text; None when the preprocessor cannot expand it (then it is checked)."""
    if entry is None:
        return None
    argv = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    kept: list[str] = []
    skip = False
    for a in argv:  # the compile command less its output: the preprocessor's text instead, on stdout
        if skip or a in ("-o", "-c"):
            skip = a == "-o"
            continue
        kept.append(a)
    # -C keeps the comments (NOLINT), -dD the macros' definitions (checks read them, used or not).
    pre = subprocess.run(
        [*kept, "-E", "-P", "-C", "-dD"], capture_output=True, text=True, cwd=entry["directory"], timeout=300
    )
    if pre.returncode != 0:
        return None
    digest = hashlib.sha256()
    for part in (common, placeholders(" ".join(kept), build), placeholders(pre.stdout, build)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def common_key(exe: str, scratch: Path) -> str:
    """What every file's result depends on: clang-tidy's version, .clang-tidy and the omp.h given."""
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    omp = scratch / "omp.h"
    return "\0".join(
        (version, (ROOT / ".clang-tidy").read_text(encoding="utf-8"), omp.read_text() if omp.is_file() else "")
    )


def remember(cache: Path, k: str) -> bool:
    """Marks key K clean (a hit marks it again, for prune); False when the cache cannot be written
    (a read-only home, a file where its folder would be): the check goes on without it."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / k).touch()
    except OSError:
        return False
    return True


def prune(cache: Path, days: float = 30.0) -> None:
    """Forgets the keys no check has found for DAYS (each hit touches its key)."""
    old = time.time() - days * 86400
    for entry in cache.glob("*"):
        try:
            if entry.stat().st_mtime < old:
                entry.unlink()
        except OSError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description="clang-tidy over pxq's C++ sources")
    ap.add_argument("build", type=Path, help="the build folder (holding compile_commands.json)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files checked at once")
    ap.add_argument("files", nargs="*", help="these sources only (default: every one the build compiles)")
    args = ap.parse_args()
    exe = tool()
    db = compile_db(args.build)
    files = [str(Path(f).resolve()) for f in args.files] or sources(db)
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        cannot_run(f"no such source file: {', '.join(missing)}")
    failed: list[str] = []
    cache, known, unwritable = cache_dir(), 0, False
    entries = commands(db) if cache is not None else {}
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        extra = omp_include(Path(scratch))
        common = common_key(exe, Path(scratch))

        def one(path: str) -> tuple[str, int, str, bool]:
            nonlocal unwritable
            k = key(common, entries.get(path), args.build) if cache is not None else None
            if k is not None and cache is not None and (cache / k).is_file():
                remember(cache, k)
                return path, 0, "", True
            path, code, text = check(exe, args.build, extra, path)
            if k is not None and cache is not None and not code and not text and not remember(cache, k):
                unwritable = True
            return path, code, text, False

        for path, code, text, remembered in pool.map(one, files):
            known += remembered
            if code or text:
                failed.append(path)
                print(text or f"{path}: clang-tidy exited {code}", flush=True)
    if cache is not None and cache.is_dir():
        prune(cache)
    where = f" ({known} unchanged since found clean: {cache})" if known else ""
    if unwritable:
        where += f" (nothing remembered: {cache} cannot be written)"
    print(f"clang-tidy ({', '.join(OWN)}): {len(files)} files{where}, {len(failed)} with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
