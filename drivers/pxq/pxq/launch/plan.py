"""A launch planned end to end (`plan_launch`: one machine, virtual nodes, a hostfile, Slurm or Hydra)
and staged (`stage`: each run's own shared-memory and session folders).

Only builds commands and environments; running them is pxq.experiments.runner's job."""

from __future__ import annotations

import dataclasses
import os
import socket
from pathlib import Path

from pxq.core.errors import InputError
from pxq.core.paths import BIND_WRAPPER
from pxq.launch import netns
from pxq.launch.hostfile import real_nodes_argv, real_nodes_order
from pxq.launch.hydra import hydra_plan
from pxq.launch.request import (
    YIELD,
    LaunchPlan,
    LaunchRequest,
    check_rank_order,
    choose_cores,
    choose_launcher,
    export_flags,
    is_oversubscribed,
    omp_env,
    placement_record,
    rank_cores,
    rank_slots,
    rankfile,
)
from pxq.launch.slurm import slurm_plan
from pxq.launch.vnodes import virtual_agent
from pxq.machine.mpi import MPI_NAMES


def plan_launch(req: LaunchRequest, mpirun: str, workdir: Path) -> LaunchPlan:
    """The mpirun command line (without the program) and environment for a layout."""
    layout = req.layout
    launcher = choose_launcher(req)
    if launcher == "cluster":  # a layout the cluster cannot hold is the first thing to fix
        c = netns.cluster_for(layout)
        if c.node_cpus:  # each node's ranks go on the node's own cores
            req = dataclasses.replace(req, node_cpus=c.node_cpus, cluster=c.name)
    env = omp_env(layout.threads)
    env["PMIX_MCA_gds"] = "hash"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

    oversubscribed = is_oversubscribed(req, launcher)
    check_rank_order(req)
    if req.mpi == "mpich" and launcher != "slurm":
        return _placement_note(req, hydra_plan(req, mpirun, workdir, launcher, oversubscribed, env))
    argv = [mpirun, "-np", str(layout.ranks)]
    files: dict[str, str] = {}
    links: dict[str, str] = {}
    placement, chosen = None, None
    if req.placement and launcher in ("local", "virtual", "cluster"):
        chosen = choose_cores(req, virtual=launcher != "local")
        placement = placement_record(req, chosen)
    if launcher == "local":
        if layout.nodes != 1:
            raise InputError("the local launcher runs one node: use the virtual launcher for p > 1")
        if placement is not None or req.rank_order is not None:
            host = socket.gethostname()
            files.update(rankfile(workdir, layout, req, chosen, lambda node: host))
            argv += ["--rankfile", str(workdir / "rankfile")]
            if oversubscribed:
                argv += ["--oversubscribe", "--bind-to", "core:overload-allowed", *YIELD]
        elif oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "none", *YIELD]
        else:
            argv += ["--map-by", f"slot:PE={layout.threads}", "--bind-to", "core"]
    elif launcher == "virtual":
        hosts = ",".join(f"n{i}:{layout.ranks_per_node}" for i in range(layout.nodes))
        files.update(rankfile(workdir, layout, req, chosen if placement is not None else None, lambda node: f"n{node}"))
        agent = virtual_agent(workdir, links)
        argv += ["--host", hosts, "--mca", "plm_rsh_agent", agent, "--rankfile", str(workdir / "rankfile")]
        if oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "core:overload-allowed", *YIELD]
    elif launcher == "cluster":
        # Ranks go to their nodes in order (a hostfile read line by line: block, cyclic or a rank
        # order alike) and bind_rank.sh binds each to its cores: a rankfile's cores would be
        # checked against mpirun's view of the machine, not the node's cpuset.
        slots = rank_slots(layout, req.alloc, req.rank_order)
        if chosen is not None:
            cpus = [chosen["nodes"][node]["ranks"][local]["cpus"] for node, local in slots]
        else:
            cpus = [cores for _, cores in rank_cores(layout, req.alloc, req.cores, req.rank_order, req.node_cpus)]
        files[str(workdir / "hostfile")] = "".join(f"n{node}\n" for node, _ in slots)
        argv, cluster_env = netns.cluster_argv(c, layout, mpirun, virtual_agent(workdir, links), workdir)
        env.update(cluster_env)
        env["PXQ_BIND_CPUS"] = ";".join(",".join(str(c) for c in rank) for rank in cpus)
        if oversubscribed:
            argv += ["--oversubscribe", *YIELD]
    elif launcher == "slurm":
        argv, slurm_env, slurm_files = slurm_plan(req, workdir, oversubscribed)
        env.update(slurm_env)
        files.update(slurm_files)
    elif req.rank_order is not None:
        files.update(real_nodes_order(req, workdir))
        argv += ["--hostfile", str(req.hostfile), "--rankfile", str(workdir / "rankfile")]
        if oversubscribed:
            argv += ["--oversubscribe"]
    else:  # a hostfile's real nodes
        argv += real_nodes_argv(req, launcher, layout, oversubscribed)
    if launcher != "slurm":
        argv += export_flags(env)  # srun passes the whole environment on
    if launcher == "cluster":
        argv.append(str(BIND_WRAPPER))  # the program follows: bind_rank.sh binds it, then becomes it
    return _placement_note(req, LaunchPlan(launcher, argv, env, files, links, oversubscribed, placement))


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
    if not (launcher or hostfile or os.environ.get("SLURM_JOB_ID")) or launcher == "cluster":
        return netns.run_base()
    if launcher in ("local", "virtual"):
        return None
    base = results.parent / SHARED_RUNS
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make {base} for the run's folder, which every node must see: {e.strerror}") from e
    return str(base)
