"""Launch commands: one machine (with virtual nodes when p > 1), a hostfile, or Slurm.

Only builds commands and environments; running them is runner.py's job.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from pxq import escape
from pxq.layout import InputError, Layout
from pxq.paths import AGENT, BIND_WRAPPER, binary, build_dir, build_hint

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
    rank_order: list[int] | None = None  # the ranks slot by slot (pxq.placement); None: alloc decides
    mpi: str = "open-mpi"  # the MPI pxq was built with (mpi_flavour()): open-mpi or mpich


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

    @property
    def passes_environment(self) -> bool:
        """Whether the launcher hands the whole environment to the ranks (srun, Hydra), or
        needs each variable named (Open MPI's mpirun -x)."""
        return self.launcher == "slurm" or self.mpi == "mpich"


MPI_NAMES = {"open-mpi": "Open MPI", "mpich": "MPICH"}
# The launchers tried, in order, for the MPI pxq was built with: Debian names each MPI's own
# (mpirun.openmpi, mpiexec.mpich) beside the alternatives' mpirun, which may be the other MPI's.
MPIRUN_NAMES = {
    "open-mpi": ("mpirun", "mpirun.openmpi", "mpiexec.openmpi"),
    "mpich": ("mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich", "mpiexec", "mpirun"),
}


@functools.lru_cache(maxsize=8)
def launcher_flavour(path: str) -> str:
    """The MPI a launcher belongs to, from its --version: open-mpi, mpich (Hydra) or unknown."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = out.stdout + out.stderr
    if "Open MPI" in text or "OpenRTE" in text:
        return "open-mpi"
    return "mpich" if "HYDRA" in text else "unknown"


def find_mpirun(flavour: str | None = None) -> str:
    """PXQ_MPIRUN, else the launcher of the MPI pxq was built with (Open MPI's mpirun, MPICH's
    mpiexec); a clear error when there is none or PXQ_MPIRUN belongs to the other MPI."""
    flavour = flavour or mpi_flavour()
    explicit = os.environ.get("PXQ_MPIRUN")
    if explicit:
        path = shutil.which(explicit)
        if path is None:
            raise InputError(f"PXQ_MPIRUN={explicit} is not an executable: point it at your MPI's mpirun")
        found = launcher_flavour(path)
        if found == "unknown":
            raise InputError(
                f"PXQ_MPIRUN={explicit}: `{explicit} --version` names no MPI launcher (Open MPI's mpirun or "
                "MPICH's mpiexec): point PXQ_MPIRUN at your MPI's launcher, or unset it"
            )
        if flavour in MPI_NAMES and found in MPI_NAMES and found != flavour:
            raise InputError(
                f"PXQ_MPIRUN={explicit} is {MPI_NAMES[found]}'s launcher but pxq in {build_dir()} was built with "
                f"{MPI_NAMES[flavour]}: point PXQ_MPIRUN at {MPI_NAMES[flavour]}'s, or PXQ_BUILD_DIR at a "
                f"build with {MPI_NAMES[found]}"
            )
        return explicit
    for name in MPIRUN_NAMES.get(flavour, ("mpirun",)):
        path = shutil.which(name)
        if path and (flavour not in MPI_NAMES or launcher_flavour(path) == flavour):
            return path
    if flavour == "mpich":
        raise InputError(
            f"pxq in {build_dir()} was built with MPICH but MPICH's mpiexec is not on PATH: install it "
            "(apt-get install mpich), `module load` it, or set PXQ_MPIRUN=/path/to/mpiexec"
        )
    raise InputError(
        "mpirun not found: install Open MPI (apt-get install openmpi-bin), "
        "`module load` your MPI, or set PXQ_MPIRUN=/path/to/mpirun"
    )


def choose_launcher(req: LaunchRequest) -> str:
    if req.launcher:
        return req.launcher
    if req.hostfile:
        return "hostfile"
    if os.environ.get("SLURM_JOB_ID"):
        return "slurm"
    return "virtual" if req.layout.nodes > 1 else "local"


def rank_slots(layout: Layout, alloc: str, order: list[int] | None = None) -> list[tuple[int, int]]:
    """For each rank: (node, rank on the node). Block: ranks 0..q-1 on node 0; cyclic: rank i
    on node i mod p; a rank order: order[s] sits in slot s, slot s on node s // q."""
    p, q = layout.nodes, layout.ranks_per_node
    if order is not None:
        slot = {rank: s for s, rank in enumerate(order)}
        return [divmod(slot[r], q) for r in range(layout.ranks)]
    return [(r // q, r % q) if alloc == "block" else (r % p, r // p) for r in range(layout.ranks)]


def rank_cores(layout: Layout, alloc: str, cores: int, order: list[int] | None = None) -> list[tuple[int, list[int]]]:
    """For each rank: (node, cores). Virtual nodes get disjoint core sets (wrapping only when
    oversubscribed)."""
    q, t = layout.ranks_per_node, layout.threads
    return [
        (node, [((node * q + local) * t + k) % cores for k in range(t)])
        for node, local in rank_slots(layout, alloc, order)
    ]


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


def _rankfile(workdir: Path, layout: Layout, req: LaunchRequest, chosen: dict | None, host) -> dict[str, str]:
    """An Open MPI rankfile: every rank on its node's host, on the cores placement chose (or,
    without a placement, disjoint cores per virtual node)."""
    lines = []
    for rank, ((node, local), (_, cores)) in enumerate(
        zip(rank_slots(layout, req.alloc, req.rank_order), rank_cores(layout, req.alloc, req.cores, req.rank_order))
    ):
        if chosen is not None:
            cores = chosen["nodes"][node]["ranks"][local]["cores"]
        lines.append(f"rank {rank}={host(node)} slot={','.join(str(c) for c in cores)}\n")
    return {str(workdir / "rankfile"): "".join(lines)}


def _placement_record(req: LaunchRequest, chosen: dict) -> dict:
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


def _omp_env(threads: int) -> dict[str, str]:
    env = {"OMP_NUM_THREADS": str(threads)}
    for key, default in OMP_DEFAULTS.items():
        env[key] = os.environ.get(key, "").strip() or default
    return env


def omp_record(env: dict[str, str]) -> dict[str, object]:
    """The record's account of the OpenMP variables: the values used and whose they were."""
    out: dict[str, object] = {key: env[key] for key in ("OMP_NUM_THREADS", *OMP_DEFAULTS)}
    out["from_environment"] = [key for key in OMP_DEFAULTS if os.environ.get(key, "").strip()]
    user_threads = os.environ.get("OMP_NUM_THREADS", "").strip()
    if user_threads and user_threads != env["OMP_NUM_THREADS"]:
        out["replaced"] = {"OMP_NUM_THREADS": user_threads}  # the layout's T wins
    return out


def _export_flags(env: dict[str, str]) -> list[str]:
    flags: list[str] = []
    for key in env:
        flags += ["-x", key]
    return flags


# Oversubscribed ranks must give up their core while they wait: each virtual node has as many
# slots as ranks, so Open MPI does not know the machine is oversubscribed and its ranks would
# busy-poll (a class S CG on 4x4 took 85 s instead of under a second on 2 cores).
YIELD = ("--mca", "mpi_yield_when_idle", "1")


def _oversubscribed(req: LaunchRequest, launcher: str) -> bool:
    """Whether the run oversubscribes the cores; InputError where cores or placement forbid it."""
    layout = req.layout
    if launcher in ("local", "virtual"):
        if layout.cores > req.cores and not req.oversubscribe:
            raise InputError(
                f"layout {layout} needs {layout.cores} cores but this machine has {req.cores}: "
                "use a smaller layout, or --oversubscribe (timings then mean little)"
            )
    oversubscribed = req.oversubscribe and (launcher not in ("local", "virtual") or layout.cores > req.cores)
    if req.placement and oversubscribed:
        raise InputError(
            f"--placement {req.placement} gives every worker a core of its own, but layout {layout} "
            f"needs {layout.cores} cores: drop --oversubscribe or --placement"
        )
    if req.placement_cpus and req.placement != "custom":
        raise InputError("--cores goes with --placement custom")
    return oversubscribed


def _check_custom_on_real_nodes(req: LaunchRequest) -> list[int]:
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


def _real_nodes_argv(req: LaunchRequest, launcher: str, layout: Layout, oversubscribed: bool) -> list[str]:
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
        _check_custom_on_real_nodes(req)
        argv += ["--cpu-list", ",".join(str(c) for c in req.placement_cpus or []), "--bind-to", "cpu-list:ordered"]
    else:
        argv += ["--map-by", mapping, "--bind-to", "core"]
    argv += ["--rank-by", "node" if req.alloc == "cyclic" else "slot"]
    if oversubscribed:
        argv += ["--oversubscribe"]
    return argv


def find_srun() -> str:
    found = shutil.which("srun")
    if found is None:
        raise InputError("srun not found inside a Slurm allocation: load your site's Slurm module, or use --launcher")
    return found


def slurm_nodes() -> list[str]:
    """The allocation's node names in order (scontrol expands SLURM_JOB_NODELIST)."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not nodelist:
        raise InputError("--launcher slurm outside an allocation: start pxq inside salloc or sbatch")
    return list(_hostnames(nodelist))


@functools.lru_cache(maxsize=8)
def _hostnames(nodelist: str) -> tuple[str, ...]:
    """scontrol's expansion of a node list, asked once per list (a sweep plans many runs)."""
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        raise InputError("scontrol not found: load your site's Slurm module")
    out = subprocess.run([scontrol, "show", "hostnames", nodelist], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise InputError(f"scontrol show hostnames {nodelist} failed: {out.stderr.strip()}")
    return tuple(out.stdout.split())


def slurm_job() -> dict[str, object]:
    """The allocation a run used, for the record: the job, its nodes and what each offers."""
    env = os.environ
    job: dict[str, object] = {"job_id": env.get("SLURM_JOB_ID", ""), "nodes": slurm_nodes()}
    for key, name in (
        ("SLURM_JOB_PARTITION", "partition"),
        ("SLURM_JOB_CPUS_PER_NODE", "cpus_per_node"),
        ("SLURM_CLUSTER_NAME", "cluster"),
        ("SLURM_MPI_TYPE", "mpi"),
    ):
        if env.get(key):
            job[name] = env[key]
    return job


def _slurm_bind(req: LaunchRequest) -> list[str]:
    """srun's binding and distribution for the placement: packed keeps a node's ranks on
    neighbouring cores (block:block), spread deals them out over the sockets (block:cyclic),
    custom binds rank i of a node to the i-th core given; cyclic allocation deals ranks over
    the nodes."""
    over_nodes = "cyclic" if req.alloc == "cyclic" else "block"
    if req.placement == "custom":
        cpus = _check_custom_on_real_nodes(req)
        return [f"--cpu-bind=map_cpu:{','.join(str(c) for c in cpus)}", f"--distribution={over_nodes}:block"]
    within = "cyclic" if req.placement == "spread" else "block"
    return ["--cpu-bind=cores", f"--distribution={over_nodes}:{within}"]


def _slurm_plan(req: LaunchRequest, workdir: Path, oversubscribed: bool) -> tuple[list[str], dict[str, str], dict]:
    """srun inside the allocation: p nodes, q tasks per node, T cpus per task, bound to cores;
    a rank order through SLURM_HOSTFILE (line i: the node of rank i)."""
    layout = req.layout
    nodes = slurm_nodes()
    if layout.nodes > len(nodes):
        raise InputError(
            f"layout {layout} needs {layout.nodes} nodes but the allocation has {len(nodes)} "
            f"({', '.join(nodes)}): salloc -N {layout.nodes} --ntasks-per-node {layout.ranks_per_node} "
            f"--cpus-per-task {layout.threads}"
        )
    argv = [find_srun(), f"--nodes={layout.nodes}", f"--ntasks={layout.ranks}"]
    argv += [f"--ntasks-per-node={layout.ranks_per_node}", f"--cpus-per-task={layout.threads}"]
    env: dict[str, str] = {}
    files: dict[str, str] = {}
    if req.rank_order is not None:
        if req.placement:
            raise InputError(RANK_ORDER_NOT_PLACEMENT)
        hosts = "".join(f"{nodes[node]}\n" for node, _ in rank_slots(layout, req.alloc, req.rank_order))
        files[str(workdir / "slurm-hosts")] = hosts
        env["SLURM_HOSTFILE"] = str(workdir / "slurm-hosts")
        argv += ["--distribution=arbitrary", "--cpu-bind=cores"]
    else:
        argv += _slurm_bind(req)
    if oversubscribed:
        argv.append("--overcommit")
    if not os.environ.get("SLURM_MPI_TYPE"):
        argv.append(f"--mpi={srun_mpi()}")
    # A rank that dies ends the step (as mpirun does), and the output is not buffered per task.
    argv += ["--kill-on-bad-exit=1", "--unbuffered"]
    return argv, env, files


def srun_mpi() -> str:
    """srun's --mpi for the MPI pxq was built with: Open MPI starts under PMIx, MPICH under PMI-2."""
    return "pmi2" if mpi_flavour() == "mpich" else "pmix"


@functools.lru_cache(maxsize=4)
def _mpi_library(exe: Path) -> str:
    from pxq import envinfo  # envinfo imports this module

    return str(envinfo.machine().get("mpi_library", ""))


def mpi_flavour() -> str:
    """The MPI this build of pxq uses, as pxq-envinfo reports it: open-mpi, mpich or unknown."""
    lib = _mpi_library(binary("envinfo")).lower()
    if "open mpi" in lib:
        return "open-mpi"
    return "mpich" if "mpich" in lib else "unknown"


_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
_HOST_OPTION = re.compile(r"(slots|max_slots|max-slots)=([0-9]{1,6})")
MAX_HOSTFILE = 1 << 20  # bytes


def hostfile_hosts(path: Path) -> list[str]:
    """The hosts an MPI hostfile names, in order, once each, read strictly: UTF-8, one host per
    line (Open MPI's `host slots=N max_slots=N` or MPICH's `host:N`), # comments and blank
    lines skipped. Anything else is refused naming the line and the fix (Open MPI would stop
    with a banner naming neither)."""
    fix = "write one host per line, e.g. `node1 slots=2` (Open MPI) or `node1:2` (MPICH)"
    if not path.is_file():
        raise InputError(f"hostfile '{path}' not found: give an existing file")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"hostfile '{path}': cannot read it ({e.strerror})") from None
    if len(raw) > MAX_HOSTFILE:
        raise InputError(f"hostfile '{path}': {len(raw)} bytes is not a hostfile (at most 1 MiB): {fix}")
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


def _real_nodes_order(req: LaunchRequest, workdir: Path) -> dict[str, str]:
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


RANK_ORDER_NEEDS_RANKFILE = (
    "--rank-order on virtual or real nodes needs Open MPI's rankfile: MPICH's Hydra puts ranks on nodes by --alloc "
    "block or cyclic only. Drop --rank-order, or use a build of pxq with Open MPI"
)


def _virtual_agent(workdir: Path, links: dict[str, str]) -> str:
    """The virtual-node agent's path, through a link without white space when it has some
    (Open MPI and Hydra split the agent at white space)."""
    agent = str(AGENT)
    if any(c.isspace() for c in agent):
        agent = str(workdir / "vnode-agent")
        links[agent] = str(AGENT)
    return agent


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
        return ["-bind-to", "user:" + ",".join(str(c) for c in _check_custom_on_real_nodes(req))]
    if req.placement == "spread":
        return ["-bind-to", f"core:{t}", "-map-by", "socket"]
    return ["-bind-to", f"core:{t}"]


def _hydra_plan(
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
        argv += ["-launcher", "ssh", "-launcher-exec", _virtual_agent(workdir, links)]
    # pxq plans every rank's cores on this machine where Hydra cannot: a placement, a rank
    # order, and virtual nodes (Hydra would bind the ranks of every node alike).
    planned = launcher == "virtual" or req.placement is not None or req.rank_order is not None
    chosen = None
    if launcher in ("local", "virtual") and not oversubscribed and planned:
        chosen = choose_cores(_packed_unless_placed(req), virtual=launcher == "virtual")
        slots = rank_slots(layout, req.alloc, req.rank_order)
        cpus = [chosen["nodes"][node]["ranks"][local]["cpus"] for node, local in slots]
        env["PXQ_BIND_CPUS"] = ";".join(",".join(str(c) for c in rank) for rank in cpus)
    placement = _placement_record(req, chosen) if chosen is not None and req.placement else None
    argv += _hydra_binding(req, launcher, chosen, oversubscribed)
    return LaunchPlan(launcher, argv, env, {}, links, oversubscribed, placement, mpi="mpich")


def _packed_unless_placed(req: LaunchRequest) -> LaunchRequest:
    """The request with packed placement when it names none (pxq's default cores)."""
    return req if req.placement else dataclasses.replace(req, placement="packed")


def plan_launch(req: LaunchRequest, mpirun: str, workdir: Path) -> LaunchPlan:
    """The mpirun command line (without the program) and environment for a layout."""
    layout = req.layout
    launcher = choose_launcher(req)
    env = _omp_env(layout.threads)
    env["PMIX_MCA_gds"] = "hash"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

    oversubscribed = _oversubscribed(req, launcher)
    check_rank_order(req)
    if req.mpi == "mpich" and launcher != "slurm":
        return _placement_note(req, _hydra_plan(req, mpirun, workdir, launcher, oversubscribed, env))
    argv = [mpirun, "-np", str(layout.ranks)]
    files: dict[str, str] = {}
    links: dict[str, str] = {}
    placement, chosen = None, None
    if req.placement and launcher in ("local", "virtual"):
        chosen = choose_cores(req, virtual=launcher == "virtual")
        placement = _placement_record(req, chosen)
    if launcher == "local":
        if layout.nodes != 1:
            raise InputError("the local launcher runs one node: use the virtual launcher for p > 1")
        if placement is not None or req.rank_order is not None:
            host = socket.gethostname()
            files.update(_rankfile(workdir, layout, req, chosen, lambda node: host))
            argv += ["--rankfile", str(workdir / "rankfile")]
            if oversubscribed:
                argv += ["--oversubscribe", "--bind-to", "core:overload-allowed", *YIELD]
        elif oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "none", *YIELD]
        else:
            argv += ["--map-by", f"slot:PE={layout.threads}", "--bind-to", "core"]
    elif launcher == "virtual":
        hosts = ",".join(f"n{i}:{layout.ranks_per_node}" for i in range(layout.nodes))
        files.update(
            _rankfile(workdir, layout, req, chosen if placement is not None else None, lambda node: f"n{node}")
        )
        agent = _virtual_agent(workdir, links)
        argv += ["--host", hosts, "--mca", "plm_rsh_agent", agent, "--rankfile", str(workdir / "rankfile")]
        if oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "core:overload-allowed", *YIELD]
    elif launcher == "slurm":
        argv, slurm_env, slurm_files = _slurm_plan(req, workdir, oversubscribed)
        env.update(slurm_env)
        files.update(slurm_files)
    elif req.rank_order is not None:
        files.update(_real_nodes_order(req, workdir))
        argv += ["--hostfile", str(req.hostfile), "--rankfile", str(workdir / "rankfile")]
        if oversubscribed:
            argv += ["--oversubscribe"]
    else:  # a hostfile's real nodes
        argv += _real_nodes_argv(req, launcher, layout, oversubscribed)
    if launcher != "slurm":
        argv += _export_flags(env)  # srun passes the whole environment on
    return _placement_note(req, LaunchPlan(launcher, argv, env, files, links, oversubscribed, placement))


def _placement_note(req: LaunchRequest, plan: LaunchPlan) -> LaunchPlan:
    """A placement pxq did not plan core by core (real nodes) is left to the launcher's binding."""
    if req.placement and plan.placement is None:
        who = {"slurm": "srun"}.get(plan.launcher, MPI_NAMES.get(plan.mpi, "the launcher"))
        plan.placement = {
            "mode": req.placement,
            "cpus": None,
            "warnings": [
                f"{req.placement} on real nodes is left to {who}'s binding: the record's placement shows the cores used"
            ],
        }
    return plan


# Open MPI's shared-memory segments (the vader transport's, MPI-3 windows') go to /dev/shm by
# default, named by job; ranks killed before mpirun cleans up leave them behind.
SHM_DIRS = ("OMPI_MCA_btl_vader_backing_directory", "OMPI_MCA_osc_sm_backing_directory")


def stage(plan: LaunchPlan, folder: Path, shm: Path | None = None) -> dict[str, str]:
    """Writes the plan's files and links (a link already there is replaced) and returns the
    environment of a run in `folder`: the plan's, its virtual nodes' folders and Open MPI's
    session folder inside it, and Open MPI's shared-memory segments in `shm` (a folder of the
    run's own on this machine's memory-backed file system) when every rank runs here, so
    nothing outlives the run. A user's own backing folder is kept on one node; virtual nodes
    need one each."""
    for path, content in plan.files.items():
        Path(path).write_text(content)
    for path, target in plan.links.items():
        Path(path).unlink(missing_ok=True)
        Path(path).symlink_to(target)
    env = dict(os.environ)
    env.update(plan.env)
    env["PXQ_VNODE_DIR"] = str(folder / "vnodes")
    env["OMPI_MCA_orte_tmpdir_base"] = str(folder / "session")
    if shm is not None and plan.mpi == "open-mpi" and plan.launcher == "local":
        for key in SHM_DIRS:
            env.setdefault(key, str(shm))
    if shm is not None and plan.launcher == "virtual":
        env["PXQ_VNODE_SHM"] = str(shm)  # the agent gives each virtual node a folder in it
    return env
