"""The driver installed with pip (drivers/pxq/pyproject.toml) reads records without a build, the
registry it falls back on equals the binaries' own, and ./pxq starts the record-only commands
without building."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pxq
from pxq.core import plugins, registry
from pxq.core.errors import InputError
from pxq.core.paths import binary

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_msgdist import ring_profile  # noqa: E402


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """`pip install drivers/pxq` into a folder of its own (no dependencies: this Python has
    them; no build isolation: no network needed), from a copy of the source so that pip's
    staging folders stay out of the checkout."""
    source = tmp_path_factory.mktemp("src") / "pxq"
    shutil.copytree(ROOT / "drivers" / "pxq", source, ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path_factory.mktemp("site")
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target)]
        + [str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return target


def installed_pxq(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PXQ_")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, str(site / "bin" / "pxq"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_installed_driver_carries_its_data_and_no_checkout(installed: Path):
    pkg = installed / "pxq"
    assert sorted(p.name for p in (pkg / "data" / "schemas").glob("*.json")) == sorted(
        p.name for p in (ROOT / "schemas").glob("*.json")
    )
    assert (pkg / "data" / "registry.json").is_file() and (pkg / "data" / "published.json").is_file()
    assert os.access(pkg / "vnode_agent.sh", os.R_OK) and os.access(pkg / "bind_rank.sh", os.R_OK)
    assert not (pkg / "data" / "schemas").is_symlink()  # copies, not links into a checkout
    assert not list(installed.glob("*.so")) and not list(installed.glob("*.a")), "build outputs got into the package"


def test_the_installed_driver_reads_records_without_a_build(installed: Path, tmp_path: Path):
    record = json.loads((DATA / "run-record.json").read_text())
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(record) + "\n")
    profile = tmp_path / "profile.jsonl"
    profile.write_text(json.dumps(ring_profile(4)) + "\n")

    out = installed_pxq(installed, tmp_path, "report", str(runs))
    assert out.returncode == 0, out.stderr
    assert record["app"] in out.stdout
    out = installed_pxq(installed, tmp_path, "validate", str(runs))
    assert out.returncode == 0 and "0 invalid" in out.stdout, out.stdout + out.stderr
    out = installed_pxq(installed, tmp_path, "compare", str(runs), str(runs), "--format", "json")
    assert out.returncode == 0, out.stderr
    out = installed_pxq(
        installed, tmp_path, "msgdist", str(profile), "--model", "2x1x2", "--plot", str(tmp_path / "m.png")
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "m.png").stat().st_size > 0
    assert not (tmp_path / "build").exists()


def test_the_installed_driver_says_where_binaries_come_from(installed: Path, tmp_path: Path):
    out = installed_pxq(installed, tmp_path, "run", "ring")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "PXQ_BUILD_DIR" in out.stderr and "./pxq build" not in out.stderr
    assert not (tmp_path / "results").exists()


def test_the_registry_snapshot_is_the_binaries_own():
    registry.registry.cache_clear()
    live = registry.snapshot(registry.registry())
    assert json.loads(registry.SNAPSHOT.read_text()) == live, (
        "drivers/pxq/pxq/data/registry.json differs from pxq-envinfo registry: rewrite it with "
        "PYTHONPATH=drivers/pxq .venv/bin/python -m pxq.core.registry"
    )


def test_a_build_older_than_the_driver_is_named_with_the_fix(monkeypatch):
    """A pxq-envinfo whose registry lacks what the driver's copy has (a build made before the
    access kinds, say) is bad input naming the rebuild, never a KeyError later."""
    live = registry.registry()
    old = {k: v for k, v in live.items() if k != "access_kinds"}
    monkeypatch.setattr(registry, "_envinfo", lambda *a: (0, old))
    registry.registry.cache_clear()
    try:
        with pytest.raises(
            InputError, match=r"older than the driver \(its registry has no access_kinds\).*./pxq build"
        ):
            registry.registry()
    finally:
        monkeypatch.undo()
        registry.registry.cache_clear()


def test_without_a_build_the_registry_has_no_backend_available(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PXQ_BUILD_DIR", str(tmp_path / "none"))
    registry.registry.cache_clear()
    try:
        listed = re.findall(r"^PXQ_APP\((\w+),", (ROOT / "miniapps" / "apps.def").read_text(), re.M)
        assert registry.apps() == tuple(listed) and listed[:4] == ["ring", "cg", "mg", "ft"]
        assert registry.available_backends() == ()
        assert "openmp" in registry.backends()
    finally:
        registry.registry.cache_clear()


def test_record_commands_of_the_script_are_the_modules_that_need_no_build():
    script = (ROOT / "pxq").read_text()
    listed = set(re.search(r'^RECORD_COMMANDS=" ([a-z ]+) "$', script, re.M).group(1).split())
    assert listed == {c.name for c in plugins.commands() if not c.needs_build}


def test_the_script_starts_a_record_command_without_building(tmp_path: Path):
    """./pxq report with a build folder that does not exist: it reads the records and never
    configures or builds (the folder stays absent)."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text((DATA / "run-record.json").read_text().replace("\n", " ") + "\n")
    env = dict(os.environ, PXQ_BUILD_DIR=str(tmp_path / "nobuild"), PXQ_NO_INSTALL="1")
    out = subprocess.run([str(ROOT / "pxq"), "report", str(runs)], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "nobuild").exists()
    assert "configuring" not in out.stderr


def test_versions_agree():
    cmake = re.search(r"project\(pxq VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    import pxq

    assert pxq.__version__ == cmake
    assert binary("envinfo").exists()


def test_every_ctest_test_has_one_kind_label_and_mpi_tests_their_ranks():
    build = binary("envinfo").parents[1]
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    tests = json.loads(out.stdout)["tests"]
    assert len(tests) > 100
    kinds = {"unit", "mpi", "driver", "lint"}
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = set(props.get("LABELS", []))
        assert len(labels & kinds) == 1 and labels <= kinds | {"slow"}, (t["name"], labels)
    # PROCESSORS is not in ctest's JSON: read it from the generated test file.
    text = (build / "tests" / "CTestTestfile.cmake").read_text()
    procs = dict(re.findall(r"set_tests_properties\((\S+) PROPERTIES .*?PROCESSORS \"(\d+)\"", text))
    checked = [t["name"] for t in tests if t["name"].startswith("mpi.") and re.search(r"\.np\d+$", t["name"])]
    assert len(checked) > 50
    for name in checked:
        assert procs.get(name) == name.rsplit(".np", 1)[1], name


def test_the_spack_recipe_parses_and_its_options_are_cmakes(monkeypatch):
    """Spack's mirrors are out of reach here: the recipe runs against a stand-in for
    spack.package that records its directives, and every CMake option it sets must exist."""
    import types

    recorded: dict[str, list] = {"version": [], "variant": [], "depends_on": []}
    stub = types.ModuleType("spack.package")

    class CMakePackage:
        run_tests = False

        def __init__(self, variants: dict[str, bool]):
            self.variants = variants

        def define(self, name, value):
            return f"-D{name}:BOOL={'ON' if value else 'OFF'}"

        def define_from_variant(self, name, variant):
            assert variant in {v[0] for v in recorded["variant"]}, f"no variant {variant}"
            return self.define(name, self.variants[variant])

    def directive(kind):
        return lambda *a, **k: recorded.setdefault(kind, []).append((*a, k))

    stub.CMakePackage = CMakePackage
    for kind in ("version", "variant", "depends_on", "maintainers", "generator"):
        setattr(stub, kind, directive(kind))
    stub.__all__ = [n for n in dir(stub) if not n.startswith("_")]
    monkeypatch.setitem(sys.modules, "spack", types.ModuleType("spack"))
    monkeypatch.setitem(sys.modules, "spack.package", stub)
    recipe = ROOT / "packaging" / "spack" / "packages" / "pxq" / "package.py"
    namespace: dict = {}
    exec(compile(recipe.read_text(), str(recipe), "exec"), namespace)

    pkg = namespace["Pxq"]({v[0]: v[-1]["default"] for v in recorded["variant"]})
    args = pkg.cmake_args()
    options = set(re.findall(r"^option\((PXQ_[A-Z0-9_]+)", (ROOT / "CMakeLists.txt").read_text(), re.M))
    assert {a.split(":")[0][2:] for a in args} <= options
    assert "-DPXQ_ENABLE_KOKKOS:BOOL=ON" in args and "-DPXQ_ENABLE_TESTS:BOOL=OFF" in args
    deps = {d[0].split("@")[0].split(" ")[0] for d in recorded["depends_on"]}
    assert {"mpi", "hwloc", "nlohmann-json", "cli11", "kokkos", "python"} <= deps
    # The driver's own requirements are the recipe's run dependencies.
    project = (ROOT / "drivers" / "pxq" / "pyproject.toml").read_text()
    needed = set(re.findall(r'^  "([a-z]+)[><=]', project, re.M))
    assert {f"py-{n}" for n in needed} <= deps


def test_a_newcomers_first_commands_answer_without_running_anything(tmp_path: Path):
    """./pxq --version names the driver's version and the commit; --help of test, build and
    setup prints their usage and starts nothing (no set-up, no test); a wrong option is exit 2."""
    script = str(ROOT / "pxq")
    build = tmp_path / "build"  # a set-up would configure it
    env = dict(os.environ, PXQ_NO_INSTALL="1", PXQ_BUILD_DIR=str(build))
    out = subprocess.run([script, "--version"], capture_output=True, text=True, env=env, timeout=60)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith(f"pxq {pxq.__version__} (commit {commit.stdout.strip()}")
    for argv, usage in (["test", "--help"], "usage: ./pxq test"), (["build", "-h"], "usage: ./pxq setup|build"):
        out = subprocess.run([script, *argv], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 0 and out.stdout.startswith(usage), out.stderr
        assert "pxq:" not in out.stderr and not build.exists()  # no set-up step, no test started
    for argv, message in (
        (["test", "--bogus"], "unknown option '--bogus'"),
        (["test", "-L"], "-L needs a value"),
        (["test", "--all", "--slow"], "give one of --all, --slow"),
        (["setup", "now"], "takes --ecosystem or nothing"),
    ):
        out = subprocess.run([script, *argv], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 2 and message in out.stderr, (argv, out.stderr)
