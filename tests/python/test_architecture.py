"""The shape of the house, checked.

The registries match the folders, no function in miniapps/ or drivers/ is longer than 80 lines,
and the sources are formatted and linted.

The driver's floor plan, checked (docs/ARCHITECTURE.md, "The driver's floors"): no import cycle,
every import points down or along a floor, at most six floors, no function-local import of pxq,
plugins found by their package and never imported by name, no module over 400 lines without the
reason in its docstring, and the core type-checked."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from pxq.core import plugins, registry
from pxq.launch import launchers

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


MAX_BRANCHY = 8  # functions of miniapps/ and drivers/ over complexity 20 (lizard): 25 when counted first
MAX_HANDLE_CCN = 15  # a command's handle checks, calls and returns: its branches live below it
# Command modules allowed over MAX_COMMAND_LINES (none since 2026-11-28: report, sweep, run and
# cluster were, and their work moved below them).
FAT_COMMANDS: dict[str, int] = {}


def test_few_functions_are_very_branchy():
    out = subprocess.run(
        [_tool("lizard"), "-C", "20", "-w", "miniapps", "drivers"], cwd=ROOT, capture_output=True, text=True
    )
    branchy = [
        line for line in out.stdout.splitlines() if (m := re.search(r"(\d+) CCN", line)) and int(m.group(1)) > 20
    ]
    assert len(branchy) <= MAX_BRANCHY, f"{len(branchy)} functions over complexity 20:\n" + "\n".join(branchy)


def test_commands_are_thin():
    out = subprocess.run(
        [_tool("lizard"), "-C", str(MAX_HANDLE_CCN), "-w", "drivers/pxq/pxq/commands"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    branchy = [line for line in out.stdout.splitlines() if re.search(r": warning: handle has .* (\d+) CCN", line)]
    branchy = [line for line in branchy if int(re.search(r"(\d+) CCN", line).group(1)) > MAX_HANDLE_CCN]
    assert not branchy, "handle over complexity 15:\n" + "\n".join(branchy)
    for path in sorted((PACKAGE / "commands").glob("*.py")):
        lines = len(path.read_text().splitlines())
        assert lines <= FAT_COMMANDS.get(path.stem, MAX_COMMAND_LINES), f"{path.name}: {lines} lines"


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


def _tidy(tmp_path: Path, source: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    """tests/lint/clang_tidy.py, with .clang-tidy's checks, on one source file of a scratch build
    (CACHE: where it remembers clean files; None: it checks afresh)."""
    src = tmp_path / "probe.cpp"
    src.write_text(source)
    build = tmp_path / "build"
    build.mkdir(exist_ok=True)
    entry = {"directory": str(tmp_path), "file": str(src), "command": f"c++ -std=c++17 -fopenmp -o probe.o -c {src}"}
    (build / "compile_commands.json").write_text(json.dumps([entry]))
    shutil.copy(ROOT / ".clang-tidy", tmp_path / ".clang-tidy")
    script = ROOT / "tests" / "lint" / "clang_tidy.py"
    env = {k: v for k, v in os.environ.items() if k != "PXQ_CLANG_TIDY_CACHE"}
    env.update({"PXQ_CLANG_TIDY_CACHE": "off"} if cache is None else {"XDG_CACHE_HOME": str(cache)})
    return subprocess.run([sys.executable, str(script), str(build), str(src)], capture_output=True, text=True, env=env)


def test_clang_tidy_fails_on_a_finding_and_passes_clean_code(tmp_path):
    """The CTest lint.clang-tidy (slow) runs this script over every source; here its exit codes
    and the checks it applies, on two small files (omp.h included, as pxq's sources do)."""
    head = "#include <omp.h>\n#include <vector>\n"
    bad = _tidy(
        tmp_path,
        head + "std::vector<int> f(int n) {\n  std::vector<int> v;\n"
        "  for (int i = 0; i < n; ++i) v.push_back(i * omp_get_max_threads());\n  return v;\n}\n",
    )
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "performance-inefficient-vector-operation" in bad.stdout and "1 with findings" in bad.stdout
    good_dir = tmp_path / "clean"
    good_dir.mkdir()
    good = _tidy(good_dir, head + "int g() { return omp_get_max_threads(); }\n")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "0 with findings" in good.stdout
    script = ROOT / "tests" / "lint" / "clang_tidy.py"
    unbuilt = subprocess.run([sys.executable, str(script), str(tmp_path / "none")], capture_output=True, text=True)
    assert unbuilt.returncode == 2 and "compile_commands.json is missing" in unbuilt.stderr  # nothing checked


def test_clang_tidy_remembers_a_clean_file_until_its_expanded_text_changes(tmp_path):
    """A clean file is taken from the cache the second time; a macro's definition changed (used
    nowhere: only the preprocessor's -dD text sees it) is checked again and its finding reported;
    a finding is never remembered."""
    cache = tmp_path / "cache"
    clean = "#include <omp.h>\nint g() { return omp_get_max_threads(); }\n"
    first, second = _tidy(tmp_path, clean, cache), _tidy(tmp_path, clean, cache)
    assert first.returncode == 0 and "unchanged since found clean" not in first.stdout, first.stdout + first.stderr
    assert second.returncode == 0 and "1 unchanged since found clean" in second.stdout, second.stdout
    macro = clean + "#define TWICE(x) x * 2\n"  # bugprone-macro-parentheses
    for _ in range(2):
        found = _tidy(tmp_path, macro, cache)
        assert found.returncode == 1 and "bugprone-macro-parentheses" in found.stdout, found.stdout + found.stderr
        assert "unchanged since found clean" not in found.stdout


def test_clang_tidy_without_a_writable_cache_checks_every_file_and_says_so(tmp_path):
    """A file where the cache's folder would be: no traceback, the exit code is the check's
    own (0 clean, 1 a finding), and the summary says nothing was remembered."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file")
    clean = _tidy(tmp_path, "int g() { return 1; }\n", blocked)
    assert clean.returncode == 0 and "Traceback" not in clean.stderr, clean.stdout + clean.stderr
    assert "nothing remembered" in clean.stdout and "0 with findings" in clean.stdout
    again = _tidy(tmp_path, "int g() { return 1; }\n", blocked)  # nothing was taken from a cache
    assert again.returncode == 0 and "unchanged since found clean" not in again.stdout
    found = _tidy(tmp_path, "#define TWICE(x) x * 2\nint g() { return TWICE(1); }\n", blocked)
    assert found.returncode == 1 and "bugprone-macro-parentheses" in found.stdout, found.stdout + found.stderr


def test_python_is_ruff_clean():
    for args in (["check", "drivers", "tests", "packaging"], ["format", "--check", "drivers", "tests", "packaging"]):
        out = subprocess.run([_tool("ruff"), *args], cwd=ROOT, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_the_ctest_backends_are_the_registry_s():
    from pxq.core.paths import build_dir

    cache = build_dir() / "CMakeCache.txt"
    line = next(x for x in cache.read_text().splitlines() if x.startswith("PXQ_BACKENDS:"))
    assert set(line.split("=", 1)[1].split(";")) == set(registry.available_backends())


def test_every_environment_variable_pxq_reads_is_documented():
    pattern = re.compile(r"(?:environ(?:\.get)?\(?\[?\"|getenv\(\"|\$\{?)(PXQ_[A-Z_]+)")
    read = set()
    for folder in ("drivers", "miniapps", "comm", "tiling", "kernels", "packaging"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".cpp", ".hpp", ".sh"):
                read |= set(pattern.findall(path.read_text(errors="replace")))
    read |= set(pattern.findall((ROOT / "pxq").read_text()))
    table = (ROOT / "docs" / "INSTALL.md").read_text()  # the environment variables' table
    assert "PXQ_RESULTS_DIR" in read and "PXQ_MSGPROF_DRIVER" in read  # the scan finds what it should
    assert sorted(v for v in read if f"`{v}`" not in table) == []


# ---- the driver's floor plan (docs/ARCHITECTURE.md, "The driver's floors") ----

PACKAGE = Path(__file__).resolve().parents[2] / "drivers" / "pxq" / "pxq"
# Bottom to top. A module may import modules of its own floor or of floors below it.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("", "core"),  # "" is the pxq package itself
    ("machine", "figures", "cluster"),
    ("launch",),
    ("analysis",),
    ("experiments", "probes", "teaching", "reports"),
    ("commands", "studies", "labs", "cli", "__main__"),
)
PLUGIN_PACKAGES = ("commands", "studies", "labs")
MAX_FLOORS = 6
MAX_MODULE_LINES = 400
MAX_COMMAND_LINES = 150  # a command module parses, calls and prints; the work lives below it
SIZE_REASON = "Over 400 lines:"  # the phrase a longer module's docstring gives its reason with


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text()) for name, path in MODULES.items()}


def _targets(module: str, node: ast.AST) -> list[str]:
    """The pxq modules an import statement loads (a name imported from a package counts as its
    submodule when there is one)."""
    is_package = MODULES[module].name == "__init__.py"
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.split(".")[0] == "pxq"]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            base = ".".join(parts + ([node.module] if node.module else []))
        if base.split(".")[0] != "pxq":
            return []
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    else:
        return []
    out = []
    for name in names:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in MODULES and name != module:
            out.append(name)
    return out


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            edges[module].update(_targets(module, node))
    return edges


GRAPH = _graph()


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _floor(module: str) -> int:
    room = _room(module)
    for i, rooms in enumerate(FLOORS):
        if room in rooms:
            return i
    raise AssertionError(f"{module}: its package '{room}' is on no floor: add it to FLOORS and docs/ARCHITECTURE.md")


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(set(edges) | {t for ts in edges.values() for t in ts}):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_driver_has_no_import_cycle():
    assert _cycles(GRAPH) == []


def test_every_import_points_down_or_along_a_floor():
    assert len(FLOORS) <= MAX_FLOORS
    upward = [
        f"{a} (floor {_floor(a) + 1}) imports {b} (floor {_floor(b) + 1})"
        for a, targets in GRAPH.items()
        for b in targets
        if _floor(b) > _floor(a)
    ]
    assert upward == []


def test_the_rooms_of_one_floor_do_not_lean_on_each_other_both_ways():
    rooms: dict[str, set[str]] = defaultdict(set)
    for a, targets in GRAPH.items():
        for b in targets:
            if _floor(a) == _floor(b) and _room(a) != _room(b):
                rooms[_room(a)].add(_room(b))
    assert _cycles(rooms) == []


def test_the_core_imports_nothing_above_it():
    above = [(a, b) for a, targets in GRAPH.items() if _floor(a) == 0 for b in targets if _floor(b) > 0]
    assert above == []


def test_plugins_are_found_by_their_package_never_imported_by_name():
    # Commands never import each other, nor studies or labs: pxq.core.plugins finds them.
    named = [
        (a, b)
        for a, targets in GRAPH.items()
        for b in targets
        if _room(b) in PLUGIN_PACKAGES and b != f"pxq.{_room(b)}"
    ]
    assert named == []


def test_no_function_imports_pxq_to_dodge_a_cycle():
    local = []
    for module, tree in TREES.items():
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local += [f"{module}:{n.lineno}" for n in ast.walk(fn) if _targets(module, n)]
    assert local == []


def test_every_plugin_module_declares_one_plugin_of_its_kind():
    for package, found in (("commands", plugins.commands()), ("studies", plugins.studies()), ("labs", plugins.labs())):
        modules = [m.name for m in pkgutil.iter_modules([str(PACKAGE / package)])]
        assert len(found) == len(modules), package
        assert len({p.name if hasattr(p, "name") else p.number for p in found}) == len(found), package
    assert [c.name for c in plugins.commands()][:3] == ["run", "sweep", "report"]


def test_a_module_without_a_plugin_is_refused(tmp_path, monkeypatch):
    pkg = tmp_path / "pxqfake_plugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "stray.py").write_text("NAME = 'stray'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="PLUGIN must be a pxq.core.plugins.Command"):
        plugins._discover("pxqfake_plugins", plugins.Command)


def test_probes_are_plugins_and_the_probe_command_lists_none():
    """Every sub-command of `pxq probe` comes from a Probe plugin of pxq.probes, each name once; the
    command names no probe (a new probe is its module alone), and a module of pxq.probes that
    declares a PLUGIN of another kind is refused."""
    import argparse

    names = [n for p in plugins.probes() for n in p.names]
    assert len(names) == len(set(names)) and {"allreduce", "pingpong", "osu", "stride", "reference"} <= set(names)
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="op")
    for p in plugins.probes():
        p.add(sub)
    assert list(sub.choices) == names  # each plugin adds exactly the sub-commands it declares
    command = (PACKAGE / "commands" / "probe.py").read_text()
    assert not [n for n in names if f'"{n}"' in command]
    assert len(command.splitlines()) <= MAX_COMMAND_LINES


def test_a_plugin_of_another_kind_is_refused_where_plugins_are_optional(tmp_path, monkeypatch):
    name = f"pxqfake_probes_{tmp_path.name.replace('-', '_')}"  # a new package each time it runs
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("NAME = 'no plugin: skipped'\n")
    (pkg / "wrong.py").write_text("PLUGIN = 'a string'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="wrong: PLUGIN must be a pxq.core.plugins.Probe"):
        plugins._discover(name, plugins.Probe, every=False)
    (pkg / "wrong.py").unlink()
    assert plugins._discover(name, plugins.Probe, every=False) == []


def _launcher_comparisons(tree: ast.AST) -> list[int]:
    """Lines that compare something named launcher with a launcher's name ("slurm", ...)."""
    names = set(launchers.REGISTRY)
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Compare):
            continue
        sides = [n.left, *n.comparators]
        consts = set()
        for side in sides:
            for c in ast.walk(side):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    consts.add(c.value)
        if consts & names and any("launcher" in ast.unparse(side) for side in sides):
            out.append(n.lineno)
    return out


def test_the_comparison_finder_finds_launcher_names():
    assert _launcher_comparisons(ast.parse("x = plan.launcher == 'slurm'\n")) == [1]
    assert _launcher_comparisons(ast.parse("x = r.get('launcher') in ('local', 'virtual')\n")) == [1]
    assert _launcher_comparisons(ast.parse("x = mode == 'slurm'\n")) == []


def test_launcher_names_are_compared_only_in_launch():
    """Outside pxq.launch a launcher is asked what it does (pxq.launch.launchers), never which it is."""
    stray = [f"{m}:{line}" for m, tree in TREES.items() if _room(m) != "launch" for line in _launcher_comparisons(tree)]
    assert stray == []


DRAWING_ROOMS = ("figures", "studies")  # where a figure is drawn: figures/, and a study's own plot hook


def _draws(tree: ast.AST) -> list[int]:
    """Lines that import matplotlib or take pyplot from pxq.figures."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(a.name.split(".")[0] == "matplotlib" for a in n.names):
            out.append(n.lineno)
        elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "matplotlib":
            out.append(n.lineno)
        elif isinstance(n, ast.Attribute) and n.attr == "pyplot" and isinstance(n.value, ast.Name):
            out.append(n.lineno)  # figures.pyplot(), however pxq.figures was imported
    return out


SESSION_ONLY = ("stage", "run_folder_base", "plan_launch")  # pxq.launch.plan's, used by launch.session
SESSION_EXCEPTIONS = {
    "pxq.commands.run": {"stage"},  # the dry run writes the plan's files into a folder it keeps, and runs nothing
    "pxq.experiments.runner": {"plan_launch"},  # build(): a run's plan and command line, the session's maker
}


def _session_bypasses() -> list[str]:
    out = []
    for module, tree in TREES.items():
        if module.startswith("pxq.launch."):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in SESSION_ONLY and name not in SESSION_EXCEPTIONS.get(module, set()):
                    out.append(f"{module}:{node.lineno} {name}()")
    return out


def test_every_launch_runs_in_the_launch_session():
    """One launch sequence (launch.session: the run's folder where its ranks see it, the plan made
    in it, the staged environment) for a run, a declaration and a lab's run alike."""
    assert _session_bypasses() == []


def test_the_drawing_finder_finds_drawing():
    assert _draws(ast.parse("def f():\n    from matplotlib.patches import Patch\n")) == [2]
    assert _draws(ast.parse("import matplotlib.pyplot as plt\n")) == [1]
    assert _draws(ast.parse("plt = figures.pyplot()\n")) == [1]
    assert _draws(ast.parse("from pxq.figures import speedup\nspeedup.plot(rows)\n")) == []


def test_figures_are_drawn_only_in_figures_and_the_studies_plot_hooks():
    stray = [
        f"{module}:{line}"
        for module, tree in TREES.items()
        if _room(module) not in DRAWING_ROOMS
        for line in _draws(tree)
    ]
    assert stray == [], "draw in pxq/figures/ (a module there takes the data and writes the figure)"


def test_each_package_s_docstring_names_its_modules():
    """A newcomer's map: each package, and each sub-package (analysis is cut by job), says what
    each of its modules and sub-packages is for (the plugin packages list nothing: their modules
    are found, one plugin each)."""
    unnamed = []
    for init in sorted(PACKAGE.glob("*/**/__init__.py")):
        room = ".".join(init.parent.relative_to(PACKAGE).parts)
        if room in PLUGIN_PACKAGES:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        inside = [p.stem for p in init.parent.glob("*.py") if p.stem != "__init__"]
        inside += [d.name for d in init.parent.iterdir() if (d / "__init__.py").is_file()]
        unnamed += [f"{room}.{name}" for name in sorted(inside) if f"`{name}`" not in doc]
    assert unnamed == [], "name each module in its package's docstring, in backquotes"


NAMED_FOR_THE_USER = (*PLUGIN_PACKAGES, "probes", "figures")  # docs/ARCHITECTURE.md, "Module names"


def _repeats(paths: list[Path]) -> dict[str, list[str]]:
    """Module basenames met more than once, each with the modules that are neither a plugin nor a
    figure (named after what the user types or sees): more than one such module is a repeat no
    user-facing name explains."""
    by: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        if path.stem != "__init__":
            by[path.stem].append(".".join(path.relative_to(PACKAGE).with_suffix("").parts))
    return {
        stem: jobs
        for stem, mods in by.items()
        if len(mods) > 1 and len(jobs := [m for m in mods if m.split(".")[0] not in NAMED_FOR_THE_USER]) > 1
    }


def test_the_repeat_finder_finds_two_job_modules_of_one_name():
    found = _repeats([PACKAGE / "analysis" / "x" / "report.py", PACKAGE / "experiments" / "report.py"])
    assert found == {"report": ["analysis.x.report", "experiments.report"]}
    assert _repeats([PACKAGE / "analysis" / "report.py", PACKAGE / "commands" / "report.py"]) == {}


def test_a_module_name_repeats_only_where_a_plugin_or_figure_is_named_after_its_job():
    """`pxq report` is commands/report.py and its job analysis/exports/report.py: one name for one
    thing the user knows. Two job modules of one name would be two answers to "where is X?"."""
    assert _repeats(sorted(PACKAGE.rglob("*.py"))) == {}


def test_no_module_over_400_lines_without_its_reason():
    long = []
    for module, path in MODULES.items():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES and SIZE_REASON not in (ast.get_docstring(TREES[module]) or ""):
            long.append(f"{module}: {lines} lines")
    assert long == []


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (./pxq installs it)")
def test_the_whole_driver_type_checks():
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--follow-imports=silent", str(PACKAGE)],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
    )
    assert out.returncode == 0, out.stdout + out.stderr
