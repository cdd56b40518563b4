"""A cluster on this machine (`pxq cluster`), end to end, as root:

- refusals: not root (run as nobody), `ip` missing, bad --nodes/--link/--name/--mtu: exit 2, a
  message naming the fix, nothing made;
- `up`: 4 nodes, each a network namespace with its own host name, /tmp and /dev/shm and one link
  shaped both ways (tbf at the profile's rate on the node's side and on the bridge's side), and
  a cpuset of its own cores which its holder and whatever the launch agent starts there join;
  the host's interfaces, routes and mounts are exactly as before;
- `pxq run` launches on it: distinct host names observed, the record names the cluster and its
  link, each rank runs on its node's cores; a layout needing more cores than a node has is
  refused with the fix;
- a run SIGKILLed (the driver): its processes and its folder are gone; the next `up` of the same
  name first removes a half-built leftover (a namespace and a process of pxq's);
- SIGTERM during `up`: exit 143 and nothing left;
- `down`: no namespace, cpuset, process, state folder or mount of pxq's left, the host as before;
- `--network PROFILE` on a run and on lab 1 (whose other node is then across the link);
- `pxq study allocation cg --network 100mbit`: block and cyclic timed on the cluster at 2x2, the
  time finding judged there (naming the cluster and the cores its ranks share), not left
  untestable; results under /tmp refused (the nodes' /tmp are their own).

Figures (bandwidths against the profiles) belong to `pxq cluster bench`, not to this test.
usage: check_cluster.py  (PYTHONPATH and PXQ_BUILD_DIR as for the other driver checks)"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "mpi")]
from driver_check import fail, records  # noqa: E402

NAME = f"ct{os.getpid() % 100000}"
STATE = Path(os.environ.get("PXQ_CLUSTER_DIR") or "/run/pxq-cluster")


def pxq(*args: str, env: dict | None = None, timeout: float = 600, user: str | None = None):
    argv = [sys.executable, "-m", "pxq", *args]
    if user:
        argv = ["setpriv", "--reuid", user, "--regid", "nogroup", "--clear-groups", *argv]
    e = dict(os.environ if env is None else env, PXQ_CLUSTER=NAME)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e)


def sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout


def host_view(up: bool = False) -> dict:
    """What of the host a cluster must never touch. While one is up, the only mounts it adds are
    `ip netns`'s own (/run/netns and a file per namespace); once it is down, not even those."""
    mounts = [ln.split()[4] for ln in Path("/proc/self/mountinfo").read_text().splitlines()]
    return {
        "links": sorted(line.split(":")[1].strip() for line in sh("ip", "-o", "link").splitlines()),
        "routes": sh("ip", "route"),
        "mounts": [m for m in mounts if not (up and (m == "/run/netns" or m.startswith("/run/netns/pxqc-")))],
        "hostname": sh("hostname").strip(),
    }


def ours() -> dict:
    spaces = [ln.split()[0] for ln in sh("ip", "netns", "list").splitlines() if ln.startswith(f"pxqc-{NAME}-")]
    holders = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"PXQ_CLUSTER_HOLDER={NAME}:".encode() in (entry / "environ").read_bytes():
                holders.append(int(entry.name))
        except OSError:
            pass
    pids = sorted({int(p) for ns in spaces for p in sh("ip", "netns", "pids", ns).split()} | set(holders))
    root = cpuset_root()
    groups = sorted(g.name for g in root.glob(f"pxqc-{NAME}-*")) if root else []
    return {"namespaces": sorted(spaces), "cgroups": groups, "processes": pids, "state": (STATE / NAME).exists()}


def cpuset_root() -> Path | None:
    """Where this machine's cpusets are: the cgroup v2 tree if its root hands cpuset to its
    children, else the v1 cpuset hierarchy's mount."""
    v2 = Path("/sys/fs/cgroup/cgroup.subtree_control")
    if v2.exists() and "cpuset" in v2.read_text().split():
        return v2.parent
    for line in Path("/proc/self/mounts").read_text().splitlines():
        f = line.split()
        if f[2] == "cgroup" and "cpuset" in f[3].split(","):
            return Path(f[1])
    return None


def allowed(pid: int | str) -> list[int]:
    """A process's cores (Cpus_allowed_list, ranges expanded)."""
    text = next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("Cpus_allowed_list"))
    return expand(text.split(":")[1].strip())


def expand(text: str) -> list[int]:
    cpus: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def nothing_left(when: str, before: dict) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(ours().values()):
        time.sleep(0.2)
    left = ours()
    if any(left.values()):
        fail(f"{when}: pxq left {left}")
    if host_view() != before:
        fail(f"{when}: the host changed:\nbefore {before}\nafter  {host_view()}")
    print(f"ok: {when}: nothing of pxq's left, the host as before")


def refused(what: str, out: subprocess.CompletedProcess, needle: str, before: dict) -> None:
    if out.returncode != 2 or needle not in out.stderr or "Traceback" in out.stderr:
        fail(f"{what}: exit {out.returncode}, stderr {out.stderr!r} (wanted exit 2 naming '{needle}')")
    nothing_left(what, before)


def check_refusals(before: dict) -> None:
    refused("not root", pxq("cluster", "up", "--nodes", "2", user="nobody"), "needs root", before)
    no_ip = dict(os.environ, PATH="/nonexistent")
    refused("no ip", pxq("cluster", "up", "--nodes", "2", env=no_ip), "iproute2", before)
    for args, needle in (
        (["--nodes", "1"], "--nodes 1"),
        (["--nodes", "65"], "--nodes 65"),
        (["--link", "1Q"], "link rate '1Q'"),
        (["--link", "1gbps"], "ambiguous"),
        (["--link", "/nonexistent.jsonl"], "no such file"),
        (["--mtu", "100"], "--mtu 100"),
        (["--name", "Bad-Name"], "cluster name 'Bad-Name'"),
    ):
        refused(f"up {' '.join(args)}", pxq("cluster", "up", *args), needle, before)
    out = pxq("run", "ring", "--layout", "2x1", "--launcher", "cluster", "--results", "/tmp/never.jsonl")
    refused("--launcher cluster with none up", out, "no cluster is up", before)


def check_up(before: dict) -> None:
    out = pxq("cluster", "up", "--nodes", "4", "--link", "100mbit")
    if out.returncode != 0:
        fail(f"cluster up: exit {out.returncode}\n{out.stdout}\n{out.stderr}")
    state = json.loads((STATE / NAME / "cluster.json").read_text())
    left = ours()
    want = sorted([f"pxqc-{NAME}-{p}" for p in ("n0", "n1", "n2", "n3", "fab", "head")])
    if left["namespaces"] != want or len(state["holders"]) != 4:
        fail(f"cluster up: namespaces {left['namespaces']}, holders {state['holders']}")
    names, tmps = [], []
    for node, pid in enumerate(state["holders"]):
        enter = ["nsenter", "-t", str(pid), "--net", "--uts", "--mount", "--"]
        names.append(sh(*enter, "hostname").strip())
        sh(*enter, "sh", "-c", f"echo {node} > /tmp/pxq-node && echo {node} > /dev/shm/pxq-node")
        tmps.append(sh(*enter, "sh", "-c", "cat /tmp/pxq-node /dev/shm/pxq-node").split())
        addr = sh(*enter, "ip", "-o", "-4", "addr", "show", "eth0")
        if f"10.213.0.{node + 1}/24" not in addr:
            fail(f"node {node}: address {addr!r}")
        qdisc = sh(*enter, "tc", "qdisc", "show", "dev", "eth0")
        if "tbf" not in qdisc or "rate 100Mbit" not in qdisc:
            fail(f"node {node}'s sending side is not shaped to 100 Mbit/s: {qdisc!r}")
        fab = sh("ip", "netns", "exec", f"pxqc-{NAME}-fab", "tc", "qdisc", "show", "dev", f"n{node}")
        if "tbf" not in fab or "rate 100Mbit" not in fab:
            fail(f"node {node}'s receiving side is not shaped to 100 Mbit/s: {fab!r}")
    if names != [f"{NAME}-n{i}" for i in range(4)]:
        fail(f"host names {names}")
    # An IPC namespace per node: MPICH's UCX then takes each node for another host and talks
    # TCP over its link instead of shared memory across nodes.
    ipc = [os.readlink(f"/proc/{pid}/ns/ipc") for pid in state["holders"]]
    if len(set(ipc)) != 4 or os.readlink("/proc/self/ns/ipc") in ipc:
        fail(f"the nodes' IPC namespaces are not each their own: {ipc}")
    if tmps != [[str(i), str(i)] for i in range(4)] or Path("/tmp/pxq-node").exists():
        fail(f"/tmp and /dev/shm are not each node's own: {tmps}")
    check_cores(state)
    # ip netns's own mounts come and go with the namespaces (and may have been there before: an
    # `ip netns add` of someone else's leaves /run/netns mounted), so both sides leave them out.
    if host_view(up=True) != {**before, "mounts": [m for m in before["mounts"] if m != "/run/netns"]}:
        fail(f"cluster up changed the host:\nbefore {before}\nafter  {host_view(up=True)}")
    print(f"ok: up: 4 nodes {names}, own /tmp, /dev/shm and IPC namespace, both directions shaped, the host untouched")


def check_cores(state: dict) -> None:
    """Each node's cpuset holds its cores and its holder; a command the launch agent starts on a
    node runs there; the record says how many nodes share a core."""
    per_node = state["node_cpus"]
    if cpuset_root() is None:
        if state["cpuset"]:
            fail(f"no cpuset hierarchy here, yet the cluster says cgroup {state['cpuset']}")
        print("ok: no cpuset controller here: the nodes are not confined, and the record says so")
        return
    root = cpuset_root()
    for k, pid in enumerate(state["holders"]):
        group = root / f"pxqc-{NAME}-n{k}"
        if sorted(set(per_node[k])) != expand((group / "cpuset.cpus").read_text().strip()):
            fail(f"node {k}'s cpuset holds {(group / 'cpuset.cpus').read_text()!r}, not {per_node[k]}")
        if str(pid) not in (group / "cgroup.procs").read_text().split() or allowed(pid) != sorted(set(per_node[k])):
            fail(f"node {k}'s holder {pid} is not in its cpuset: cores {allowed(pid)}")
    agent = HERE.parents[1] / "drivers" / "pxq" / "pxq" / "vnode_agent.sh"
    env = dict(os.environ, PXQ_CLUSTER_HOLDERS=",".join(map(str, state["holders"])))
    env["PXQ_CLUSTER_CPUSETS"] = ",".join(state["cpuset_procs"])
    got = subprocess.run([str(agent), "n1", "sh", "-c", "hostname; grep Cpus_allowed_list /proc/self/status"],
                         capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    lines = got.stdout.split("\n")
    if (
        got.returncode != 0
        or lines[0] != f"{NAME}-n1"
        or expand(lines[1].split(":")[1].strip()) != sorted(set(per_node[1]))
    ):
        fail(f"a command the agent starts on n1 ran as {got.stdout!r} {got.stderr!r}, not on {per_node[1]}")
    status = json.loads(pxq("cluster", "status", "--json").stdout)["cluster"]
    shared = max(sum(c in cpus for cpus in per_node) for c in {c for cpus in per_node for c in cpus})
    if status["nodes_per_core"] != shared or status["cores_per_node"] != len(per_node[0]):
        fail(f"the cluster's record: {status['cores_per_node']} cores per node, {status['nodes_per_core']} per core")
    print(f"ok: each node in a cpuset of its cores {per_node} (up to {shared} nodes per core), as its agent's commands")


def check_run(tmp: Path) -> None:
    results = tmp / "ring.jsonl"
    out = pxq("run", "ring", "--layout", "2x1", "--results", str(results), "--", "--block", "1M", "--iterations", "2")
    recs = records(results)
    if out.returncode != 0 or len(recs) != 1:
        fail(f"pxq run on the cluster: exit {out.returncode}, {len(recs)} records\n{out.stdout}\n{out.stderr}")
    rec = recs[0]
    lay, cl = rec["layout"], rec["driver"].get("cluster") or {}
    if lay["launcher"] != "cluster" or lay["observed_nodes"] != 2 or rec["context"]["host"] != f"{NAME}-n0":
        fail(f"run on the cluster: layout {lay}, host {rec['context']['host']}")
    if cl.get("name") != NAME or cl.get("link", {}).get("name") != "100mbit" or not cl.get("not_emulated"):
        fail(f"the record's cluster: {cl}")
    for rank in rec["placement"]:
        cores = {c for t in rank["threads"] for c in t["affinity"]}
        if not cores <= set(cl["node_cpus"][rank["node"]]):
            fail(f"rank {rank['rank']} on node {rank['node']} ran on cores {cores}, not its node's {cl['node_cpus']}")
    q = cl["cores_per_node"] + 1
    out = pxq("run", "ring", "--layout", f"1x{q}", "--results", str(results))
    if out.returncode != 2 or f"--cores-per-node {q}" not in out.stderr or len(records(results)) != 1:
        fail(f"1x{q} on nodes of {q - 1} core(s): exit {out.returncode}, {out.stderr!r}")
    print(
        f"ok: pxq run: launcher cluster, 2 nodes observed, rank 0 on {rec['context']['host']}, "
        f"link {cl['link']['name']}"
    )


def check_killed_run(tmp: Path) -> None:
    """SIGKILL to the driver in the middle of a run on the cluster: the watchdog stops the run
    (mpirun on the head, the daemons and ranks in the nodes) and removes its folder."""
    holders = set(json.loads((STATE / NAME / "cluster.json").read_text())["holders"])
    argv = [sys.executable, "-m", "pxq", "probe", "osu", "latency", "--layout", "2x1", "-m", "4M:4M", "-i", "100000"]
    proc = subprocess.Popen(
        [*argv, "--results", str(tmp / "osu.jsonl")],
        env=dict(os.environ, PXQ_CLUSTER=NAME),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not set(ours()["processes"]) - holders:
        time.sleep(0.2)
    running = set(ours()["processes"]) - holders
    if not running:
        proc.kill()
        fail("the probe never started on the cluster's nodes")
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (
        set(ours()["processes"]) - holders or any((STATE / NAME / "runs").iterdir())
    ):
        time.sleep(0.2)
    left = set(ours()["processes"]) - holders
    folders = list((STATE / NAME / "runs").iterdir())
    if left or folders:
        fail(f"after SIGKILL of the driver: processes {sorted(left)} and run folders {folders} left")
    print(f"ok: SIGKILL of a run: its {len(running)} processes on the nodes and its folder are gone")


def stray_cpuset() -> subprocess.Popen | None:
    """A cpuset of pxq's name with a process in it, as a SIGKILLed `up` or run may leave."""
    root = cpuset_root()
    if root is None:
        return None
    group = root / f"pxqc-{NAME}-n9"
    group.mkdir()
    if (root / "cpuset.mems").exists():  # v1: memory nodes before cores
        (group / "cpuset.mems").write_text((root / "cpuset.mems").read_text().strip())
    (group / "cpuset.cpus").write_text("0")
    proc = subprocess.Popen(["sleep", "600"], start_new_session=True)
    (group / "cgroup.procs").write_text(str(proc.pid))
    return proc


def check_stale_and_term(before: dict) -> None:
    """A half-built leftover (a namespace of pxq's with a process in it, no state) is removed by
    the next `up`; SIGTERM during `up` leaves nothing."""
    out = pxq("cluster", "down")
    if out.returncode != 0:
        fail(f"cluster down: exit {out.returncode}\n{out.stdout}\n{out.stderr}")
    nothing_left("down", before)
    # What an `up` killed half-way leaves: a namespace with a process in it and no state (and, as
    # that `up` made /run/netns a mount, its marker).
    STATE.mkdir(parents=True, exist_ok=True)
    if "/run/netns" not in before["mounts"]:  # only then could that `up` have made the mount
        (STATE / ".made-run-netns").touch()
    subprocess.run(["ip", "netns", "add", f"pxqc-{NAME}-n7"], check=True)
    stray = subprocess.Popen(
        ["ip", "netns", "exec", f"pxqc-{NAME}-n7", "sleep", "600"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.3)
    caged = stray_cpuset()  # and a node's cpuset with a process in it
    out = pxq("cluster", "up", "--nodes", "2", "--link", "gige")
    if out.returncode != 0 or f"pxqc-{NAME}-n7" in ours()["namespaces"] or stray.poll() is None:
        stray.kill()
        fail(f"up over a leftover: exit {out.returncode}, namespaces {ours()['namespaces']}\n{out.stderr}")
    if caged is not None and (caged.poll() is None or f"pxqc-{NAME}-n9" in ours()["cgroups"]):
        caged.kill()
        fail(
            f"up over a leftover cpuset: {ours()['cgroups']}, its process {'alive' if caged.poll() is None else 'gone'}"
        )
    print("ok: the next up removed a half-built leftover (its namespace, its cpuset and their processes)")
    pxq("cluster", "down")
    nothing_left("down after the leftover", before)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pxq", "cluster", "up", "--nodes", "64", "--link", "gige"],
        env=dict(os.environ, PXQ_CLUSTER=NAME),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(ours()["namespaces"]) < 8 and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    if proc.returncode != 143 or "Traceback" in err:
        fail(f"SIGTERM during up: exit {proc.returncode} (wanted 143), stderr {err!r}")
    nothing_left("SIGTERM during up", before)


def check_network_option(tmp: Path, before: dict) -> None:
    """`--network PROFILE`: a cluster for one command, used by its runs, gone after it."""
    results = tmp / "net.jsonl"
    out = pxq(
        "run",
        "ring",
        "--layout",
        "2x1",
        "--network",
        "gige",
        "--results",
        str(results),
        "--",
        "--block",
        "1M",
        "--iterations",
        "2",
    )
    recs = records(results)
    cl = recs[0]["driver"].get("cluster") or {} if recs else {}
    if out.returncode != 0 or len(recs) != 1 or recs[0]["layout"]["launcher"] != "cluster" or not cl:
        fail(f"run --network gige: exit {out.returncode}, records {recs}\n{out.stdout}\n{out.stderr}")
    if cl["link"]["name"] != "gige" or not cl["name"].startswith("net"):
        fail(f"run --network gige: the record's cluster {cl}")
    leftover = [ln for ln in sh("ip", "netns", "list").splitlines() if ln.startswith(f"pxqc-{cl['name']}-")]
    if leftover:
        fail(f"run --network: {leftover} left after the command")
    out = pxq("run", "ring", "--layout", "2x1", "--network", "gige", "--hostfile", "/etc/hostname")
    refused("--network with --hostfile", out, "drop --hostfile", before)
    print(f"ok: run --network gige: on cluster {cl['name']} ({cl['link']['name']}), removed after the command")


def check_lab_channels(tmp: Path, before: dict) -> None:
    """Lab 1 with `--network gige`: its other node is across the emulated link (the 2 MiB
    ping-pong held to the link's 125 MB/s; the machine's loopback carries over ten times more),
    and the grade names the cluster and what it does not emulate."""
    grade = tmp / "lab1.json"
    out = pxq("lab", "check", "1", "--solution", "--repeat", "1", "--network", "gige", "--json", str(grade))
    if out.returncode != 0 or not grade.is_file():
        fail(f"lab 1 --network gige: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-2000:]}")
    row = re.search(r"another node \(cluster (net\d+): gige link\)\s*│\s*([\d.]+)\s*│\s*(\d+)", out.stdout)
    if row is None:
        fail(f"lab 1 --network gige did not measure another node of the cluster:\n{out.stdout[-3000:]}")
    mbps = float(row.group(3))
    if not 0 < mbps <= 1.5 * 125:
        fail(f"lab 1's other node at {mbps} MB/s for 2 MiB: not across the 125 MB/s link")
    got = json.loads(grade.read_text())
    if got["outcome"] != "done" or not any("link gige" in n and "not emulated" in n for n in got["notes"]):
        fail(f"lab 1 --network gige graded {got['outcome']}, notes {got['notes']}")
    leftover = [ln for ln in sh("ip", "netns", "list").splitlines() if ln.startswith(f"pxqc-{row.group(1)}-")]
    if leftover:
        fail(f"lab 1 --network: {leftover} left after the command")
    print(f"ok: lab 1 --network gige: the other node across the link at {mbps:.0f} MB/s (2 MiB), graded done")


def check_allocation_study(before: dict) -> None:
    """`study allocation` on a cluster times block and cyclic there and judges the time part."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pxq-alloc-check-") as tmp:  # under /tmp: the nodes' own
        out = pxq("study", "allocation", "cg", "--ranks", "4", "--model", "2x1x2", "--network", "100mbit",
                  "--results", f"{tmp}/a.jsonl")  # fmt: skip
        refused("study allocation with results under /tmp", out, "outside /tmp", before)
    root = HERE.parents[1] / "results"
    root.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cluster-alloc-", dir=root) as tmp:
        res = Path(tmp) / "alloc.jsonl"
        out = pxq("study", "allocation", "cg", "--ranks", "4", "--model", "2x1x2", "--repeat", "3",
                  "--network", "100mbit", "--results", str(res))  # fmt: skip
        study = [r for r in records(res) if r.get("kind") == "study"]
        if out.returncode != 0 or len(study) != 1:
            fail(f"study allocation --network 100mbit: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr}")
        timed = [r for r in study[0]["rows"] if "timed" in r]
        runs = [r for r in records(res) if r.get("kind") != "study" and r["layout"].get("nodes") == 2]
        if sorted(r["timed"] for r in timed) != ["block", "cyclic"] or len(runs) != 6:
            fail(f"study allocation on a cluster: timed rows {timed}, {len(runs)} timed runs (expected 2 x 3)")
        if any((r["driver"].get("cluster") or {}).get("link", {}).get("name") != "100mbit" for r in runs):
            fail("study allocation --network 100mbit: a timed run did not go over the cluster's link")
        part = next(f for f in study[0]["findings"] if f["ref"] == "allocation/cg/time")
        if part["verdict"] == "cannot be tested here" or "cluster 'net" not in part["here"]:
            fail(f"study allocation on a cluster left the time part {part}")
        if os.cpu_count() < 4 and (part["verdict"] != "inconclusive" or "shared this machine" not in part["why"]):
            fail(f"study allocation: 4 ranks on {os.cpu_count()} cores judged a time claim: {part}")
        print(f"ok: study allocation on cluster: cg {part['here']}: {part['verdict']}")


def main() -> None:
    before = host_view()
    if os.geteuid() != 0:
        refused("not root", pxq("cluster", "up", "--nodes", "2"), "needs root", before)
        print("ok: refused without root (the rest needs root)")
        return
    import tempfile

    try:
        check_refusals(before)
        check_up(before)
        with tempfile.TemporaryDirectory(prefix="pxq-cluster-check-") as tmp:
            check_run(Path(tmp))
            check_killed_run(Path(tmp))
        check_stale_and_term(before)
        with tempfile.TemporaryDirectory(prefix="pxq-cluster-check-") as tmp:
            check_network_option(Path(tmp), before)
            check_lab_channels(Path(tmp), before)
        check_allocation_study(before)
    finally:
        pxq("cluster", "down")
    print("cluster: all checks passed")


if __name__ == "__main__":
    main()
