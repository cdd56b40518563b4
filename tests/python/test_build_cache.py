"""The build's compiler launcher (cmake/pxq-ccache.sh): a second compile of the same source is
taken from the cache, also from another checkout; an object made where -march=native meant
another CPU is never taken; where the cache cannot be written, or ccache is missing, the
compiler runs as it is."""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "cmake" / "pxq-ccache.sh"
SOURCE = "int twice(int x) { return 2 * x; }\n"

needs_ccache = pytest.mark.skipif(
    shutil.which("ccache") is None, reason="ccache is not installed (./pxq setup installs it)"
)


def checkout(where: Path) -> Path:
    """A checkout's launcher and one source file, in WHERE."""
    (where / "cmake").mkdir(parents=True)
    shutil.copy(LAUNCHER, where / "cmake" / LAUNCHER.name)
    (where / "src").mkdir()
    (where / "src" / "twice.cpp").write_text(SOURCE)
    return where


def compile_in(tree: Path, cache: Path, compiler: str = "c++", path: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PXQ_CCACHE_DIR": str(cache), "CCACHE_LOGFILE": "", "CCACHE_STATSLOG": ""}
    if path is not None:
        env["PATH"] = path
    src = tree / "src" / "twice.cpp"
    argv = [
        str(tree / "cmake" / LAUNCHER.name),
        compiler,
        "-O2",
        "-march=native",
        "-c",
        str(src),
        "-o",
        str(tree / "twice.o"),
    ]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tree, timeout=120)


def hits(cache: Path) -> int:
    out = subprocess.run(
        ["ccache", "--print-stats"], capture_output=True, text=True, env={**os.environ, "CCACHE_DIR": str(cache)}
    )
    stats = dict(line.split("\t", 1) for line in out.stdout.splitlines() if "\t" in line)
    return int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))


@needs_ccache
def test_a_second_checkout_of_the_same_source_is_taken_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    first = compile_in(checkout(tmp_path / "one"), cache)
    assert first.returncode == 0 and (tmp_path / "one" / "twice.o").is_file(), first.stderr
    assert hits(cache) == 0
    second = compile_in(checkout(tmp_path / "two"), cache)  # another folder: paths hashed relative to it
    assert second.returncode == 0 and (tmp_path / "two" / "twice.o").is_file(), second.stderr
    assert hits(cache) == 1
    assert (tmp_path / "one" / "twice.o").read_bytes() == (tmp_path / "two" / "twice.o").read_bytes()


@needs_ccache
def test_an_object_built_where_march_native_meant_another_cpu_is_not_taken(tmp_path):
    """A compiler that says -march=native means another CPU (its --help=target differs): a miss."""
    cache = tmp_path / "cache"
    assert compile_in(checkout(tmp_path / "one"), cache).returncode == 0
    fake = tmp_path / "bin"
    fake.mkdir()
    real = shutil.which("c++")
    wrapper = fake / "c++"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" --help=target "*) {real} "$@"; echo "  -mother-cpu [enabled]";;\n'
        f'  *) exec {real} "$@";;\nesac\n'
    )
    # The same size and mtime as the real compiler (all that ccache's own check compares): only
    # what -march=native means differs.
    size = Path(real).stat().st_size
    with wrapper.open("a") as f:
        f.write("#" * (size - wrapper.stat().st_size - 1) + "\n")
    assert wrapper.stat().st_size == size
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    os.utime(wrapper, (Path(real).stat().st_mtime, Path(real).stat().st_mtime))
    other = compile_in(checkout(tmp_path / "two"), cache, "c++", f"{fake}:{os.environ['PATH']}")
    assert other.returncode == 0, other.stderr
    assert hits(cache) == 0
    again = compile_in(checkout(tmp_path / "three"), cache)  # this CPU again: its object is there
    assert again.returncode == 0 and hits(cache) == 1


def test_without_a_writable_cache_or_without_ccache_the_compiler_runs_as_it_is(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        blocked = compile_in(checkout(tmp_path / "one"), locked / "cache")
        if os.geteuid() != 0:  # root writes anywhere: the cache is then made, and that is fine too
            assert not (locked / "cache").exists()
        assert blocked.returncode == 0 and (tmp_path / "one" / "twice.o").is_file(), blocked.stderr
    finally:
        locked.chmod(0o700)
    bare = tmp_path / "bare"  # a PATH with the compiler, its assembler and the shell's tools, no ccache
    bare.mkdir()
    for tool in ("c++", "as", "dirname", "mkdir", "md5sum", "stat", "bash", "env"):
        found = shutil.which(tool)
        assert found, tool
        (bare / tool).symlink_to(found)
    plain = compile_in(checkout(tmp_path / "two"), tmp_path / "cache", "c++", str(bare))
    assert plain.returncode == 0 and (tmp_path / "two" / "twice.o").is_file(), plain.stderr
    assert not (tmp_path / "cache").exists()
