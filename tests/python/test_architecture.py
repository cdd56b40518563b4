"""The shape of the house, checked: the registries match the folders, no function in miniapps/
or drivers/ is longer than 80 lines, and the sources are formatted and linted."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pxq.core import registry

ROOT = Path(__file__).resolve().parents[2]
MAX_FUNCTION_LINES = 80


def test_every_registered_app_has_its_folder_and_binary():
    folders = {p.name for p in (ROOT / "miniapps").iterdir() if (p / "CMakeLists.txt").exists()} - {"common"}
    assert set(registry.apps()) == folders
    for app in registry.apps():
        info = registry.app(app)
        assert info["binary"] == f"pxq-{app}"
        assert info["tile_kernel"] in info["bench_kernels"]
        assert info["headline"] and info["unit"]


def test_every_backend_is_a_folder_whose_files_join_the_families_the_registry_lists():
    # A backend is kernels/NAME/ (its CMakeLists.txt, a runtime file that registers it) and the
    # executor files there, each joining one kernel family; the registry the binaries export
    # says which backends run which family, and that must be what the files say.
    kernels = ROOT / "kernels"
    families = {f["name"]: set(f["backends"]) for f in registry.registry()["kernel_families"]}
    # A family's type and its name, as its header declares them: kXFamily[] = "X" and
    # using XFamily = Family<kXFamily, ...>.
    headers = "".join(h.read_text() for h in (kernels / "include" / "pxq" / "kernels").glob("*.hpp"))
    names = dict(re.findall(r'inline constexpr char (\w+)\[\] = "(\w+)"', headers))
    family_of = {t: names[k] for t, k in re.findall(r"using (\w+) =\s*Family<(\w+),", headers)}
    joins = re.compile(r'PXQ_JOIN\((\w+), "(\w+)"')
    for name in registry.available_backends():
        folder = kernels / name
        assert (folder / "CMakeLists.txt").is_file() and (folder / "runtime.cpp").is_file(), folder
        joined = {(fam, who) for f in folder.glob("*.cpp") for fam, who in joins.findall(f.read_text())}
        assert {who for _, who in joined} == {name}, f"{folder}: a file joins for another backend"
        assert {family_of.get(fam, fam) for fam, _ in joined} == {f for f, b in families.items() if name in b}
    assert "openmp" in registry.available_backends()
    assert set(families) >= {"ring", "CG", "MG", "FT"}


def test_the_driver_resolves_sizes_and_modes_as_the_binaries_do():
    from pxq.core.errors import InputError
    from pxq.core.layout import parse_bytes, resolve_mode

    assert parse_bytes("256K") == 262144
    for bad in ("256IB", "256 K", "1.5M", "2000000T"):
        with pytest.raises(InputError):
            parse_bytes(bad)
    assert resolve_mode(None, 2, "64K") == ("tiled", 2, "64K")
    with pytest.raises(InputError, match="mode flat"):
        resolve_mode("flat", 2, None)


def _tool(name: str) -> str:
    exe = Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    assert found, f"{name} is missing: it is in drivers/requirements.txt (./pxq installs it)"
    return found


def test_no_function_over_80_lines():
    out = subprocess.run(
        [_tool("lizard"), "-L", str(MAX_FUNCTION_LINES), "-w", "miniapps", "drivers"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    # lizard warns on its other thresholds too: keep the functions whose length is over the limit.
    long = [
        line
        for line in out.stdout.splitlines()
        if (m := re.search(r"(\d+) length", line)) and int(m.group(1)) > MAX_FUNCTION_LINES
    ]
    assert not long, "functions over 80 lines:\n" + "\n".join(long)


def test_cpp_is_clang_formatted():
    files = subprocess.run(
        ["git", "ls-files", "*.cpp", "*.hpp", "*.h"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    if not files:
        pytest.fail("no C++ files listed by git (run the tests from a git checkout)")
    out = subprocess.run(
        [_tool("clang-format"), "--dry-run", "--Werror", *files], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]


def test_python_is_ruff_clean():
    for args in (["check", "drivers", "tests", "packaging"], ["format", "--check", "drivers", "tests", "packaging"]):
        out = subprocess.run([_tool("ruff"), *args], cwd=ROOT, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_the_ctest_backends_are_the_registry_s():
    from pxq.core.paths import build_dir

    cache = build_dir() / "CMakeCache.txt"
    line = next(x for x in cache.read_text().splitlines() if x.startswith("PXQ_BACKENDS:"))
    assert set(line.split("=", 1)[1].split(";")) == set(registry.available_backends())


def test_every_environment_variable_pxq_reads_is_in_the_readme():
    pattern = re.compile(r"(?:environ(?:\.get)?\(?\[?\"|getenv\(\"|\$\{?)(PXQ_[A-Z_]+)")
    read = set()
    for folder in ("drivers", "miniapps", "comm", "tiling", "kernels"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".cpp", ".hpp", ".sh"):
                read |= set(pattern.findall(path.read_text(errors="replace")))
    read |= set(pattern.findall((ROOT / "pxq").read_text()))
    readme = (ROOT / "README.md").read_text()
    assert "PXQ_RESULTS_DIR" in read and "PXQ_MSGPROF_DRIVER" in read  # the scan finds what it should
    assert sorted(v for v in read if f"`{v}`" not in readme) == []
