"""MPICH's Hydra mpiexec as a starter: on one machine, virtual nodes, a cluster of this machine and
real hosts, each launcher naming its nodes (`Launcher.hosts`)."""

from __future__ import annotations

from pathlib import Path

from pxq.cluster import emulator as cluster_mod
from pxq.core.errors import InputError
from pxq.core.paths import BIND_WRAPPER
from pxq.launch import netns
from pxq.launch.hostfile import check_custom_on_real_nodes
from pxq.launch.launchers import Launcher, Starter
from pxq.launch.request import (
    LaunchPlan,
    LaunchRequest,
    choose_cores,
    packed_unless_placed,
    placement_record,
    rank_slots,
)
from pxq.launch.vnodes import RANK_ORDER_NEEDS_RANKFILE, virtual_agent

OVERSUBSCRIBED_ON_CLUSTER = (
    "MPICH on a cluster of this machine needs a core per rank: with more ranks than cores, UCX's TCP transport "
    "between the nodes hangs in MPI_Finalize (3 of 4 oversubscribed 2x2 ring runs here). Use a layout with no more "
    "workers than cores (2x1 on 2 cores), or the Open MPI build of pxq"
)


def _hydra_binding(req: LaunchRequest, chosen: dict | None, oversubscribed: bool) -> list[str]:
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


def _on_head(launcher: Launcher, argv: list[str], oversubscribed: bool, env: dict[str, str]) -> list[str]:
    """mpiexec on a cluster's head, its proxies calling it back at the head's address (as it is
    elsewhere)."""
    if not launcher.emulated:
        return argv
    c = netns.cluster_for(launcher.req.layout, launcher.cluster)  # a layout it cannot hold: first
    if oversubscribed:
        raise InputError(OVERSUBSCRIBED_ON_CLUSTER)
    env.update(netns.holders_env(c))
    return [*cluster_mod.enter_head(c), argv[0], "-localhost", cluster_mod.HEAD_ADDRESS, *argv[1:]]


class Hydra(Starter, mpi="mpich"):
    """MPICH's Hydra: -hosts with -ppn q (block) or -ppn 1, dealt round (cyclic); on virtual
    nodes and a cluster of this machine the pxq agent stands in for ssh. MPICH then treats them as
    nodes, but UCX picks its own transports between them: on virtual nodes, shared memory (one
    host). UCX_TLS=tcp,self would make them talk TCP as Open MPI's do, but UCX 1.13's tcp
    transport can hang in MPI_Finalize (openucx/ucx#8738: a third of oversubscribed runs here),
    so that is left to the user. A cluster's nodes each have an IPC namespace of their own, which
    UCX takes for another host: TCP over the node's link between nodes, shared memory within one.
    Hydra passes the whole environment (`env` and the caller's) on."""

    def plan(
        self, launcher: Launcher, mpiexec: str, workdir: Path, oversubscribed: bool, env: dict[str, str]
    ) -> LaunchPlan:
        req = launcher.req
        layout = req.layout
        if req.rank_order is not None and (launcher.through_agent or launcher.real_nodes):
            raise InputError(RANK_ORDER_NEEDS_RANKFILE)  # on one node bind_rank.sh places the order
        argv = _on_head(launcher, [mpiexec, "-np", str(layout.ranks)], oversubscribed, env)
        hosts = launcher.hosts()
        links: dict[str, str] = {}
        if hosts:
            ppn = 1 if req.alloc == "cyclic" else layout.ranks_per_node
            argv += ["-hosts", ",".join(hosts), "-ppn", str(ppn)]
        if launcher.through_agent:
            argv += ["-launcher", "ssh", "-launcher-exec", virtual_agent(workdir, links)]
        # pxq plans every rank's cores on this machine where Hydra cannot: a placement, a rank
        # order, and virtual nodes (Hydra would bind the ranks of every node alike).
        planned = launcher.through_agent or req.placement is not None or req.rank_order is not None
        chosen = None
        if launcher.plans_cores and not oversubscribed and planned:
            chosen = choose_cores(packed_unless_placed(req), virtual=launcher.through_agent)
            slots = rank_slots(layout, req.alloc, req.rank_order)
            cpus = [chosen["nodes"][node]["ranks"][local]["cpus"] for node, local in slots]
            env["PXQ_BIND_CPUS"] = ";".join(",".join(str(c) for c in rank) for rank in cpus)
        placement = placement_record(req, chosen) if chosen is not None and req.placement else None
        argv += _hydra_binding(req, chosen, oversubscribed)
        return LaunchPlan(launcher.name, argv, env, {}, links, oversubscribed, placement, mpi="mpich")
