"""A cluster of this machine (pxq cluster up): mpirun on the head over the cluster's nodes, each
rank bound by bind_rank.sh to cores of its node's own cpuset."""

from __future__ import annotations

import dataclasses
from typing import Any

from pxq.cluster.emulator import Cluster
from pxq.core.paths import BIND_WRAPPER
from pxq.launch import netns
from pxq.launch.launchers import Launcher, Staging
from pxq.launch.request import YIELD, LaunchRequest, rank_cores, rank_slots
from pxq.launch.vnodes import virtual_agent


class OnCluster(Launcher, name="cluster", plans_cores=True, emulated=True, through_agent=True):
    def __init__(self, req: LaunchRequest, cluster: Cluster | None = None) -> None:
        # A layout the cluster cannot hold is the first thing to fix.
        c = netns.cluster_for(req.layout, cluster)
        if c.node_cpus:  # each node's ranks go on the node's own cores
            req = dataclasses.replace(req, node_cpus=c.node_cpus, cluster=c.name)
        super().__init__(req, c)

    def open_mpi(self, st: Staging) -> list[str]:
        # Ranks go to their nodes in order (a hostfile read line by line: block, cyclic or a rank
        # order alike) and bind_rank.sh binds each to its cores: a rankfile's cores would be
        # checked against mpirun's view of the machine, not the node's cpuset.
        req, layout = st.req, st.req.layout
        assert self.cluster is not None
        slots = rank_slots(layout, req.alloc, req.rank_order)
        if st.chosen is not None:
            cpus = [st.chosen["nodes"][node]["ranks"][local]["cpus"] for node, local in slots]
        else:
            cpus = [cores for _, cores in rank_cores(layout, req.alloc, req.cores, req.rank_order, req.node_cpus)]
        st.files[str(st.workdir / "hostfile")] = "".join(f"n{node}\n" for node, _ in slots)
        argv, cluster_env = netns.cluster_argv(
            self.cluster, layout, st.mpirun, virtual_agent(st.workdir, st.links), st.workdir
        )
        st.env.update(cluster_env)
        st.env["PXQ_BIND_CPUS"] = ";".join(",".join(str(c) for c in rank) for rank in cpus)
        if st.oversubscribed:
            argv += ["--oversubscribe", *YIELD]
        return argv

    def hosts(self) -> list[str]:
        return [f"n{i}" for i in range(self.req.layout.nodes)]

    def finish(self, st: Staging, argv: list[str]) -> list[str]:
        # The program follows: bind_rank.sh binds it, then becomes it.
        return [*super().finish(st, argv), str(BIND_WRAPPER)]

    def record(self) -> dict[str, Any]:
        return {"cluster": self.cluster.record() if self.cluster else None}
