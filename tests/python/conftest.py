"""Driver tests: the pxq package is imported from drivers/pxq; no MPI is needed here."""

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "drivers" / "pxq"))

import json  # noqa: E402

from pxq.core import registry  # noqa: E402
from pxq.core.paths import binary  # noqa: E402


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """A build folder whose miniapps exist, so the CLI gets past its checks. Its pxq-envinfo
    is the real one (the registries and the resolution of sizes and variants)."""
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy2(binary("envinfo"), bin_dir / "pxq-envinfo")
    registry.registry.cache_clear()
    for app in registry.apps():
        (bin_dir / f"pxq-{app}").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / f"pxq-{app}").chmod(0o755)
    (tmp_path / "build" / "lib").mkdir()
    (tmp_path / "build" / "lib" / "libpxq-msgprof.so").write_bytes(b"")  # named in dry runs that profile or trace
    monkeypatch.setenv("PXQ_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("PXQ_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path


RUN_RECORD = json.loads((Path(__file__).parent / "data" / "run-record.json").read_text())


def complete(rec: dict) -> dict:
    """A test's run record made whole: the fields the run schema asks of a finished run (kind,
    version, context, verification, placement summary) taken from a real run where the test
    gave none, so that it passes pxq.core.records' door."""
    out = {"kind": "run", "schema": 2, **rec}
    for field in ("context", "placement_summary", "size", "metrics"):
        out.setdefault(field, RUN_RECORD[field])
    if out.get("status") in ("ok", "failed"):
        out.setdefault("verification", dict(RUN_RECORD["verification"], passed=out["status"] == "ok"))
    ctx = out["context"]
    if isinstance(ctx, dict):
        out["context"] = {**RUN_RECORD["context"], **ctx}
    return out


class SavedFigures(list):
    """The figures pxq saved during a test, in order, kept for inspection."""

    @staticmethod
    def renderer(fig):
        """A renderer of the figure as it was saved (for extents: legends, bars, labels)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return canvas.get_renderer()


@pytest.fixture
def saved_figures(monkeypatch):
    """Every figure `pxq.figures.save` writes during the test, drawn, kept in a SavedFigures."""
    from pxq import figures

    kept = SavedFigures()
    save = figures.save

    def keep(fig, path, dpi=120):
        fig.canvas.draw()
        kept.append(fig)
        return save(fig, path, dpi)

    monkeypatch.setattr(figures, "save", keep)
    return kept
