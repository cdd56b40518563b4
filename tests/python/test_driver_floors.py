"""The driver's floor plan, checked (docs/ARCHITECTURE.md, "The driver's floors"): no import cycle,
every import points down or along a floor, at most six floors, no function-local import of pxq,
plugins found by their package and never imported by name, no module over 400 lines without the
reason in its docstring, and the core type-checked."""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from pxq.core import plugins

PACKAGE = Path(__file__).resolve().parents[2] / "drivers" / "pxq" / "pxq"
# Bottom to top. A module may import modules of its own floor or of floors below it.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("", "core"),  # "" is the pxq package itself
    ("machine", "figures"),
    ("launch",),
    ("analysis",),
    ("experiments", "probes", "teaching"),
    ("commands", "studies", "labs", "cli", "__main__"),
)
PLUGIN_PACKAGES = ("commands", "studies", "labs")
MAX_FLOORS = 6
MAX_MODULE_LINES = 400
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


def test_no_module_over_400_lines_without_its_reason():
    long = []
    for module, path in MODULES.items():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES and SIZE_REASON not in (ast.get_docstring(TREES[module]) or ""):
            long.append(f"{module}: {lines} lines")
    assert long == []


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (./pxq installs it)")
def test_the_core_type_checks():
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--follow-imports=silent", str(PACKAGE / "core")],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
    )
    assert out.returncode == 0, out.stdout + out.stderr
