"""Where pxq's pieces live: the checkout, the build, the results.

The driver runs from one of three places: a checkout (drivers/pxq, the binaries in build/),
a CMake install tree (PREFIX/share/pxq/driver, the binaries in PREFIX/bin, found through the
data/installed.json that `cmake --install` writes), or a pip install (no binaries: it reads
records; PXQ_BUILD_DIR points it at a build or install prefix to run them).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from pxq.core import records
from pxq.core.errors import InputError

PACKAGE = Path(__file__).resolve().parents[1]  # the pxq package (this module is pxq/core/paths.py)
ROOT = PACKAGE.parents[2]
IN_CHECKOUT = (ROOT / "CMakeLists.txt").is_file() and (ROOT / "drivers" / "pxq" / "pxq") == PACKAGE
INSTALLED = PACKAGE / "data" / "installed.json"


def installed_facts() -> dict:
    """What `cmake --install` wrote about this tree (prefix, version, commit); {} elsewhere."""
    try:
        facts = json.loads(INSTALLED.read_text())
    except (OSError, ValueError):
        return {}
    return facts if isinstance(facts, dict) else {}


@functools.cache
def git_commit() -> str:
    """The checkout's commit, or the one an install tree was built from: read once per command,
    so the runs of one sweep carry one commit even when the checkout changes under it (a commit
    made mid-sweep split its configurations in `pxq report`, which keeps commits apart)."""
    if not IN_CHECKOUT:
        return str(installed_facts().get("commit", "unknown"))
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _install_prefix() -> Path | None:
    """The prefix of a CMake install tree this driver belongs to, else None."""
    prefix = installed_facts().get("prefix")
    return (INSTALLED.parent / prefix).resolve() if isinstance(prefix, str) else None


def build_dir() -> Path:
    """PXQ_BUILD_DIR, else the checkout's build/, else the install prefix (its bin/ holds the
    binaries as a build's does), else build/ under the current folder (which has none)."""
    given = os.environ.get("PXQ_BUILD_DIR")
    if given:
        return Path(given)
    if IN_CHECKOUT:
        return ROOT / "build"
    return _install_prefix() or Path.cwd() / "build"


def build_hint() -> str:
    """How to get the binaries, said the way this driver was installed."""
    if IN_CHECKOUT:
        return "run ./pxq build first"
    return "point PXQ_BUILD_DIR at a pxq build folder or install prefix (its bin/ holds pxq-envinfo and the apps)"


def binary(app: str) -> Path:
    return build_dir() / "bin" / f"pxq-{app}"


def results_dir() -> Path:
    """PXQ_RESULTS_DIR, else the checkout's results/, else results/ under the current folder."""
    given = os.environ.get("PXQ_RESULTS_DIR")
    if given:
        return Path(given)
    return ROOT / "results" if IN_CHECKOUT else Path.cwd() / "results"


AGENT = PACKAGE / "vnode_agent.sh"
BIND_WRAPPER = PACKAGE / "bind_rank.sh"  # MPICH runs: binds a rank to its planned cores


def results_path(given: Path | None, default_name: str) -> Path:
    """The one rule for a results file: a user's --results as given (its folder must exist),
    else results/<default_name> (the folder made); checked writable before anything runs."""
    if given is None:
        given = results_dir() / default_name
        try:
            given.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(
                f"cannot create the results folder {given.parent} ({e.strerror}): set PXQ_RESULTS_DIR or use --results"
            ) from None
    records.check_writable(given)
    return given


def expand(items: list[str], patterns: tuple[str, ...] = ("*.jsonl",)) -> list[Path]:
    """Files as given, folders as their files matching `patterns`, anything else as a glob;
    each item must match something (InputError naming it)."""
    import glob

    out: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted({f for pattern in patterns for f in path.glob(pattern) if f.is_file()})
            if not found:
                raise InputError(
                    f"{item} is a directory without results files ({', '.join(patterns)}): give a results file, "
                    "or a folder that holds some"
                )
        elif path.exists():
            found = [path]
        else:
            found = sorted(Path(p) for p in glob.glob(item) if Path(p).is_file())
            if not found:
                raise InputError(f"{item}: no such file, folder or files matching it")
        out += [p for p in found if p not in out]
    return out


def figure_path(given: Path | None, results: Path) -> Path:
    """A figure: --plot as given, else next to its results file (same name, .png)."""
    return given or results.with_suffix(".png")


def check_plot_path(path: Path | None) -> None:
    """A figure path must be writable before anything runs."""
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"--plot {path} is a directory: give a file such as {path}/figure.png")
    if path.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InputError(f"--plot {path}: give a .png, .pdf or .svg file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(f"--plot {path}: folder '{parent}' does not exist or is not writable: pick another path")


def python_with(module: str) -> str | None:
    """A Python that can import `module` (an optional package of the tools the field uses): this
    one, or that of .deps/ecosystem (./pxq setup --ecosystem); None if neither."""
    if importlib.util.find_spec(module) is not None:
        return sys.executable
    eco = ROOT / ".deps" / "ecosystem" / "bin" / "python"
    if (
        eco.exists()
        and subprocess.run([str(eco), "-c", f"import {module}"], capture_output=True, timeout=120).returncode == 0
    ):
        return str(eco)
    return None
