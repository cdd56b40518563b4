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
