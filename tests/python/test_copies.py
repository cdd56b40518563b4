"""No copied code: no run of six substantive lines stands twice in pxq's sources.

A copy is the same lines to the letter once each line's spacing is folded: what a paste leaves
behind. Lines that say nothing of their own are passed over, so that a run is never made of them
alone: blank and punctuation-only lines, imports and includes (two modules may well need the same
five headers). Lines alike only in shape (two option declarations, two plugin tables) are not
copies: docs/ARCHITECTURE.md, "Copies and likeness", says why they stay.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = 6  # substantive lines that make a copy
FOLDERS = ("drivers", "miniapps", "kernels", "comm", "tiling", "tests", "cmake", "packaging", "labs", ".ci", "pxq")
SUFFIXES = {".py", ".cpp", ".hpp", ".h", ".c", ".cc", ".cmake", ".f90", ".sh"}
NAMES = {"CMakeLists.txt", "pxq", "run"}  # the build's files and the two scripts without a suffix
SKIP_DIRS = {"build", ".venv", "__pycache__", ".git"}
THIN = re.compile(r"^(?:[\s()\[\]{},;:]*|(?:import |from \S+ import |#include |#pragma once).*)$")

Place = tuple[str, int, int]  # file, first line, last line


def _is_source(path: Path) -> bool:
    return path.suffix in SUFFIXES or path.name in NAMES


def sources(root: Path) -> list[Path]:
    """pxq's own source files in FOLDERS: those git tracks or would (not ignored), or outside a git checkout
    every one there."""
    ls = ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *FOLDERS]
    git = subprocess.run(ls, capture_output=True, check=False)
    if git.returncode == 0 and git.stdout:
        found = [root / name for name in git.stdout.decode().split("\0") if name]
    else:
        tops = [root / folder for folder in FOLDERS]
        found = [t for t in tops if t.is_file()] + [p for t in tops if t.is_dir() for p in t.rglob("*")]
        found = [p for p in found if not SKIP_DIRS & set(p.relative_to(root).parts)]
    return sorted(p for p in found if p.is_file() and _is_source(p))


def substantive(text: str) -> list[tuple[int, str]]:
    """(line number, the line with its spacing folded) for every line that says something of its own."""
    folded = ((n, " ".join(line.split())) for n, line in enumerate(text.splitlines(), start=1))
    return [(n, line) for n, line in folded if not THIN.match(line)]


def copies(files: dict[str, str], run: int = RUN) -> list[list[Place]]:
    """Every run of `run` substantive lines found at more than one place, with its places."""
    where: dict[tuple[str, ...], list[Place]] = defaultdict(list)
    for name, text in files.items():
        lines = substantive(text)
        for k in range(len(lines) - run + 1):
            window = lines[k : k + run]
            where[tuple(line for _, line in window)].append((name, window[0][0], window[-1][0]))
    return [places for places in where.values() if len(places) > 1]


def merged(found: list[list[Place]]) -> list[list[Place]]:
    """Overlapping windows of the same files as one longer run each, for the message."""
    runs: list[list[Place]] = []
    for places in sorted(found):
        last = runs[-1] if runs else None
        if (
            last
            and [f for f, _, _ in last] == [f for f, _, _ in places]
            and all(a <= end + 1 for (_, _, end), (_, a, _) in zip(last, places))
        ):
            runs[-1] = [(f, a, max(end, b)) for (f, a, end), (_, _, b) in zip(last, places)]
        else:
            runs.append(list(places))
    return runs


def _read(paths: list[Path]) -> dict[str, str]:
    texts = {}
    for p in paths:
        try:
            texts[str(p.relative_to(ROOT))] = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text: nothing to copy
    return texts


def test_the_finder_finds_a_pasted_run_and_nothing_shorter_or_thinner():
    body = "\n".join(f"x{i} = compute({i}, rows[{i}])" for i in range(RUN))
    pasted = {"a.py": f"def f():\n{body}\n", "b.py": f"def g():\n    pass\n\n{body}\n"}
    found = copies(pasted)
    assert found and all({p[0] for p in places} == {"a.py", "b.py"} for places in found)
    assert ("a.py", 2, 1 + RUN) in found[0]
    # Spacing folds: a reindented paste is still a paste.
    assert copies({"a.py": body, "b.py": body.replace(" = ", "   =   ")})
    # One line short of a run, or the same lines only because both import the same modules.
    short = "\n".join(body.splitlines()[:-1])
    assert copies({"a.py": short, "b.py": short}) == []
    imports = "\n".join(["import os", "import re", "from pathlib import Path", "#include <vector>", "}", ")"] * 2)
    assert copies({"a.py": imports, "b.cpp": imports}) == []
    # The windows of one longer paste read as one run.
    longer = body + "\n" + "\n".join(f"y{i} = compute({i}, cols[{i}])" for i in range(3))
    assert merged(copies({"a.py": longer, "b.py": "pass\n" + longer})) == [[("a.py", 1, RUN + 3), ("b.py", 2, RUN + 4)]]
    # A run repeated inside one file counts too.
    assert copies({"a.py": f"{body}\nprint('between')\n{body}\n"})


def test_the_sources_are_pxqs_own_and_leave_nothing_out():
    paths = sources(ROOT)
    names = {str(p.relative_to(ROOT)) for p in paths}
    assert "drivers/pxq/pxq/cli.py" in names and "miniapps/ft/ft_problem.cpp" in names
    assert "tests/python/test_copies.py" in names and "tests/CMakeLists.txt" in names
    assert not any(part in SKIP_DIRS for name in names for part in Path(name).parts)
    assert len(paths) > 300


def test_outside_a_git_checkout_every_source_file_there_counts(tmp_path):
    kept = ["drivers/a.py", "miniapps/b.cpp", "pxq", "tests/CMakeLists.txt"]
    for name in (*kept, "drivers/notes.md", "drivers/.venv/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    names = sorted(str(p.relative_to(tmp_path)) for p in sources(tmp_path))
    assert names == kept


def test_no_run_of_six_substantive_lines_stands_twice():
    found = merged(copies(_read(sources(ROOT))))
    shown = ["  ".join(f"{f}:{a}-{b}" for f, a, b in places) for places in found[:10]]
    assert not found, "copied code (make it one function or one table):\n" + "\n".join(shown)
