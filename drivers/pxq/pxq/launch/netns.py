"""Launching on a cluster on this machine (pxq.cluster.emulator): mpirun runs on the cluster's
head, and Open MPI's launch agent starts each node's daemon inside that node (its network, host
name and mounts), so ranks of different nodes talk over their nodes' shaped links.

A cluster that is up is used by every run of the user who brought it up that names no other
launcher, hostfile or Slurm allocation; PXQ_CLUSTER names the cluster (default `pxq`), and a
cluster it names explicitly is used whoever brought it up (an explicit opt-in)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from pxq.cluster import emulator as cluster_mod
from pxq.cluster import links, nodes
from pxq.cluster.emulator import Cluster
from pxq.core.errors import InputError
from pxq.core.layout import Layout


def current() -> Cluster | None:
    """The cluster runs go to: the one PXQ_CLUSTER names, when it is up; else the default
    (`pxq`) when it is up and this user brought it up (never another user's); none with
    PXQ_CLUSTER=off."""
    given = os.environ.get("PXQ_CLUSTER")
    name = given or cluster_mod.DEFAULT_NAME
    if name == cluster_mod.OFF:
        return None
    c = cluster_mod.load(name)
    if c is None or given or not c.owner or c.owner == cluster_mod.owner_here():
        return c
    return None


def someone_elses() -> Cluster | None:
    """The default cluster when it is up and another user brought it up (what current() passes by)."""
    if os.environ.get("PXQ_CLUSTER"):
        return None
    c = cluster_mod.load(cluster_mod.DEFAULT_NAME)
    return c if c is not None and c.owner and c.owner != cluster_mod.owner_here() else None


def run_base() -> str | None:
    """Where a run's private folder goes when it runs on the cluster: the nodes' /tmp are their
    own, so the folder (the record, the rankfile) lives beside the cluster's state instead."""
    c = current()
    if c is None:
        return None
    base = cluster_mod.state_root() / c.name / "runs"
    base.mkdir(parents=True, exist_ok=True)
    return str(base)


def cluster_for(layout: Layout, found: Cluster | None = None) -> Cluster:
    """The cluster that is up here (FOUND, when the caller has looked it up), if it has the
    nodes the layout needs."""
    c = found or current()
    if c is None:
        other = someone_elses()
        if other is not None:
            raise InputError(
                f"--launcher cluster: cluster '{other.name}' is {other.owner}'s, not yours: bring up your own "
                f"(pxq cluster up --name NAME, then PXQ_CLUSTER=NAME), or set PXQ_CLUSTER={other.name} to share it"
            )
        raise InputError("--launcher cluster: no cluster is up here: pxq cluster up --nodes P --link PROFILE")
    if layout.nodes > c.nodes:
        raise InputError(
            f"the layout {layout} needs {layout.nodes} nodes and cluster '{c.name}' has {c.nodes}: "
            f"pxq cluster up --nodes {layout.nodes}, or pxq cluster down to run on virtual nodes"
        )
    return c


def holders_env(c: Cluster) -> dict[str, str]:
    """What the launch agent needs to start node K's commands inside node K, on its cores."""
    env = {"PXQ_CLUSTER_HOLDERS": ",".join(str(p) for p in c.holders)}
    if c.cpuset_procs:
        env["PXQ_CLUSTER_CPUSETS"] = ",".join(c.cpuset_procs)
    return env


def cluster_argv(
    c: Cluster, layout: Layout, mpirun: str, agent: str, workdir: Path
) -> tuple[list[str], dict[str, str]]:
    """mpirun on the head over the cluster's nodes, each rank on the node the run's hostfile
    names on its line (Open MPI's sequential mapper), binding left to the caller; and the
    agent's environment."""
    subnet = f"{cluster_mod.SUBNET}.0/24"
    argv = [
        *cluster_mod.enter_head(c),
        mpirun,
        "-np",
        str(layout.ranks),
        "--hostfile",
        str(workdir / "hostfile"),
        "--mca",
        "rmaps",
        "seq",
        "--bind-to",
        "none",
        "--mca",
        "plm_rsh_agent",
        agent,
        "--mca",
        "oob_tcp_if_include",
        subnet,
        "--mca",
        "btl_tcp_if_include",
        subnet,
    ]
    return argv, holders_env(c)


@contextlib.contextmanager
def brought_up(name: str, nodes: int, link: links.Link, cores: int, per_node: int | None = None) -> Iterator[Cluster]:
    """A cluster for the length of a block, which the block's runs use (PXQ_CLUSTER names it),
    removed when the block ends however it ends; PXQ_CLUSTER as it was afterwards."""
    given = os.environ.get("PXQ_CLUSTER")
    c = cluster_mod.up(name, nodes, link, cores=cores, per_node=per_node)
    os.environ["PXQ_CLUSTER"] = name
    try:
        yield c
    finally:
        if given is None:
            os.environ.pop("PXQ_CLUSTER", None)
        else:
            os.environ["PXQ_CLUSTER"] = given
        cluster_mod.remove(name)


@contextlib.contextmanager
def around(profile: str, nodes: int, cores: int, per_node: int, say) -> Iterator[Cluster]:
    """`--network PROFILE`: a cluster of `nodes` nodes of `per_node` cores for one command,
    named after this process."""
    link = links.parse_link(profile)
    name = f"net{os.getpid() % 100000}"
    with brought_up(name, max(2, nodes), link, cores, min(max(1, per_node), cores)) as c:
        shared = f", up to {c.nodes_per_core()} nodes per core" if c.cpuset and c.nodes_per_core() > 1 else ""
        say(
            f"cluster '{name}' up for this command: {c.nodes} nodes of {c.cores_per_node} core(s){shared}, "
            f"link {link.text()} ({c.setup_s:.2f} s)"
        )
        yield c
    say(f"cluster '{name}' removed")


def check_visible(path: Path, fix: str) -> None:
    """Exit 2 when runs go to a cluster whose nodes cannot see `path`: each node has a /tmp of
    its own, into which only pxq's checkout, build, results and runs are bound back."""
    c = current()
    if c is None:
        return
    try:
        rel = Path(os.path.realpath(path)).relative_to("/tmp")
    except ValueError:
        return
    if not any(rel.is_relative_to(r) for r in nodes.shared_under_tmp()):
        raise InputError(
            f"{path} is under /tmp, which each node of cluster '{c.name}' has of its own: {fix}, "
            f"or pxq cluster down --name {c.name}"
        )
