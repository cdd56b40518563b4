"""Real nodes named by an MPI hostfile: the file read strictly, Open MPI's mpirun over its hosts."""

from __future__ import annotations

import re
from pathlib import Path

from pxq.core import door, escape
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.launch.launchers import Launcher, Staging
from pxq.launch.request import LaunchRequest, rank_slots


def check_custom_on_real_nodes(req: LaunchRequest) -> list[int]:
    """The cores of --placement custom on real nodes (hostfile or Slurm): one per rank of a
    node, one thread per rank, the same on every node."""
    cpus = req.placement_cpus or []
    if req.layout.threads != 1 or len(cpus) != req.layout.ranks_per_node:
        raise InputError(
            "--placement custom on real nodes takes one thread per rank and one core per "
            "rank of a node (the same on every node): give --cores with q entries"
        )
    return cpus


RANK_ORDER_NOT_PLACEMENT = "--rank-order on real nodes binds ranks to their slots' cores itself: drop --placement"


def real_nodes_argv(req: LaunchRequest, launcher: str, layout: Layout, oversubscribed: bool) -> list[str]:
    """A hostfile: Open MPI's mapping on the real nodes."""
    argv: list[str] = []
    if launcher == "hostfile":
        check_hostfile(req, launcher)
        argv += ["--hostfile", str(req.hostfile)]
    mapping = f"ppr:{layout.ranks_per_node}:node:PE={layout.threads}"
    if req.placement == "spread":
        # Open MPI's mapper spreads over the nodes' sockets; the record shows what it did.
        mapping = f"socket:PE={layout.threads}"
        argv += ["--npernode", str(layout.ranks_per_node)]
    if req.placement == "custom":
        check_custom_on_real_nodes(req)
        argv += ["--cpu-list", ",".join(str(c) for c in req.placement_cpus or []), "--bind-to", "cpu-list:ordered"]
    else:
        argv += ["--map-by", mapping, "--bind-to", "core"]
    argv += ["--rank-by", "node" if req.alloc == "cyclic" else "slot"]
    if oversubscribed:
        argv += ["--oversubscribe"]
    return argv


_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")


_HOST_OPTION = re.compile(r"(slots|max_slots|max-slots)=([0-9]{1,6})")


MAX_HOSTFILE = 1 << 20  # bytes


def hostfile_hosts(path: Path) -> list[str]:
    """The hosts an MPI hostfile names, in order, once each, read strictly: UTF-8, one host per
    line (Open MPI's `host slots=N max_slots=N` or MPICH's `host:N`), # comments and blank
    lines skipped. Anything else is refused naming the line and the fix (Open MPI would stop
    with a banner naming neither)."""
    fix = "write one host per line, e.g. `node1 slots=2` (Open MPI) or `node1:2` (MPICH)"
    try:
        raw = door.read_bytes(path, "hostfile", fix, MAX_HOSTFILE)
    except FileNotFoundError:
        raise InputError(f"hostfile '{path}' not found: give an existing file") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"hostfile '{path}': not UTF-8 text: {fix}") from None
    hosts = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, _, slots = words[0].partition(":")
        bad = [w for w in words[1:] if not _HOST_OPTION.fullmatch(w)]
        if not _HOST.fullmatch(host) or (slots and not slots.isdigit()) or bad:
            shown = escape.plain(line.strip())[:80]
            raise InputError(f"hostfile '{path}' line {number}: '{shown}' is not a host line: {fix}")
        hosts.append(host)
    if not hosts:
        raise InputError(f"hostfile '{path}' names no host: {fix}")
    return list(dict.fromkeys(hosts))


def check_hostfile(req: LaunchRequest, launcher: str) -> list[str]:
    """The hosts of the hostfile a real-node launch needs, read and checked before anything runs:
    --launcher hostfile without --hostfile, a bad file, or fewer hosts than the layout's nodes
    are refused."""
    if not req.hostfile:
        raise InputError(f"--launcher {launcher} runs on the nodes of a hostfile: add --hostfile FILE")
    hosts = hostfile_hosts(Path(req.hostfile))
    if len(hosts) < req.layout.nodes:
        raise InputError(
            f"hostfile '{req.hostfile}' names {len(hosts)} host(s) for layout {req.layout}'s {req.layout.nodes} "
            "nodes: give one line per node, or a layout with fewer nodes"
        )
    return hosts


def real_nodes_order(req: LaunchRequest, workdir: Path) -> dict[str, str]:
    """A rank order on a hostfile's nodes: a rankfile naming the hostfile's hosts in order."""
    if req.placement:
        raise InputError(RANK_ORDER_NOT_PLACEMENT)
    hosts = check_hostfile(req, "hostfile")
    t = req.layout.threads
    lines = [
        f"rank {rank}={hosts[node]} slot={local * t}-{local * t + t - 1}\n"
        for rank, (node, local) in enumerate(rank_slots(req.layout, req.alloc, req.rank_order))
    ]
    return {str(workdir / "rankfile"): "".join(lines)}


class Hostfile(Launcher, name="hostfile", real_nodes=True, needs_hostfile=True):
    """The real nodes a hostfile names: Open MPI's mapping on them, or a rankfile for a rank order."""

    def hosts(self) -> list[str]:
        return check_hostfile(self.req, self.name)[: self.req.layout.nodes]

    def open_mpi(self, st: Staging) -> list[str]:
        req = st.req
        argv = st.mpirun_np()
        if req.rank_order is None:
            return argv + real_nodes_argv(req, self.name, req.layout, st.oversubscribed)
        st.files.update(real_nodes_order(req, st.workdir))
        argv += ["--hostfile", str(req.hostfile), "--rankfile", str(st.workdir / "rankfile")]
        if st.oversubscribed:
            argv += ["--oversubscribe"]
        return argv
