"""Where pxq's pieces live: the checkout, the build, the results."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def build_dir() -> Path:
    return Path(os.environ.get("PXQ_BUILD_DIR", ROOT / "build"))


def binary(app: str) -> Path:
    return build_dir() / "bin" / f"pxq-{app}"


def results_dir() -> Path:
    return Path(os.environ.get("PXQ_RESULTS_DIR", ROOT / "results"))


AGENT = Path(__file__).resolve().parent / "vnode_agent.sh"


def results_path(given: Path | None, default_name: str) -> Path:
    """The one rule for a results file: a user's --results as given (its folder must exist),
    else results/<default_name> (the folder made); checked writable before anything runs."""
    from pxq import records
    from pxq.errors import InputError

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

    from pxq.errors import InputError

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
