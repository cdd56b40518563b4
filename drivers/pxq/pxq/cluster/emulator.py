"""A cluster on this machine: p nodes that are real network hosts.

Each node is a network namespace with one link (a veth pair) to a private bridge, shaped in
both directions with `tbf` to the link profile's bandwidth, so the ranks of a node share their
node's link; a host name of its own and its own /tmp and /dev/shm (a UTS and a mount
namespace, held by one idle process per node); the file system pxq and its results live on is
shared. The bridge sits in a namespace of its own (the fabric), and a head namespace on the
same bridge runs mpirun, as a cluster's login node: nothing of the host's (its interfaces,
routes, firewall, mounts) is touched, and the addresses (10.213.0.0/24) exist only inside
pxq's namespaces.

Everything a cluster makes is named `pxqc-NAME-...` and recorded in its state folder
(/run/pxq-cluster/NAME, or $PXQ_CLUSTER_DIR/NAME): `remove()` finds it all by that prefix,
so `down`, a failed `up` and the next `up` after a SIGKILL leave nothing behind. Latency is the
host's: the kernel's delay qdisc (netem) is used where it exists, and records say when it did not."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pxq.cluster import cpusets
from pxq.cluster.links import Link
from pxq.cluster.nodes import ClusterError, holder, state_root
from pxq.core.errors import InputError

PREFIX = "pxqc-"
SUBNET = "10.213.0"
HEAD_ADDRESS = f"{SUBNET}.254"  # node k is SUBNET.(k+1)
DEFAULT_NAME = "pxq"
OFF = "off"  # PXQ_CLUSTER=off: runs use no cluster
MTU = 9000  # jumbo frames, as cluster Ethernet runs them
MAX_NODES = 64
# The token bucket holds a quarter millisecond of the rate, up to 192 KiB: shallower buckets
# fell short of the rate at 2.5 Gbit/s (-16% at 0.1 ms), deeper ones let a 1 MiB message run
# ahead of it at 10 Gbit/s (+22% at 0.25 ms); `pxq cluster bench` measures the result.
BURST_S = 2.5e-4
BURST_MAX = 192 * 1024
TOOLS = (("ip", "iproute2"), ("tc", "iproute2"), ("nsenter", "util-linux"), ("unshare", "util-linux"))


def check_name(name: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9]{0,7}", name) or name == OFF:
        raise InputError(
            f"cluster name '{name}': use 1 to 8 lower-case letters and digits, starting with a letter "
            f"('{OFF}' means no cluster)"
        )
    return name


def netns(name: str, part: str) -> str:
    return f"{PREFIX}{name}-{part}"


@dataclass
class Cluster:
    name: str
    nodes: int
    link: dict  # Link.record()
    mtu: int
    holders: list[int]  # the idle process holding each node's host name and mounts
    cores: int  # this machine's usable cores, which the nodes share
    setup_s: float
    latency_emulated: bool
    created: str = ""
    addresses: list[str] = field(default_factory=list)
    node_cpus: list[list[int]] = field(default_factory=list)  # each node's cores (OS numbering)
    cpuset: str = ""  # "v1" or "v2": the cgroup hierarchy of the nodes' cpusets; "" not confined
    cpuset_procs: list[str] = field(default_factory=list)  # each node's cpuset's cgroup.procs
    owner: str = ""  # who brought it up (owner_here()); runs of others use it only when they name it

    @property
    def cores_per_node(self) -> int:
        return len(self.node_cpus[0]) if self.node_cpus else self.cores

    def nodes_per_core(self) -> int:
        """The most nodes sharing one core (1: every node's cores are its own)."""
        return max(cpusets.sharing(self.node_cpus).values(), default=self.nodes)

    def host(self, node: int) -> str:
        return f"{self.name}-n{node}"

    def record(self) -> dict:
        """What a run record says of the cluster it ran on."""
        return {
            "name": self.name,
            "nodes": self.nodes,
            "link": self.link,
            "mtu": self.mtu,
            "cores": self.cores,
            "cores_per_node": self.cores_per_node,
            "node_cpus": self.node_cpus,
            "nodes_per_core": self.nodes_per_core(),
            "emulated": [
                "a network namespace, host name, IPC namespace, /tmp and /dev/shm per node",
                "one link per node to a bridge, shaped in both directions"
                + ("" if self.link.get("bytes_per_s") else " (here: unshaped)"),
            ]
            + ([f"the cores: a cpuset of {self.cores_per_node} per node (cgroup {self.cpuset})"] if self.cpuset else [])
            + (["link latency (netem)"] if self.latency_emulated else []),
            "not_emulated": [self.cores_note(), "memory bandwidth and caches: the nodes share this machine's"]
            + ([] if self.latency_emulated else ["link latency: the host's (this kernel has no netem)"])
            + ([self.burst_note()] if self.link.get("bytes_per_s") else []),
        }

    def burst_note(self) -> str:
        """The token bucket's burst: after an idle moment up to that many bytes leave at the
        host's speed, so a timed window of a few bursts reads above the link's rate."""
        burst = _burst(float(self.link["bytes_per_s"]), self.mtu)
        return (
            f"the link's burst: up to {burst // 1024} KiB leave at the host's speed after an idle moment, so a "
            f"timed window of W bytes can read up to W / (W - {burst // 1024} KiB) times the rate (a window of "
            f"{10 * burst // 1024} KiB or more: within 11%)"
        )

    def cores_note(self) -> str:
        """What the nodes' cores are not: their own where nodes share them, or confined at all."""
        if not self.cpuset:
            return "the cores: no cpuset controller here, every node runs on all of this machine's cores"
        shared = self.nodes_per_core()
        if shared > 1:
            return f"cores of their own: this machine has {self.cores}, so up to {shared} nodes share each core"
        return "cores of separate machines: each node's cpuset holds cores of this one"


def requirements() -> None:
    """Exit-2 errors naming what is missing and what to do."""
    if os.geteuid() != 0:
        raise InputError(
            "a cluster on this machine needs root (network namespaces, links and traffic shaping): "
            "run it as root, e.g. sudo ./pxq cluster up"
        )
    for tool, package in TOOLS:
        if shutil.which(tool) is None:
            raise InputError(f"`{tool}` is missing: install {package} (apt-get install {package}), or run ./pxq setup")
    if not os.path.exists("/proc/self/ns/net"):
        raise InputError("this kernel has no network namespaces (CONFIG_NET_NS): a cluster cannot be emulated here")


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ClusterError(f"{what}: `{' '.join(argv)}` failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def _namespaces(name: str | None = None) -> list[str]:
    """pxq's namespaces (of one cluster, or of every cluster)."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    names = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    prefix = PREFIX if name is None else f"{PREFIX}{name}-"
    return sorted(n for n in names if n.startswith(prefix))


def _pids_in(ns: str) -> list[int]:
    done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def _state_file(name: str) -> Path:
    return state_root() / name / "cluster.json"


def owner_here() -> str:
    """Who is running pxq: the user behind sudo where there is one, else the login name, with
    the user id ("alice (uid 0)"): a cluster belongs to whoever brought it up."""
    import pwd

    uid = os.getuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return f"{os.environ.get('SUDO_USER') or name} (uid {uid})"


def load(name: str = DEFAULT_NAME) -> Cluster | None:
    """The cluster NAME if it is up (its state file and its namespaces both there)."""
    path = _state_file(name)
    try:
        data = json.loads(path.read_text())
        cluster = Cluster(**data)
    except (OSError, ValueError, TypeError):
        return None
    if not os.path.exists(f"/run/netns/{netns(name, 'fab')}"):
        return None
    return cluster


def leftovers(name: str | None = None) -> dict[str, list]:
    """What pxq made and has not removed: namespaces, the nodes' cpusets, and the processes in
    either."""
    spaces = _namespaces(name)
    groups = cpusets.groups(PREFIX if name is None else f"{PREFIX}{name}-")
    pids = {p for ns in spaces for p in _pids_in(ns)} | {p for g in groups for p in cpusets.members(g)}
    return {"namespaces": spaces, "cgroups": [g.name for g in groups], "processes": sorted(pids)}


def _stop(pids: list[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in alive):
            time.sleep(0.05)
        pids = [p for p in alive if Path(f"/proc/{p}").exists()]


def remove(name: str) -> dict[str, list]:
    """Stops every process in the cluster's namespaces, deletes the namespaces (their links and
    qdiscs go with them) and the state folder. Returns what it removed."""
    found = leftovers(name)
    state = _state_file(name)
    holders: list[int] = []
    try:
        holders = [int(p) for p in json.loads(state.read_text()).get("holders", [])]
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    _stop(sorted(set(found["processes"]) | {p for p in holders if _is_holder(p)}))
    for ns in found["namespaces"]:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
    cpusets.remove(f"{PREFIX}{name}-")
    shutil.rmtree(state.parent, ignore_errors=True)
    for hidden in Path("/dev/shm").glob(f".pxqc-{name}-n*-tmp"):  # a holder that failed half-way
        with contextlib.suppress(OSError):
            hidden.rmdir()
    _release_netns_mount()
    return found


# `ip netns add` mounts /run/netns on itself the first time it runs on a machine. When a
# cluster's `up` was that first time, the marker says so, and the last cluster's removal undoes it.
NETNS_MOUNT = Path("/run/netns")


def _marker() -> Path:
    return state_root() / ".made-run-netns"


def _is_mountpoint(path: Path) -> bool:
    return any(line.split()[4] == str(path) for line in Path("/proc/self/mountinfo").read_text().splitlines())


def _release_netns_mount() -> None:
    if not _marker().exists() or (NETNS_MOUNT.is_dir() and any(NETNS_MOUNT.iterdir())):
        return
    while _is_mountpoint(NETNS_MOUNT):
        if subprocess.run(["umount", str(NETNS_MOUNT)], capture_output=True, timeout=30).returncode != 0:
            return
    with contextlib.suppress(OSError):
        NETNS_MOUNT.rmdir()
    _marker().unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        state_root().rmdir()


def _is_holder(pid: int) -> bool:
    try:
        return b"PXQ_CLUSTER_HOLDER=" in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def _burst(bytes_per_s: float, mtu: int) -> int:
    """The token bucket's depth: BURST_S of the rate, at most BURST_MAX, at least two frames."""
    return int(max(min(bytes_per_s * BURST_S, BURST_MAX), 2 * (mtu + 100)))


def _shape(ns: str, dev: str, link: Link, mtu: int) -> bool:
    """tbf at the link's rate on dev's egress (netem first for the latency where the kernel has
    it). Returns whether the latency was added."""
    assert link.bytes_per_s is not None
    rate = f"{int(link.bytes_per_s * 8)}bit"
    burst = str(_burst(link.bytes_per_s, mtu))
    # No peakrate: pacing the burst at the rate (a second bucket one frame deep) cut large
    # messages to 80% of gige here; the burst is said in every record instead (Cluster.record).
    tbf = ["tbf", "rate", rate, "burst", burst, "latency", "50ms"]
    if link.latency_s:
        netem = ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "netem"]
        delay = ["delay", f"{link.latency_s * 1e6:.3f}us"]
        if subprocess.run(netem + delay, capture_output=True, timeout=30).returncode == 0:
            _run(
                ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *tbf],
                f"shaping {dev} in {ns}",
            )
            return True
    _run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", *tbf], f"shaping {dev} in {ns}")
    return False


def up(
    name: str, nodes: int, link: Link, mtu: int = MTU, cores: int = 1, per_node: int | None = None, progress=None
) -> Cluster:
    """Builds the cluster, each node on `per_node` of the machine's `cores` (default: its share,
    at least one). Any earlier cluster of the same name is removed first; on any failure or
    interrupt, everything made so far is removed before the exception goes on."""
    requirements()
    check_name(name)
    if not 2 <= nodes <= MAX_NODES:
        raise InputError(f"--nodes {nodes}: a cluster has 2 to {MAX_NODES} nodes")
    cpus = cpusets.machine_cpus()[: max(1, cores)]
    per_node = max(1, len(cpus) // nodes) if per_node is None else per_node
    if not 1 <= per_node <= len(cpus):
        raise InputError(f"--cores-per-node {per_node}: give 1 to {len(cpus)}, the cores this machine has")
    node_cpus = cpusets.node_cpus(nodes, per_node, cpus)
    remove(name)
    start = time.monotonic()
    fab = netns(name, "fab")
    try:
        state = _state_file(name)
        state.parent.mkdir(parents=True, exist_ok=True)
        if not _is_mountpoint(NETNS_MOUNT):
            _marker().touch()
        _run(["ip", "netns", "add", fab], "the fabric namespace")
        _run(["ip", "-n", fab, "link", "add", "br0", "type", "bridge"], "the bridge")
        _run(["ip", "-n", fab, "link", "set", "br0", "up"], "the bridge")
        try:
            kind, procs = cpusets.make(f"{PREFIX}{name}-", node_cpus)
        except OSError as e:
            raise ClusterError(f"the nodes' cpusets: {e}") from e
        latency = False
        holders, addresses = [], []
        members = [*(f"n{i}" for i in range(nodes)), "head"]
        for k, part in enumerate(members):
            ns = netns(name, part)
            address = HEAD_ADDRESS if part == "head" else f"{SUBNET}.{k + 1}"
            _run(["ip", "netns", "add", ns], f"the namespace of {part}")
            _run(["ip", "-n", ns, "link", "set", "lo", "up"], f"{part}'s loopback")
            # One veth pair: `part` on the bridge's side, eth0 in the node (names are pxq's own words).
            veth = f"ip link add {part} netns {fab} mtu {mtu} type veth peer name eth0 netns {ns} mtu {mtu}"
            _run(veth.split(), f"{part}'s link")
            _run(["ip", "-n", fab, "link", "set", part, "master", "br0", "up"], f"{part}'s link")
            _run(["ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0"], f"{part}'s address")
            _run(["ip", "-n", ns, "link", "set", "eth0", "up"], f"{part}'s link")
            if part != "head":
                if link.bytes_per_s is not None:
                    latency = _shape(ns, "eth0", link, mtu)  # what the node sends
                    _shape(fab, part, link, mtu)  # what it receives
                holders.append(holder(name, k, ns, f"{name}-{part}", procs[k] if procs else None))
                addresses.append(address)
            if progress:
                progress(part)
        cluster = Cluster(
            name=name,
            nodes=nodes,
            link=link.record(),
            mtu=mtu,
            holders=holders,
            cores=cores,
            setup_s=round(time.monotonic() - start, 3),
            latency_emulated=latency,
            created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            addresses=addresses,
            node_cpus=node_cpus,
            cpuset=kind,
            cpuset_procs=procs,
            owner=owner_here(),
        )
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(cluster), indent=1) + "\n")
        tmp.replace(state)
        return cluster
    except BaseException:
        remove(name)
        raise


def enter_node(cluster: Cluster, node: int) -> list[str]:
    """The prefix that runs a command on a node (its cores, network, host name, IPC and mounts)."""
    enter = ["nsenter", "-t", str(cluster.holders[node]), "--net", "--uts", "--ipc", "--mount", "--"]
    if not cluster.cpuset_procs:
        return enter
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', cluster.cpuset_procs[node], *enter]


def enter_head(cluster: Cluster) -> list[str]:
    """The prefix that runs a command on the head (mpirun's place: the bridge, no ranks)."""
    return ["nsenter", f"--net=/run/netns/{netns(cluster.name, 'head')}", "--"]
