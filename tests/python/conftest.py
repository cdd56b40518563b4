"""Driver tests: the pxq package is imported from drivers/pxq; no MPI is needed here."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "drivers" / "pxq"))


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """A build folder whose miniapps exist, so the CLI gets past its checks."""
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    for app in ("ring", "cg", "mg", "ft"):
        (bin_dir / f"pxq-{app}").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / f"pxq-{app}").chmod(0o755)
    monkeypatch.setenv("PXQ_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("PXQ_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path
