"""The cores of a cluster's nodes (pxq.cluster.emulator): one cpuset cgroup per node, so that
everything a node runs (its daemons, its ranks, their threads, a slurmd) stays on the node's
cores, and a program inside it sees only them.

Node k of a cluster with C cores per node gets the machine's cores k*C .. k*C+C-1, wrapping
around (`node_cpus`): on a machine with enough cores the nodes' cores are disjoint; on one with
fewer, nodes share cores, and `sharing()` says how many nodes share each. The cgroups are named
`pxqc-NAME-nK`, under the cgroup v2 tree where its cpuset controller is enabled, else under
the cgroup v1 cpuset hierarchy; where neither exists, nodes are not confined and the cluster's
record says so."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

V2_ROOT = Path("/sys/fs/cgroup")


def machine_cpus() -> list[int]:
    """The cores this process may run on (OS numbering), in order."""
    return sorted(os.sched_getaffinity(0))


def node_cpus(nodes: int, per_node: int, cpus: list[int]) -> list[list[int]]:
    """Each node's cores: node k gets C of the machine's cores from k*C on, wrapping around, and
    one further along each time the nodes have gone round the machine, so that nodes sharing
    cores start on different ones (two nodes of two cores on a 2-core machine: 0,1 and 1,0)."""
    n = len(cpus)
    return [[cpus[(k * per_node + k * per_node // n + i) % n] for i in range(per_node)] for k in range(nodes)]


def sharing(per_node: list[list[int]]) -> dict[int, int]:
    """How many nodes share each core."""
    count: dict[int, int] = {}
    for cpus in per_node:
        for c in set(cpus):
            count[c] = count.get(c, 0) + 1
    return dict(sorted(count.items()))


def hierarchy() -> tuple[str, Path] | None:
    """Where cpusets are made: ("v2", root) when the unified tree's root enables the cpuset
    controller for its children, ("v1", mount) for a v1 cpuset hierarchy, else None."""
    control = V2_ROOT / "cgroup.subtree_control"
    with contextlib.suppress(OSError):
        if "cpuset" in control.read_text().split():
            return "v2", V2_ROOT
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] == "cgroup" and "cpuset" in parts[3].split(","):
                return "v1", Path(parts[1])
    return None


def _cpulist(cpus: list[int]) -> str:
    return ",".join(str(c) for c in sorted(set(cpus)))


def make(prefix: str, per_node: list[list[int]]) -> tuple[str, list[str]]:
    """One cpuset per node, named PREFIX + nK; returns the hierarchy's kind and each node's
    cgroup.procs (a process joins a node by writing its PID there). OSError when the kernel refuses."""
    found = hierarchy()
    if found is None:
        return "", []
    kind, root = found
    procs = []
    for k, cpus in enumerate(per_node):
        group = root / f"{prefix}n{k}"
        group.mkdir(exist_ok=True)
        if kind == "v1":  # a v1 cpuset starts empty: memory nodes first, as the kernel requires
            (group / "cpuset.mems").write_text((root / "cpuset.mems").read_text().strip())
        (group / "cpuset.cpus").write_text(_cpulist(cpus))
        procs.append(str(group / "cgroup.procs"))
    return kind, procs


def join(procs_file: str, pid: int) -> None:
    Path(procs_file).write_text(str(pid))


def groups(prefix: str) -> list[Path]:
    """pxq's cpusets whose names start with PREFIX."""
    found = hierarchy()
    if found is None:
        return []
    return sorted(p for p in found[1].glob(f"{prefix}*") if p.is_dir())


def members(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def remove(prefix: str) -> list[str]:
    """Stops what is left in pxq's cpusets named PREFIX* and removes them; returns their names."""
    removed = []
    for group in groups(prefix):
        for pid in members(group):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for _ in range(100):  # a killed process leaves its cgroup when it is reaped
            try:
                group.rmdir()
                removed.append(group.name)
                break
            except FileNotFoundError:
                break
            except OSError:  # busy: a member not reaped yet
                time.sleep(0.02)
    return removed


def describe(c: Any) -> str:
    """A cluster's cores in words (C: a pxq.cluster.emulator.Cluster): each node's cpuset and how
    many nodes share a core, or that the nodes are not confined."""
    if not c.cpuset:
        return f"not confined (no cpuset controller here): every node runs on all {c.cores} of this machine's"
    per = "; ".join(f"{c.host(k)} {','.join(map(str, cpus))}" for k, cpus in enumerate(c.node_cpus))
    shared = c.nodes_per_core()
    tail = f"; up to {shared} nodes share each core" if shared > 1 else "; no node shares a core"
    return f"{c.cores_per_node} per node, a cpuset each (cgroup {c.cpuset}): {per}{tail}"
