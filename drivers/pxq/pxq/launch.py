"""Launch commands: one machine (with virtual nodes when p > 1), a hostfile, or Slurm.

Only builds commands and environments; running them is runner.py's job.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pxq.layout import InputError, Layout
from pxq.paths import AGENT


@dataclass
class LaunchRequest:
    layout: Layout
    alloc: str = "block"
    oversubscribe: bool = False
    hostfile: str | None = None
    launcher: str | None = None  # None: slurm inside an allocation, else local/virtual
    cores: int = 1  # cores on this machine (local and virtual launchers)


@dataclass
class LaunchPlan:
    launcher: str  # local, virtual, hostfile or slurm
    argv: list[str]  # mpirun ... (program and its arguments are appended by the caller)
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # path -> content to write first
    oversubscribed: bool = False


def find_mpirun() -> str:
    """PXQ_MPIRUN, else mpirun on PATH; a clear error when neither exists."""
    explicit = os.environ.get("PXQ_MPIRUN")
    if explicit:
        if shutil.which(explicit) is None:
            raise InputError(
                f"PXQ_MPIRUN={explicit} is not an executable: point it at your MPI's mpirun"
            )
        return explicit
    found = shutil.which("mpirun")
    if found is None:
        raise InputError(
            "mpirun not found: install Open MPI (apt-get install openmpi-bin), "
            "`module load` your MPI, or set PXQ_MPIRUN=/path/to/mpirun"
        )
    return found


def choose_launcher(req: LaunchRequest) -> str:
    if req.launcher:
        return req.launcher
    if req.hostfile:
        return "hostfile"
    if os.environ.get("SLURM_JOB_ID"):
        return "slurm"
    return "virtual" if req.layout.nodes > 1 else "local"


def rank_cores(layout: Layout, alloc: str, cores: int) -> list[tuple[int, list[int]]]:
    """For each rank: (node, cores). Block: ranks 0..q-1 on node 0; cyclic: rank i on node
    i mod p. Virtual nodes get disjoint core sets (wrapping only when oversubscribed)."""
    out = []
    p, q, t = layout.nodes, layout.ranks_per_node, layout.threads
    for rank in range(layout.ranks):
        node, local = (rank // q, rank % q) if alloc == "block" else (rank % p, rank // p)
        first = (node * q + local) * t
        out.append((node, [(first + k) % cores for k in range(t)]))
    return out


def _omp_env(threads: int) -> dict[str, str]:
    return {"OMP_NUM_THREADS": str(threads), "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}


def _export_flags(env: dict[str, str]) -> list[str]:
    flags: list[str] = []
    for key in env:
        flags += ["-x", key]
    return flags


def plan_launch(req: LaunchRequest, mpirun: str, workdir: Path) -> LaunchPlan:
    """The mpirun command line (without the program) and environment for a layout."""
    layout = req.layout
    launcher = choose_launcher(req)
    env = _omp_env(layout.threads)
    env["PMIX_MCA_gds"] = "hash"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

    if launcher in ("local", "virtual"):
        if layout.cores > req.cores and not req.oversubscribe:
            raise InputError(
                f"layout {layout} needs {layout.cores} cores but this machine has {req.cores}: "
                "use a smaller layout, or --oversubscribe (timings then mean little)"
            )
    oversubscribed = req.oversubscribe and (
        launcher not in ("local", "virtual") or layout.cores > req.cores
    )
    argv = [mpirun, "-np", str(layout.ranks)]
    files: dict[str, str] = {}
    if launcher == "local":
        if layout.nodes != 1:
            raise InputError("the local launcher runs one node: use the virtual launcher for p > 1")
        if oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "none"]
        else:
            argv += ["--map-by", f"slot:PE={layout.threads}", "--bind-to", "core"]
    elif launcher == "virtual":
        hosts = ",".join(f"n{i}:{layout.ranks_per_node}" for i in range(layout.nodes))
        rankfile = workdir / "rankfile"
        lines = []
        for rank, (node, cores) in enumerate(rank_cores(layout, req.alloc, req.cores)):
            lines.append(f"rank {rank}=n{node} slot={','.join(str(c) for c in cores)}")
        files[str(rankfile)] = "\n".join(lines) + "\n"
        argv += ["--host", hosts, "--mca", "plm_rsh_agent", str(AGENT), "--rankfile", str(rankfile)]
        if oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "core:overload-allowed"]
    else:  # hostfile or slurm: the real nodes
        if launcher == "hostfile":
            if not req.hostfile or not Path(req.hostfile).is_file():
                raise InputError(f"hostfile '{req.hostfile}' not found: give an existing file")
            argv += ["--hostfile", req.hostfile]
        mapping = f"ppr:{layout.ranks_per_node}:node:PE={layout.threads}"
        argv += ["--map-by", mapping, "--bind-to", "core"]
        argv += ["--rank-by", "node" if req.alloc == "cyclic" else "slot"]
        if oversubscribed:
            argv += ["--oversubscribe"]
    argv += _export_flags(env)
    return LaunchPlan(launcher, argv, env, files, oversubscribed)
