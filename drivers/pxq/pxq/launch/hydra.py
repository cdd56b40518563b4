"""MPICH's Hydra mpiexec: one machine, virtual nodes and real hosts."""

from __future__ import annotations

from pathlib import Path

from pxq.core.errors import InputError
from pxq.core.paths import BIND_WRAPPER
from pxq.launch.hostfile import check_custom_on_real_nodes, check_hostfile
from pxq.launch.request import (
    LaunchPlan,
    LaunchRequest,
    choose_cores,
    packed_unless_placed,
    placement_record,
    rank_slots,
)
from pxq.launch.vnodes import RANK_ORDER_NEEDS_RANKFILE, virtual_agent


def _hydra_hosts(req: LaunchRequest, launcher: str) -> list[str]:
    """The nodes of a Hydra launch: the virtual nodes n0..n(p-1), or a hostfile's first p hosts."""
    if launcher == "virtual":
        return [f"n{i}" for i in range(req.layout.nodes)]
    return check_hostfile(req, launcher)[: req.layout.nodes]


def _hydra_binding(req: LaunchRequest, launcher: str, chosen: dict | None, oversubscribed: bool) -> list[str]:
    """Hydra's binding flags. Where pxq planned every rank's cores (a placement, or virtual
    nodes, which Hydra would bind alike) Hydra binds nothing and bind_rank.sh binds each rank."""
    t = req.layout.threads
    if oversubscribed:
        return ["-bind-to", "none"]
    if chosen is not None:
        return ["-bind-to", "none", str(BIND_WRAPPER)]
    if req.placement == "custom":  # real nodes: rank i of every node on the i-th core given
        return ["-bind-to", "user:" + ",".join(str(c) for c in check_custom_on_real_nodes(req))]
    if req.placement == "spread":
        return ["-bind-to", f"core:{t}", "-map-by", "socket"]
    return ["-bind-to", f"core:{t}"]


def hydra_plan(
    req: LaunchRequest, mpiexec: str, workdir: Path, launcher: str, oversubscribed: bool, env: dict[str, str]
) -> LaunchPlan:
    """MPICH's Hydra: -hosts with -ppn q (block) or -ppn 1, dealt round (cyclic); on
    virtual nodes the pxq agent stands in for ssh. MPICH then treats them as nodes, but UCX
    picks its own transports between them: shared memory on one host. UCX_TLS=tcp,self would
    make them talk TCP as Open MPI's do, but UCX 1.13's tcp transport can hang in
    MPI_Finalize (openucx/ucx#8738: a third of oversubscribed runs here), so that is left to
    the user. Hydra passes the whole environment (`env` and the caller's) on."""
    layout = req.layout
    if req.rank_order is not None and launcher != "local":  # on one node bind_rank.sh places the order
        raise InputError(RANK_ORDER_NEEDS_RANKFILE)
    argv = [mpiexec, "-np", str(layout.ranks)]
    links: dict[str, str] = {}
    if launcher in ("virtual", "hostfile"):
        ppn = 1 if req.alloc == "cyclic" else layout.ranks_per_node
        argv += ["-hosts", ",".join(_hydra_hosts(req, launcher)), "-ppn", str(ppn)]
    if launcher == "virtual":
        argv += ["-launcher", "ssh", "-launcher-exec", virtual_agent(workdir, links)]
    # pxq plans every rank's cores on this machine where Hydra cannot: a placement, a rank
    # order, and virtual nodes (Hydra would bind the ranks of every node alike).
    planned = launcher == "virtual" or req.placement is not None or req.rank_order is not None
    chosen = None
    if launcher in ("local", "virtual") and not oversubscribed and planned:
        chosen = choose_cores(packed_unless_placed(req), virtual=launcher == "virtual")
        slots = rank_slots(layout, req.alloc, req.rank_order)
        cpus = [chosen["nodes"][node]["ranks"][local]["cpus"] for node, local in slots]
        env["PXQ_BIND_CPUS"] = ";".join(",".join(str(c) for c in rank) for rank in cpus)
    placement = placement_record(req, chosen) if chosen is not None and req.placement else None
    argv += _hydra_binding(req, launcher, chosen, oversubscribed)
    return LaunchPlan(launcher, argv, env, {}, links, oversubscribed, placement, mpi="mpich")
