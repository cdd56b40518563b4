"""Fault injection through the real driver and binaries (PXQ_BUILD_DIR, else build/).

Every driver started here carries PXQ_FAULT_TEST=<id> in its environment, which every
process it starts inherits; `leftovers(id)` finds any of them still alive afterwards.
"""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "drivers" / "pxq"))
BUILD = Path(os.environ.get("PXQ_BUILD_DIR", ROOT / "build"))
PYTHON = sys.executable

from pxq.core import procs  # noqa: E402


def build_mpirun() -> str:
    """The launcher of the build under test: Open MPI's mpirun or MPICH's mpiexec."""
    env = dict(os.environ, PXQ_BUILD_DIR=str(BUILD), PYTHONPATH=str(ROOT / "drivers" / "pxq"))
    env.pop("PXQ_MPIRUN", None)
    code = "from pxq.machine.mpi import find_mpirun; print(find_mpirun())"
    return subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


def fake_launcher(path: Path, body: str) -> Path:
    """A launcher script standing in for the build's: `--version` (asked to learn whose MPI it
    is) goes to the real one, anything else to BODY, where $REAL is the real launcher."""
    real = build_mpirun()
    path.write_text(f'#!/bin/sh\nREAL={real}\n[ "$1" = --version ] && exec "$REAL" --version\n{body}\n')
    path.chmod(0o755)
    return path


def tagged(tag: str) -> list[tuple[int, str]]:
    found = []
    for pid in procs.pids_with_env("PXQ_FAULT_TEST", tag):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found.append((pid, f.read().replace(b"\0", b" ").decode(errors="replace")[:120]))
        except OSError:
            continue
    return found


def leftovers(tag: str, wait: float = 8.0) -> list[tuple[int, str]]:
    """Processes of this test still alive after up to `wait` seconds (zombies excluded)."""
    deadline = time.monotonic() + wait
    while True:
        alive = []
        for pid, cmd in tagged(tag):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().split(") ")[-1].startswith("Z"):
                        continue
            except OSError:
                continue
            alive.append((pid, cmd))
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


class Driver:
    """Starts `python -m pxq` (or ./pxq) with a private TMPDIR and a fault tag."""

    def __init__(self, tmp_path: Path):
        self.tag = uuid.uuid4().hex
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.results = tmp_path / "results"
        self.results.mkdir()
        self.env = dict(
            os.environ,
            PXQ_FAULT_TEST=self.tag,
            TMPDIR=str(self.tmp),
            PXQ_BUILD_DIR=str(BUILD),
            PXQ_RESULTS_DIR=str(self.results),
            PYTHONPATH=str(ROOT / "drivers" / "pxq"),
            OMP_WAIT_POLICY="passive",
        )

    def argv(self, args: list[str], wrapper: bool = False) -> list[str]:
        return ([str(ROOT / "pxq")] if wrapper else [PYTHON, "-m", "pxq"]) + args

    def run(self, args: list[str], timeout: float = 300, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv(args), env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=timeout, **kw
        )

    def start(self, args: list[str], wrapper: bool = False, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen(
            self.argv(args, wrapper),
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def temp_left(self) -> list[str]:
        return sorted(p.name for p in self.tmp.iterdir())

    def ranks(self, app: str = "ring") -> list[int]:
        return [pid for pid, cmd in tagged(self.tag) if f"pxq-{app} " in cmd or cmd.endswith(f"pxq-{app}")]

    def wait_for_ranks(self, n: int, app: str = "ring", timeout: float = 60) -> list[int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.ranks(app)) >= n:
                time.sleep(0.5)  # past MPI start-up
                pids = self.ranks(app)  # read again: a short-lived process seen before may be gone
                if len(pids) >= n:
                    return pids
            time.sleep(0.1)
        raise AssertionError(f"{n} {app} ranks never started")


@pytest.fixture
def driver(tmp_path):
    if not (BUILD / "bin" / "pxq-ring").exists():
        pytest.fail(f"{BUILD}/bin/pxq-ring is missing: build pxq first (./pxq build)")
    d = Driver(tmp_path)
    yield d
    left = leftovers(d.tag, wait=10)
    for pid, _ in left:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert not left, f"processes left behind: {left}"
