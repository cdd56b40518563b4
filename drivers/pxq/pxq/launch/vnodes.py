"""Virtual nodes on one machine: Open MPI's launch agent starts each node's daemon locally."""

from __future__ import annotations

from pathlib import Path

from pxq.core.paths import AGENT

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
