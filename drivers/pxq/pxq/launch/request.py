"""What a launch is asked for (LaunchRequest) and what it becomes (LaunchPlan), with the rules every
launcher shares: ranks to slots and cores, OpenMP's environment, oversubscription (pxq.launch.launchers
chooses the launcher)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.core.paths import binary, build_hint

PLACEMENTS = ("packed", "spread", "custom")


@dataclass
class LaunchRequest:
    layout: Layout
    alloc: str = "block"
    oversubscribe: bool = False
    hostfile: str | None = None
    launcher: str | None = None  # None: slurm inside an allocation, else local/virtual
    cores: int = 1  # cores on this machine (local and virtual launchers)
    placement: str | None = None  # packed, spread or custom; None: the launcher's default
    placement_cpus: list[int] | None = None  # custom: OS cpu numbers, one per worker
    rank_order: list[int] | None = None  # the ranks slot by slot (pxq.analysis.messages.placement); None: alloc decides
    mpi: str = "open-mpi"  # the MPI pxq was built with (mpi_flavour()): open-mpi or mpich
    node_cpus: list[list[int]] | None = None  # a cluster of this machine: each node's cores (its cpuset)
    cluster: str = ""  # that cluster's name, for messages


@dataclass
class LaunchPlan:
    launcher: str  # local, virtual, hostfile or slurm
    argv: list[str]  # mpirun ... (program and its arguments are appended by the caller)
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # path -> content to write first
    links: dict[str, str] = field(default_factory=dict)  # path -> target: symlinks to make first
    oversubscribed: bool = False
    placement: dict | None = None  # mode, per-rank planned cpus, warnings (for the record)
    mpi: str = "open-mpi"  # whose launcher argv is: open-mpi (mpirun) or mpich (Hydra's mpiexec)
    record: Callable[[], dict[str, Any]] = dict  # what the run's record keeps of where it went (driver.*)

    @property
    def passes_environment(self) -> bool:
        """Whether the launcher hands the whole environment to the ranks (srun, Hydra), or
        needs each variable named (Open MPI's mpirun -x)."""
        return self.launcher == "slurm" or self.mpi == "mpich"

    def with_flags(self, flags: list[str]) -> list[str]:
        """argv with `flags` given to the launcher: right after its program, which on a cluster of
        this machine follows the prefix that enters the head (`nsenter ... --`)."""
        at = self.argv.index("--") + 1 if self.launcher == "cluster" else 0
        return [*self.argv[: at + 1], *flags, *self.argv[at + 1 :]]


def rank_slots(layout: Layout, alloc: str, order: list[int] | None = None) -> list[tuple[int, int]]:
    """For each rank: (node, rank on the node). Block: ranks 0..q-1 on node 0; cyclic: rank i
    on node i mod p; a rank order: order[s] sits in slot s, slot s on node s // q."""
    p, q = layout.nodes, layout.ranks_per_node
    if order is not None:
        slot = {rank: s for s, rank in enumerate(order)}
        return [divmod(slot[r], q) for r in range(layout.ranks)]
    return [(r // q, r % q) if alloc == "block" else (r % p, r // p) for r in range(layout.ranks)]


def rank_cores(
    layout: Layout, alloc: str, cores: int, order: list[int] | None = None, node_cpus: list[list[int]] | None = None
) -> list[tuple[int, list[int]]]:
    """For each rank: (node, cores). Virtual nodes get disjoint core sets (wrapping only when
    oversubscribed); a cluster's node gives its workers its own cores in order (wrapping when
    they outnumber them)."""
    q, t = layout.ranks_per_node, layout.threads
    if node_cpus is not None:
        return [
            (node, [node_cpus[node][(local * t + k) % len(node_cpus[node])] for k in range(t)])
            for node, local in rank_slots(layout, alloc, order)
        ]
    return [
        (node, [((node * q + local) * t + k) % cores for k in range(t)])
        for node, local in rank_slots(layout, alloc, order)
    ]


def _more_than_the_machine(req: LaunchRequest) -> InputError:
    return InputError(
        f"layout {req.layout} needs {req.layout.cores} cores but this machine has {req.cores}: "
        "use a smaller layout, or --oversubscribe (timings then mean little)"
    )


def _cluster_check(req: LaunchRequest) -> bool:
    """Whether a run on a cluster's nodes puts two workers on one core; InputError when it would
    without --oversubscribe, naming whether a node's cores or the machine's ran out."""
    assert req.node_cpus is not None
    layout, per_node = req.layout, len(req.node_cpus[0])
    load: dict[int, int] = {}
    for _, cpus in rank_cores(layout, req.alloc, req.cores, req.rank_order, req.node_cpus):
        for c in cpus:
            load[c] = load.get(c, 0) + 1
    shared = max(load.values()) > 1
    if shared and not req.oversubscribe:
        need = layout.ranks_per_node * layout.threads
        if need > per_node:
            raise InputError(
                f"layout {layout} puts {need} workers on a node and the nodes of cluster '{req.cluster}' have "
                f"{per_node} core{'s' if per_node > 1 else ''} each: pxq cluster up --nodes {len(req.node_cpus)} "
                f"--cores-per-node {need} (nodes may then share this machine's cores; the record says how many), "
                "or --oversubscribe (timings then mean little)"
            )
        raise _more_than_the_machine(req)
    return shared


def check_rank_order(req: LaunchRequest) -> None:
    """A rank order fits the layout and is the only allocation asked for."""
    order = req.rank_order
    if order is None:
        return
    if len(order) != req.layout.ranks:
        raise InputError(
            f"--rank-order lists {len(order)} ranks but layout {req.layout} runs {req.layout.ranks}: use a "
            f"layout of {len(order)} ranks, or suggest an order for this one (pxq placement suggest)"
        )
    if sorted(order) != list(range(len(order))):
        raise InputError("--rank-order: the order must list every rank 0..N-1 once")
    if req.alloc != "block":
        raise InputError(f"--rank-order places every rank itself: drop --alloc {req.alloc}")


def choose_cores(req: LaunchRequest, virtual: bool) -> dict:
    """The cores `pxq-envinfo place` chooses for the request's placement (hwloc), per node and
    rank on the node, with the warnings where the mode cannot be honoured here."""
    exe = binary("envinfo")
    if not exe.exists():
        raise InputError(f"{exe} is missing: {build_hint()}")
    if req.node_cpus is not None:
        return _cores_on_cluster(req)
    lay = req.layout
    argv = [
        str(exe),
        "place",
        "--mode",
        req.placement or "packed",
        "--nodes",
        str(lay.nodes),
        "--ranks-per-node",
        str(lay.ranks_per_node),
        "--threads",
        str(lay.threads),
    ]
    if virtual:
        argv.append("--virtual")
    if req.placement == "custom":
        if not req.placement_cpus:
            raise InputError("--placement custom needs --cores, e.g. --cores 0,2 (one core per worker)")
        argv += ["--cpus", ",".join(str(c) for c in req.placement_cpus)]
    elif req.placement_cpus:
        raise InputError("--cores goes with --placement custom")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise InputError(out.stderr.strip().removeprefix("pxq-envinfo: error: ") or f"{exe} failed")
    return json.loads(out.stdout)


def _cores_on_cluster(req: LaunchRequest) -> dict:
    """A placement on a cluster's nodes: each node's workers on the node's own cores (its cpuset),
    in order, or the user's custom cores where each lies in its worker's node; hwloc says which
    caches the ranks of a node share."""
    assert req.node_cpus is not None
    lay = req.layout
    need = lay.ranks_per_node * lay.threads
    if req.placement == "custom" and req.placement_cpus:
        cpus = list(req.placement_cpus)
        for i, cpu in enumerate(cpus):
            if i // need < lay.nodes and cpu not in req.node_cpus[i // need]:
                raise InputError(
                    f"--cores: core {cpu} is not a core of node {i // need} of cluster '{req.cluster}' "
                    f"({','.join(map(str, req.node_cpus[i // need]))}; pxq cluster status lists them)"
                )
    else:
        cpus = [c for _, rank in rank_cores(lay, "block", req.cores, None, req.node_cpus) for c in rank]
    done = dataclasses.replace(req, placement="custom", placement_cpus=cpus, node_cpus=None)
    chosen = choose_cores(done, virtual=True)
    chosen["mode"] = req.placement or "packed"
    if req.placement == "spread":
        chosen["warnings"].append(
            f"spread on cluster '{req.cluster}': a node's ranks take its own cores (its cpuset) in order, as packed"
        )
    return chosen


def rankfile(workdir: Path, layout: Layout, req: LaunchRequest, chosen: dict | None, host) -> dict[str, str]:
    """An Open MPI rankfile: every rank on its node's host, on the cores placement chose (or,
    without a placement, disjoint cores per virtual node)."""
    lines = []
    for rank, ((node, local), (_, cores)) in enumerate(
        zip(
            rank_slots(layout, req.alloc, req.rank_order),
            rank_cores(layout, req.alloc, req.cores, req.rank_order, req.node_cpus),
        )
    ):
        if chosen is not None:
            cores = chosen["nodes"][node]["ranks"][local]["cores"]
        lines.append(f"rank {rank}={host(node)} slot={','.join(str(c) for c in cores)}\n")
    return {str(workdir / "rankfile"): "".join(lines)}


def placement_record(req: LaunchRequest, chosen: dict) -> dict:
    slots = rank_slots(req.layout, req.alloc, req.rank_order)
    cpus = [chosen["nodes"][node]["ranks"][local]["cpus"] for node, local in slots]
    return {
        "mode": chosen["mode"],
        "cpus": cpus,
        "warnings": chosen["warnings"],
        "sharing_planned": [n["sharing"] for n in chosen["nodes"]],
    }


# OpenMP's placement variables: the user's own when set (recorded as theirs), else pxq's.
# OMP_NUM_THREADS always comes from the layout's T.
OMP_DEFAULTS = {"OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}


def omp_env(threads: int) -> dict[str, str]:
    env = {"OMP_NUM_THREADS": str(threads)}
    for key, default in OMP_DEFAULTS.items():
        env[key] = os.environ.get(key, "").strip() or default
    return env


def oversubscribed_omp_env(threads: int) -> dict[str, str]:
    """OpenMP's waiting on oversubscribed cores: passive, unless the user set a policy. A thread
    that spins at a barrier holds a core another rank needs: a class S CG hybrid at 2 ranks x 2
    threads on 2 cores took 8-11 s spinning (libgomp's default) and 0.4 s passive."""
    if threads < 2 or os.environ.get("OMP_WAIT_POLICY", "").strip():
        return {}
    return {"OMP_WAIT_POLICY": "passive"}


def omp_record(env: dict[str, str]) -> dict[str, object]:
    """The record's account of the OpenMP variables: the values used and whose they were (the
    wait policy only where one was set: pxq's passive one on oversubscribed cores, or the user's)."""
    out: dict[str, object] = {key: env[key] for key in ("OMP_NUM_THREADS", *OMP_DEFAULTS)}
    theirs = [key for key in (*OMP_DEFAULTS, "OMP_WAIT_POLICY") if os.environ.get(key, "").strip()]
    policy = env.get("OMP_WAIT_POLICY") or os.environ.get("OMP_WAIT_POLICY", "").strip()
    if policy:
        out["OMP_WAIT_POLICY"] = policy
    out["from_environment"] = theirs
    user_threads = os.environ.get("OMP_NUM_THREADS", "").strip()
    if user_threads and user_threads != env["OMP_NUM_THREADS"]:
        out["replaced"] = {"OMP_NUM_THREADS": user_threads}  # the layout's T wins
    return out


def export_flags(env: dict[str, str]) -> list[str]:
    flags: list[str] = []
    for key in env:
        flags += ["-x", key]
    return flags


# Oversubscribed ranks must give up their core while they wait: each virtual node has as many
# slots as ranks, so Open MPI does not know the machine is oversubscribed and its ranks would
# busy-poll (a class S CG on 4x4 took 85 s instead of under a second on 2 cores).
YIELD = ("--mca", "mpi_yield_when_idle", "1")


def is_oversubscribed(req: LaunchRequest, here: bool, emulated: bool) -> bool:
    """Whether the run oversubscribes the cores; InputError where cores or placement forbid it.
    HERE: the launcher runs the ranks on this machine (its plans_cores trait); EMULATED: on a
    cluster of this machine, whose nodes' cores the request holds."""
    layout = req.layout
    if emulated and req.node_cpus is not None:
        oversubscribed = _cluster_check(req)
    else:
        if here and layout.cores > req.cores and not req.oversubscribe:
            raise _more_than_the_machine(req)
        oversubscribed = req.oversubscribe and (not here or layout.cores > req.cores)
    if req.placement and oversubscribed:
        raise InputError(
            f"--placement {req.placement} gives every worker a core of its own, but layout {layout} "
            f"needs {layout.cores} cores: drop --oversubscribe or --placement"
        )
    if req.placement_cpus and req.placement != "custom":
        raise InputError("--cores goes with --placement custom")
    return oversubscribed


def packed_unless_placed(req: LaunchRequest) -> LaunchRequest:
    """The request with packed placement when it names none (pxq's default cores)."""
    return req if req.placement else dataclasses.replace(req, placement="packed")


INLINE_DRIVER_INFO = 16 << 10  # bytes of the driver's JSON given as one argument; beyond, a file


def driver_info_args(text: str, workdir: Path) -> list[str]:
    """What hands the app the driver's JSON: one argument while it is small; beyond
    INLINE_DRIVER_INFO (a node list of thousands of hosts, a rank order of thousands of ranks)
    a file in the run's own folder, which rank 0 reads as it writes its record there, so no
    launch meets the kernel's limit on one argument (128 KiB) or on them all."""
    if len(text.encode("utf-8")) <= INLINE_DRIVER_INFO:
        return ["--driver-info", text]
    path = workdir / "driver-info.json"
    if workdir.is_dir():  # a plan checked before any run (no folder yet) writes nothing
        path.write_text(text, encoding="utf-8")
    return ["--driver-info-file", str(path)]
