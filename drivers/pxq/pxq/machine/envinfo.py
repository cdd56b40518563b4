"""`pxq env`: what pxq sees (cores, caches, MPI, Kokkos, compiler) and the layouts it can run."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.core.paths import binary, build_hint


def machine() -> dict[str, Any]:
    exe = binary("envinfo")
    if not exe.exists():
        raise InputError(f"{exe} is missing: {build_hint()}")
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def packages() -> int:
    """Processor packages (sockets) on this machine; 1 when pxq-envinfo cannot say."""
    try:
        return int(machine().get("packages") or 1)
    except (InputError, OSError, ValueError, subprocess.SubprocessError):
        return 1


def cores() -> int:
    """Cores this process may use (affinity), the limit for runs without oversubscription."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def layouts_for(n: int) -> list[Layout]:
    """Every p x q x T with p*q*T = n: the layouts that use all cores exactly once."""
    out = []
    for p in range(1, n + 1):
        for q in range(1, n + 1):
            if n % (p * q) == 0:
                out.append(Layout(p, q, n // (p * q)))
    return out


@functools.lru_cache(maxsize=4)
def _mpi_library(exe: Path) -> str:
    return str(machine().get("mpi_library", ""))


def mpi_flavour() -> str:
    """The MPI this build of pxq uses, as pxq-envinfo reports it: open-mpi, mpich or unknown."""
    lib = _mpi_library(binary("envinfo")).lower()
    if "open mpi" in lib:
        return "open-mpi"
    return "mpich" if "mpich" in lib else "unknown"
