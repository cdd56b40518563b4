"""What makes a cluster's node a host of its own beyond its network (pxq.cluster.emulator): an
idle process per node holding the node's host name, IPC namespace and mounts (its own /tmp and
/dev/shm, with pxq's files bound back in), which every command of the node enters, and the
node's cores (pxq.cluster.cpusets), which the holder and every command entering the node join."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

from pxq.cluster import cpusets
from pxq.core import paths, procs


class ClusterError(RuntimeError):
    """A step of building or removing a cluster failed (the message names the command)."""


def state_root() -> Path:
    return Path(os.environ.get("PXQ_CLUSTER_DIR") or "/run/pxq-cluster")


def shared_under_tmp() -> list[str]:
    """What every node must see although its /tmp is its own: pxq's checkout, its build, the
    results and the clusters' state (the runs' folders), where they live under /tmp; as paths
    relative to /tmp, outermost first, none inside another."""
    wanted = [paths.ROOT, paths.build_dir(), paths.results_dir(), state_root()]
    rels: list[Path] = []
    for p in sorted({Path(os.path.realpath(w)) for w in wanted}, key=lambda p: (len(p.parts), str(p))):
        try:
            rel = p.relative_to("/tmp")
        except ValueError:
            continue
        if str(rel) != "." and not any(rel.is_relative_to(r) for r in rels):
            rels.append(rel)
        elif str(rel) == ".":
            raise ClusterError("pxq's files live in /tmp itself, which each node replaces: move them below it")
    return [str(r) for r in rels]


def holder(name: str, node: int, ns: str, host: str, cpuset: str | None) -> int:
    """An idle process in the node's network namespace with its own host name, IPC namespace
    (MPICH's UCX then reaches other nodes over the link, not shared memory), /tmp and /dev/shm.
    What pxq needs from the host's /tmp (its checkout, build, results, the runs' folders) is bound
    back into the node's /tmp, through a folder of the host's /dev/shm removed at once. The holder
    joins the node's cpuset (its cgroup.procs) when there is one."""
    hidden = f"/dev/shm/.pxqc-{name}-n{node}-tmp"
    binds = "".join(
        f'mkdir -p /tmp/{shlex.quote(r)} && mount --bind "$h"/{shlex.quote(r)} /tmp/{shlex.quote(r)} && '
        for r in shared_under_tmp()
    )
    script = (
        f'hostname {host} && h={hidden} && mkdir -p "$h" && mount --bind /tmp "$h" && '
        f'mount -t tmpfs -o mode=1777 pxq-tmp /tmp && {binds}umount -l "$h" && rmdir "$h" && '
        "mount -t tmpfs -o mode=1777 pxq-shm /dev/shm && exec sleep infinity"
    )
    env = dict(os.environ, PXQ_CLUSTER_HOLDER=f"{name}:{node}")
    # nsenter, not `ip netns exec`, which would mount a /sys of the namespace's own: the node keeps
    # the machine's /sys, and with it the cgroup tree slurmd needs (v1, v2 or hybrid as it is).
    unshare = "unshare --uts --ipc --mount --propagation private sh -c".split()
    argv = ["nsenter", f"--net=/run/netns/{ns}", "--", *unshare, script]
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        if procs.exited(proc):
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            raise ClusterError(f"node {node}'s host name and mounts: {err or 'the holder process exited'}")
        try:
            if Path(f"/proc/{proc.pid}/comm").read_text().strip() == "sleep":
                if proc.stderr:
                    proc.stderr.close()
                if cpuset:
                    try:
                        cpusets.join(cpuset, proc.pid)
                    except OSError as e:
                        raise ClusterError(f"node {node}'s cpuset: {e}") from e
                return proc.pid
        except OSError:
            pass
        time.sleep(0.01)
    raise ClusterError(f"node {node}'s host name and mounts: not ready after 10 s")
