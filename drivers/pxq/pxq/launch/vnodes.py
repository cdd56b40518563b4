"""Virtual nodes on one machine: Open MPI's launch agent starts each node's daemon locally."""

from __future__ import annotations

from pathlib import Path

from pxq.core.paths import AGENT
from pxq.launch.launchers import Launcher, Staging
from pxq.launch.request import YIELD, rankfile

RANK_ORDER_NEEDS_RANKFILE = (
    "--rank-order on virtual or real nodes needs Open MPI's rankfile: MPICH's Hydra puts ranks on nodes by --alloc "
    "block or cyclic only. Drop --rank-order, or use a build of pxq with Open MPI"
)


def virtual_agent(workdir: Path, links: dict[str, str]) -> str:
    """The virtual-node agent's path, through a link without white space when it has some
    (Open MPI and Hydra split the agent at white space)."""
    agent = str(AGENT)
    if any(c.isspace() for c in agent):
        agent = str(workdir / "vnode-agent")
        links[agent] = str(AGENT)
    return agent


class Virtual(Launcher, name="virtual", plans_cores=True, through_agent=True):
    """Nodes n0, n1, ... on this machine, each its own Open MPI daemon started by the agent."""

    def hosts(self) -> list[str]:
        return [f"n{i}" for i in range(self.req.layout.nodes)]

    def open_mpi(self, st: Staging) -> list[str]:
        req, layout = st.req, st.req.layout
        hosts = ",".join(f"n{i}:{layout.ranks_per_node}" for i in range(layout.nodes))
        st.files.update(rankfile(st.workdir, layout, req, st.chosen, lambda node: f"n{node}"))
        agent = virtual_agent(st.workdir, st.links)
        argv = st.mpirun_np() + ["--host", hosts, "--mca", "plm_rsh_agent", agent]
        argv += ["--rankfile", str(st.workdir / "rankfile")]
        if st.oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "core:overload-allowed", *YIELD]
        return argv
