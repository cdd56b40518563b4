"""Inside a Slurm allocation: srun with the layout's nodes, tasks, CPUs and binding."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.launch.hostfile import RANK_ORDER_NOT_PLACEMENT, check_custom_on_real_nodes
from pxq.launch.launchers import Launcher, Staging
from pxq.launch.request import LaunchRequest, rank_slots
from pxq.machine import envinfo


def find_srun() -> str:
    found = shutil.which("srun")
    if found is None:
        raise InputError("srun not found inside a Slurm allocation: load your site's Slurm module, or use --launcher")
    return found


def slurm_nodes() -> list[str]:
    """The allocation's node names in order (scontrol expands SLURM_JOB_NODELIST)."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not nodelist:
        raise InputError("--launcher slurm outside an allocation: start pxq inside salloc or sbatch")
    return list(_hostnames(nodelist))


@functools.lru_cache(maxsize=8)
def _hostnames(nodelist: str) -> tuple[str, ...]:
    """scontrol's expansion of a node list, asked once per list (a sweep plans many runs)."""
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        raise InputError("scontrol not found: load your site's Slurm module")
    out = subprocess.run([scontrol, "show", "hostnames", nodelist], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise InputError(f"scontrol show hostnames {nodelist} failed: {out.stderr.strip()}")
    return tuple(out.stdout.split())


def slurm_job() -> dict[str, object]:
    """The allocation a run used, for the record: the job, its nodes and what each offers."""
    env = os.environ
    job: dict[str, object] = {"job_id": env.get("SLURM_JOB_ID", ""), "nodes": slurm_nodes()}
    for key, name in (
        ("SLURM_JOB_PARTITION", "partition"),
        ("SLURM_JOB_CPUS_PER_NODE", "cpus_per_node"),
        ("SLURM_CLUSTER_NAME", "cluster"),
        ("SLURM_MPI_TYPE", "mpi"),
    ):
        if env.get(key):
            job[name] = env[key]
    return job


def _slurm_bind(req: LaunchRequest) -> list[str]:
    """srun's binding and distribution for the placement: packed keeps a node's ranks on
    neighbouring cores (block:block), spread deals them out over the sockets (block:cyclic),
    custom binds rank i of a node to the i-th core given; cyclic allocation deals ranks over
    the nodes."""
    over_nodes = "cyclic" if req.alloc == "cyclic" else "block"
    if req.placement == "custom":
        cpus = check_custom_on_real_nodes(req)
        return [f"--cpu-bind=map_cpu:{','.join(str(c) for c in cpus)}", f"--distribution={over_nodes}:block"]
    within = "cyclic" if req.placement == "spread" else "block"
    return ["--cpu-bind=cores", f"--distribution={over_nodes}:{within}"]


def slurm_plan(req: LaunchRequest, workdir: Path, oversubscribed: bool) -> tuple[list[str], dict[str, str], dict]:
    """srun inside the allocation: p nodes, q tasks per node, T cpus per task, bound to cores;
    a rank order through SLURM_HOSTFILE (line i: the node of rank i)."""
    layout = req.layout
    nodes = slurm_nodes()
    if layout.nodes > len(nodes):
        raise InputError(
            f"layout {layout} needs {layout.nodes} nodes but the allocation has {len(nodes)} "
            f"({', '.join(nodes)}): salloc -N {layout.nodes} --ntasks-per-node {layout.ranks_per_node} "
            f"--cpus-per-task {layout.threads}"
        )
    argv = [find_srun(), f"--nodes={layout.nodes}", f"--ntasks={layout.ranks}"]
    argv += [f"--ntasks-per-node={layout.ranks_per_node}", f"--cpus-per-task={layout.threads}"]
    env: dict[str, str] = {}
    files: dict[str, str] = {}
    if req.rank_order is not None:
        if req.placement:
            raise InputError(RANK_ORDER_NOT_PLACEMENT)
        hosts = "".join(f"{nodes[node]}\n" for node, _ in rank_slots(layout, req.alloc, req.rank_order))
        files[str(workdir / "slurm-hosts")] = hosts
        env["SLURM_HOSTFILE"] = str(workdir / "slurm-hosts")
        argv += ["--distribution=arbitrary", "--cpu-bind=cores"]
    else:
        argv += _slurm_bind(req)
    if oversubscribed:
        argv.append("--overcommit")
    if not os.environ.get("SLURM_MPI_TYPE"):
        argv.append(f"--mpi={srun_mpi()}")
    # A rank that dies ends the step (as mpirun does), and the output is not buffered per task.
    argv += ["--kill-on-bad-exit=1", "--unbuffered"]
    return argv, env, files


def srun_mpi() -> str:
    """srun's --mpi for the MPI pxq was built with: Open MPI starts under PMIx, MPICH under PMI-2."""
    return "pmi2" if envinfo.mpi_flavour() == "mpich" else "pmix"


class Slurm(Launcher, name="slurm", real_nodes=True, own_starter=True):
    """srun inside the allocation pxq runs in: it starts the ranks whichever MPI pxq uses."""

    def open_mpi(self, st: Staging) -> list[str]:
        argv, env, files = slurm_plan(st.req, st.workdir, st.oversubscribed)
        st.env.update(env)
        st.files.update(files)
        return argv

    def finish(self, st: Staging, argv: list[str]) -> list[str]:
        return argv  # srun passes the whole environment on

    def record(self) -> dict[str, Any]:
        return {"slurm": slurm_job()}
