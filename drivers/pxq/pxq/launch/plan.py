"""A launch planned end to end (`plan_launch`: the launcher pxq.launch.launchers resolves, and
the starter of pxq's MPI, Open MPI's mpirun or MPICH's Hydra, starts the ranks on its nodes) and
staged (`stage`: each run's own shared-memory and session folders).

Only builds commands and environments; running them is pxq.experiments.runner's job."""

from __future__ import annotations

import os
from pathlib import Path

from pxq.core.errors import InputError
from pxq.launch import launchers, netns
from pxq.launch.request import (
    LaunchPlan,
    LaunchRequest,
    check_rank_order,
    is_oversubscribed,
    omp_env,
    oversubscribed_omp_env,
)
from pxq.machine.mpi import MPI_NAMES


def plan_launch(req: LaunchRequest, mpirun: str | None, workdir: Path) -> LaunchPlan:
    """The launch command line (without the program) and environment for a layout; MPIRUN: the
    launcher program, or None for the one the chosen launcher and pxq's MPI use."""
    launcher = launchers.resolve(req)
    req = launcher.req  # on a cluster of this machine, with each node's cores
    mpirun = launcher.mpirun(req.mpi) if mpirun is None else mpirun
    env = omp_env(req.layout.threads)
    env["PMIX_MCA_gds"] = "hash"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

    oversubscribed = is_oversubscribed(req, launcher.plans_cores, launcher.emulated)
    if oversubscribed:
        env.update(oversubscribed_omp_env(req.layout.threads))
    check_rank_order(req)
    plan = launchers.starter(launcher).plan(launcher, mpirun, workdir, oversubscribed, env)
    plan.record = launcher.record
    return _placement_note(req, plan)


def _placement_note(req: LaunchRequest, plan: LaunchPlan) -> LaunchPlan:
    """A placement pxq did not plan core by core (real nodes) is left to the launcher's binding."""
    if req.placement and plan.placement is None:
        who = {"slurm": "srun"}.get(plan.launcher, MPI_NAMES.get(plan.mpi, "the launcher"))
        plan.placement = {
            "mode": req.placement,
            "cpus": None,
            "warnings": [
                f"{req.placement} on real nodes is left to {who}'s binding: the record's placement shows the cores used"
            ],
        }
    return plan


# Open MPI's shared-memory segments (the vader transport's, MPI-3 windows') go to /dev/shm by
# default, named by job; ranks killed before mpirun cleans up leave them behind.
SHM_DIRS = ("OMPI_MCA_btl_vader_backing_directory", "OMPI_MCA_osc_sm_backing_directory")


def stage(plan: LaunchPlan, folder: Path, shm: Path | None = None) -> dict[str, str]:
    """Writes the plan's files and links (a link already there is replaced) and returns the
    environment of a run in `folder`: the plan's, its virtual nodes' folders and Open MPI's
    session folder inside it, and Open MPI's shared-memory segments in `shm` (a folder of the
    run's own on this machine's memory-backed file system) when every rank runs here, so
    nothing outlives the run. A user's own backing folder is kept on one node; virtual nodes
    need one each."""
    for path, content in plan.files.items():
        Path(path).write_text(content)
    for path, target in plan.links.items():
        Path(path).unlink(missing_ok=True)
        Path(path).symlink_to(target)
    env = dict(os.environ)
    env.update(plan.env)
    env["PXQ_VNODE_DIR"] = str(folder / "vnodes")
    env["OMPI_MCA_orte_tmpdir_base"] = str(folder / "session")
    if shm is not None and plan.mpi == "open-mpi" and plan.launcher == "local":
        for key in SHM_DIRS:
            env.setdefault(key, str(shm))
    if shm is not None and plan.launcher == "virtual":
        env["PXQ_VNODE_SHM"] = str(shm)  # the agent gives each virtual node a folder in it
    return env


SHARED_RUNS = ".pxq-runs"


def run_folder_base(launcher: str | None, hostfile: str | None, results: Path) -> str | None:
    """Where a run's private folder (the record rank 0 writes, the rankfile) goes: where its ranks
    see it. On a cluster of this machine, beside the cluster's state; across hosts (a hostfile,
    Slurm), beside the results, which such runs keep on a file system the nodes share (a node's
    /tmp is its own); on one machine, the temporary folder."""
    if not (launcher or hostfile or os.environ.get("SLURM_JOB_ID")) or launchers.emulated(launcher):
        return netns.run_base()
    if launchers.plans_cores(launcher):  # this machine's ranks
        return None
    base = results.parent / SHARED_RUNS
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make {base} for the run's folder, which every node must see: {e.strerror}") from e
    return str(base)
