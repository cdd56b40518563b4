"""The tools the field uses, run for real against pxq: ReFrame, Extra-P, Thicket.

They live in their own environment (.deps/ecosystem, made by ./pxq setup --ecosystem or
./pxq test --slow). These tests fail, naming that command, when it is missing: they never
skip their point.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("PXQ_BUILD_DIR") or ROOT / "build")
ECO = Path(os.environ.get("PXQ_ECOSYSTEM") or ROOT / ".deps" / "ecosystem")


def eco_tool(name: str) -> Path:
    path = ECO / "bin" / name
    if not path.exists():
        pytest.fail(f"{path} is missing: ./pxq setup --ecosystem installs ReFrame, Extra-P and Thicket")
    return path


def eco_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PXQ_BUILD_DIR=str(BUILD), TMPDIR=str(tmp), **extra)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def pxq(argv: list[str], tmp: Path) -> subprocess.CompletedProcess:
    """pxq's own command line, from the driver's environment (the tests' interpreter)."""
    env = eco_env(tmp, PYTHONPATH=str(ROOT / "drivers" / "pxq"))
    return run([sys.executable, "-m", "pxq", *argv], cwd=tmp, env=env)
