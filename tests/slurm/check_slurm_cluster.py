"""Slurm on a cluster of this machine: one slurmd inside each emulated node, and pxq's runs
inside an allocation spanning the nodes over their shaped links.

- `pxq cluster up` makes two nodes joined by 100 Mbit/s links; slurmctld runs on the cluster's
  head, one slurmd inside each node (its network, host name, /tmp and /dev/shm), and the
  clients on the head (tests/slurm/cluster.py);
- inside `salloc -N 2`, `pxq run` launches with srun: the record names the job and both Slurm
  nodes, and each rank ran on its own emulated host (the node's host name, not the machine's);
- `pxq probe osu latency` inside the allocation goes over the links: a 1 MiB ping-pong between
  the nodes is held to the link's 12.5 MB/s (the machine's own loopback carries a hundred times
  more, so the check cannot pass on a path that misses the link);
- after Slurm stops and `pxq cluster down`, nothing of either is left.

Exit 77 (CTest's skip) when Slurm or a cluster cannot run here (not root, no Slurm), saying why.
usage: check_slurm_cluster.py WORKDIR   (PYTHONPATH as for the other driver checks)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(HERE.parent / "mpi")]
from check_slurm import leftovers  # noqa: E402
from cluster import Cluster, Unavailable  # noqa: E402
from driver_check import fail, records  # noqa: E402

from pxq.cluster import emulator as emulated  # noqa: E402

NAME = "slc"
LINK_MBPS = 12.5  # 100mbit


def run(argv: list[str], env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    out = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    print(f"$ {' '.join(argv)}  -> {out.returncode}")
    if out.returncode != 0:
        fail(f"exit {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def check_run(results: Path) -> None:
    recs = records(results / "ring.jsonl")
    if len(recs) != 1 or recs[0]["status"] != "ok":
        fail(f"pxq run inside salloc on the emulated nodes: {[r.get('status') for r in recs]}")
    rec = recs[0]
    if rec["layout"]["launcher"] != "slurm" or rec["layout"]["observed_nodes"] != 2:
        fail(f"launcher {rec['layout']['launcher']}, {rec['layout']['observed_nodes']} nodes observed")
    if rec["driver"]["slurm"].get("nodes") != ["n0", "n1"]:
        fail(f"the record's Slurm job: {rec['driver']['slurm']}")
    hosts = sorted(p["host"] for p in rec["placement"])
    if hosts != [f"{NAME}-n0", f"{NAME}-n1"]:
        fail(f"the ranks ran on hosts {hosts}, not one on each emulated node")


def check_link(results: Path) -> float:
    recs = records(results / "probe-osu.jsonl")
    if len(recs) != 1 or recs[0]["status"] != "ok":
        fail(f"osu latency inside salloc: {[r.get('status') for r in recs]}")
    row = next(r for r in recs[0]["osu"]["rows"] if r["bytes"] == 1 << 20)
    mbps = row["bytes"] / row["latency_us"]
    if not 0 < mbps <= 1.5 * LINK_MBPS:
        fail(f"a 1 MiB ping-pong between the nodes ran at {mbps:.1f} MB/s: not through the {LINK_MBPS} MB/s link")
    return mbps


def main() -> int:
    work = Path(sys.argv[1]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    results = work / "results"
    env = dict(os.environ, PXQ_RESULTS_DIR=str(results), PXQ_NO_INSTALL="1", PXQ_CLUSTER=NAME)
    pxq = [sys.executable, "-m", "pxq"]
    if os.geteuid() != 0:
        print("SKIP: a cluster on this machine needs root")
        return 77
    run([*pxq, "cluster", "up", "--name", NAME, "--nodes", "2", "--link", "100mbit"], env, timeout=120)
    slurm = None
    try:
        c = emulated.load(NAME)
        if c is None:
            fail("pxq cluster up succeeded but the cluster is not up")
        slurm = Cluster(work / "cluster", emulated=c)
        try:
            slurm.start()
        except Unavailable as e:
            print(f"SKIP: Slurm cannot run here: {e}")
            return 77
        env.update(slurm.env)
        on_head = [*slurm.client, "salloc", "-N", "2", "--ntasks-per-node", "1"]
        run([*on_head, *pxq, "run", "ring", "--layout", "2x1"], env)
        check_run(results)
        osu = ["probe", "osu", "latency", "--layout", "2x1", "-m", "1M:1M", "-i", "4", "-x", "1"]
        run([*on_head, *pxq, *osu], env)
        mbps = check_link(results)
    finally:
        if slurm is not None:
            slurm.stop()
        down = subprocess.run([*pxq, "cluster", "down", "--name", NAME], env=env, capture_output=True, text=True)
    if down.returncode != 0:
        fail(f"pxq cluster down: exit {down.returncode}\n{down.stderr}")
    left = leftovers(work) + [f"namespace {ns}" for ns in emulated.leftovers(NAME)["namespaces"]]
    if left:
        fail(f"left behind: {left}")
    print(
        f"PASS: one slurmd in each of 2 emulated nodes; salloc run spans {NAME}-n0 and {NAME}-n1; "
        f"1 MiB ping-pong over the 100 Mbit/s link at {mbps:.1f} MB/s; nothing left after down"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
