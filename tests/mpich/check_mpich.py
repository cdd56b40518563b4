"""pxq with MPICH beside Open MPI: the README's MPICH commands as users type them, then the
fault tests on the MPICH build.

- a second build against Debian's MPICH (`mpicxx.mpich`) in a folder of its own;
- the same sweep with both builds: every record says which MPI ran it, MPICH's runs were
  started by Hydra's mpiexec (virtual nodes through pxq's agent, over TCP), each rank on the
  cores pxq planned (the two virtual nodes on different cores), verified;
- `pxq compare` holds the two builds' results side by side;
- cyclic allocation on virtual nodes deals ranks round the nodes;
- OSU's latency test (`pxq probe osu`) between MPICH's virtual nodes, validated;
- the README's hostfile commands with both builds (launcher hostfile, this host);
- inside a 2-node Slurm allocation (the private cluster of tests/slurm), srun --mpi=pmi2 runs
  the MPICH build on both nodes (left out, saying why, where Slurm cannot run);
- on a cluster of this machine (2 nodes, links shaped to 1 Gbit/s), Hydra starts the MPICH
  build on both nodes: ping-pong between them goes over the shaped link, not UCX's shared
  memory (at most the link's rate); a ring run is verified with rank 0 on the first node; an
  oversubscribed layout is refused before anything runs (UCX's TCP hangs in MPI_Finalize then);
  nothing of the cluster is left after `pxq cluster down` (left out, saying why, without root);
- a launcher of the other MPI is refused (exit 2, no record);
- tests/faults (a rank killed, a stopped rank, signals, full disk...) pass on the MPICH build.

Exit 77 (CTest's skip) when MPICH is not installed, with the reason.
usage: check_mpich.py WORKDIR   (PXQ_BUILD_DIR: the Open MPI build; PYTHONPATH as for the other
driver checks)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE.parent / "mpi"), str(HERE.parent / "slurm")]
from cluster import Cluster, Unavailable  # noqa: E402
from driver_check import fail, readme_commands, records  # noqa: E402

TARGETS = "pxq-envinfo pxq-ring pxq-probe-osu pxq-probe-pingpong pxq-probe-stride pxq-stream pxq-noise pxq-bench-tiling"


def as_here(cmd: str, work: Path) -> str:
    """A README command with results/ and build-mpich/ standing for this check's own folders."""
    cmd = cmd.replace("$PWD/build-mpich", str(work / "build-mpich"))
    return re.sub(r"(?<![\w/])results/", f"{work}/results/", cmd)


def shell(cmd: str, env: dict, timeout: float = 1500, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, shell=True, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    print(f"$ {cmd}  -> {out.returncode}")
    if out.returncode not in ok:
        fail(f"exit {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def check_sweeps(work: Path) -> None:
    """Both builds' records: verified, each naming its MPI; MPICH's placed as planned."""
    for name, library in (("ring-openmpi", "Open MPI"), ("ring-mpich", "MPICH")):
        recs = records(work / "results" / f"{name}.jsonl")
        if len(recs) != 8 or any(r["status"] != "ok" or r["verification"]["passed"] is not True for r in recs):
            fail(f"{name}: {len(recs)} records, {[r.get('status') for r in recs]}; expected 8 verified")
        if any(not r["context"]["mpi_library"].startswith(library) for r in recs):
            fail(f"{name}: records name {sorted({r['context']['mpi_library'] for r in recs})}, not {library}")
    for rec in records(work / "results" / "ring-mpich.jsonl"):
        lay = rec["layout"]
        cpus = [t["cpu"] for p in rec["placement"] for t in p["threads"]]
        if len(set(cpus)) != len(cpus):
            fail(f"MPICH {rec['driver']['layout']}: workers share cpus {cpus} (each should have its own core)")
        if rec["driver"]["layout"] == "2x1":
            vnodes = [p["vnode"] for p in rec["placement"]]
            if lay["launcher"] != "virtual" or lay["observed_nodes"] != 2 or vnodes != ["n0", "n1"]:
                fail(f"MPICH 2x1: launcher {lay['launcher']}, {lay['observed_nodes']} nodes, vnodes {vnodes}")


def check_cyclic(work: Path) -> None:
    recs = records(work / "results" / "cyclic-mpich.jsonl")
    if len(recs) != 1 or recs[0]["status"] != "ok":
        fail(f"MPICH ring 2x2 cyclic: {[r.get('status') for r in recs]}")
    nodes = [p["vnode"] for p in sorted(recs[0]["placement"], key=lambda p: p["rank"])]
    if nodes != ["n0", "n1", "n0", "n1"] or recs[0]["layout"]["alloc"] != "cyclic":
        fail(f"MPICH cyclic allocation put ranks 0..3 on {nodes}")


def check_osu(work: Path, printed: str) -> None:
    """OSU's latency test on MPICH between virtual nodes: OSU's columns, every size validated."""
    recs = records(work / "results" / "osu-mpich.jsonl")
    if len(recs) != 1 or recs[0]["status"] != "ok" or not recs[0]["context"]["mpi_library"].startswith("MPICH"):
        fail(f"osu latency on MPICH: {[(r.get('status'), r.get('context', {}).get('mpi_library')) for r in recs]}")
    rows = recs[0]["osu"]["rows"]
    if [r["bytes"] for r in rows] != [1 << k for k in range(17)] or any(r["wrong"] != 0 for r in rows):
        fail(f"osu latency on MPICH: rows {rows}")
    if "# Size          Latency (us)        Validation" not in printed or recs[0]["layout"]["observed_nodes"] != 2:
        fail(f"osu latency on MPICH printed:\n{printed[-2000:]}")


def check_hostfile(work: Path, env: dict) -> None:
    """The README's hostfile block with both builds: launcher hostfile, verified, each its MPI."""
    for cmd in readme_commands("hostfile-commands"):
        shell(as_here(cmd, work), env)
    recs = records(work / "results" / "ring.jsonl")
    libraries = sorted(r["context"]["mpi_library"].split()[0] for r in recs)
    if len(recs) != 4 or any(r["status"] != "ok" or r["layout"]["launcher"] != "hostfile" for r in recs):
        fail(f"the hostfile runs: {[(r.get('status'), r.get('layout', {}).get('launcher')) for r in recs]}")
    if libraries != ["MPICH", "MPICH", "Open", "Open"]:
        fail(f"the hostfile runs used {libraries}, not two each of Open MPI and MPICH")


def check_slurm(work: Path, env: dict) -> str:
    """The MPICH build inside a 2-node Slurm allocation (tests/slurm/cluster.py): srun with
    --mpi=pmi2 starts it on both nodes. Returns what was checked, or why Slurm was left out."""
    cluster = Cluster(work / "cluster", nodes=2)
    try:
        cluster.start()
    except Unavailable as e:
        return f"Slurm left out: it cannot run here ({e})"
    results = work / "results" / "slurm-mpich.jsonl"
    cmd = (
        f"salloc -N 2 --ntasks-per-node 1 env PXQ_BUILD_DIR={work / 'build-mpich'} "
        f"{sys.executable} -m pxq run ring --layout 2x1 --repeat 2 --results {results} -- --block 1M"
    )
    try:
        out = subprocess.run(cmd, shell=True, env=dict(env, **cluster.env), cwd=ROOT, capture_output=True, text=True)
        if out.returncode != 0:
            fail(f"MPICH inside salloc: exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    finally:
        cluster.stop()
    recs = records(results)
    rec = recs[-1] if recs else {}
    if len(recs) != 2 or any(r["status"] != "ok" for r in recs) or rec["layout"]["launcher"] != "slurm":
        fail(f"MPICH inside salloc: {[(r.get('status'), r.get('layout', {}).get('launcher')) for r in recs]}")
    nodes = [p["vnode"] for p in rec["placement"]]
    if not rec["context"]["mpi_library"].startswith("MPICH") or nodes != ["n0", "n1"]:
        fail(f"MPICH inside salloc: {rec['context']['mpi_library']}, ranks on nodes {nodes}")
    return "Slurm: srun --mpi=pmi2 ran the MPICH build on nodes n0 and n1"


def check_on_cluster(work: Path, env: dict) -> str:
    """The MPICH build on a cluster of this machine. Returns what was checked, or why it was left out."""
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None:
        return "the cluster of this machine left out: it needs root, ip and tc"
    env = dict(env, PXQ_BUILD_DIR=str(work / "build-mpich"), PXQ_CLUSTER="mpichck")
    shell(f"{sys.executable} -m pxq cluster up --nodes 2 --link 1Gbit", env, timeout=120)
    try:
        pp, ring = work / "results" / "cluster-pp.jsonl", work / "results" / "cluster-ring.jsonl"
        shell(
            f"{sys.executable} -m pxq probe pingpong --layout 2x1 --min 1M --max 4M --scale 0.2 --results {pp}",
            env,
            timeout=600,
        )
        shell(f"{sys.executable} -m pxq run ring --layout 2x1 --repeat 2 --results {ring} -- --block 1M", env)
        never = work / "results" / "never.jsonl"
        refused = shell(
            f"{sys.executable} -m pxq run ring --layout 2x2 --oversubscribe --results {never}", env, ok=(2,)
        )
    finally:
        shell(f"{sys.executable} -m pxq cluster down", env, timeout=120)
    if "hangs in MPI_Finalize" not in refused.stderr or never.exists():
        fail(f"MPICH oversubscribed on the cluster: {refused.stderr[-1000:]}")
    channel = next(c for c in records(pp)[-1]["channels"] if c["channel"] == "inter_node")
    fastest = max(p["median_gbs"] for p in channel["bandwidth"])
    if not channel["detail"].startswith("cluster of this machine") or fastest > 1.25 * 1.1:
        fail(f"MPICH between the cluster's nodes: {channel['detail']}, {fastest:.2f} GB/s over a 1.25 GB/s link")
    recs = records(ring)
    if len(recs) != 2 or any(r["status"] != "ok" or not r["verification"]["passed"] for r in recs):
        fail(f"MPICH ring on the cluster: {[r.get('status') for r in recs]}")
    hosts = [p["host"] for p in recs[-1]["placement"]]
    if hosts != ["mpichck-n0", "mpichck-n1"] or not recs[-1]["context"]["mpi_library"].startswith("MPICH"):
        fail(f"MPICH ring on the cluster: ranks on {hosts}, {recs[-1]['context']['mpi_library']}")
    if "pxqc-mpichck-" in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout:
        fail("pxq cluster down left namespaces of the MPICH check behind")
    return f"cluster of this machine: Hydra on {hosts}, {fastest:.2f} GB/s over the 1 Gbit/s link"


def check_wrong_launcher(work: Path, env: dict) -> None:
    """Open MPI's mpirun for an MPICH build: refused before anything runs."""
    results = work / "results" / "wrong.jsonl"
    bad = subprocess.run(
        [sys.executable, "-m", "pxq", "run", "ring", "--layout", "1x2", "--results", str(results)],
        env=dict(env, PXQ_BUILD_DIR=str(work / "build-mpich"), PXQ_MPIRUN="mpirun.openmpi"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if bad.returncode != 2 or "built with MPICH" not in bad.stderr or "Traceback" in bad.stderr:
        fail(f"Open MPI's mpirun for the MPICH build: exit {bad.returncode}\n{bad.stderr[-2000:]}")
    if results.exists():
        fail("the refused run wrote a record")


def main() -> int:
    work = Path(sys.argv[1]).resolve()
    missing = [exe for exe in ("mpicxx.mpich", "mpiexec.mpich") if shutil.which(exe) is None]
    if missing:
        print(f"SKIP: MPICH is not installed ({', '.join(missing)} missing): apt-get install mpich libmpich-dev")
        return 77
    shutil.rmtree(work / "results", ignore_errors=True)
    (work / "results").mkdir(parents=True)
    # The README's commands as written; the build makes only what this check runs (the ring, the
    # probes it starts, the tile benchmark the fault tests interrupt), about half of every target.
    env = dict(os.environ, PXQ_NO_INSTALL="1", PXQ_RESULTS_DIR=str(work / "results"), PXQ_BUILD_TARGETS=TARGETS)
    # `pxq compare` exits 1 when NEW (MPICH) is significantly slower somewhere: a verdict on
    # speed between two MPIs, which this check does not judge (it checks the table is there).
    outs = [
        shell(as_here(cmd, work), env, ok=(0, 1) if " compare " in cmd else (0,))
        for cmd in readme_commands("mpich-commands")
    ]
    if len(outs) != 6:
        fail(f"the README's MPICH block has {len(outs)} commands; this check knows 6")
    check_sweeps(work)
    if (
        "ring" not in outs[3].stdout
        or "differ in context.mpi_library" not in outs[3].stdout
        or "NEW/BASE" not in outs[3].stdout
        or "Traceback" in outs[3].stderr
    ):
        fail(f"pxq compare did not set the two MPIs side by side:\n{outs[3].stdout[-3000:]}")
    check_cyclic(work)
    check_osu(work, outs[5].stdout)
    check_hostfile(work, env)
    check_wrong_launcher(work, env)
    print(check_on_cluster(work, env))
    slurm = check_slurm(work, env)
    print(slurm)
    valid = shell(f"{sys.executable} -m pxq validate {work / 'results'}", env)
    if " 0 invalid" not in valid.stdout:
        fail(f"pxq validate:\n{valid.stdout}")
    faults = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "faults" / "test_faults.py"),
        ],
        env=dict(env, PXQ_BUILD_DIR=str(work / "build-mpich")),
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(faults.stdout.strip().splitlines()[-1] if faults.stdout.strip() else faults.stderr[-2000:])
    if faults.returncode != 0:
        fail(f"the fault tests on the MPICH build:\n{faults.stdout[-4000:]}")
    left = subprocess.run(
        ["pgrep", "-a", "-f", f"{work}/build-mpich/bin|hydra_pmi_proxy"], capture_output=True, text=True
    )
    if left.stdout.strip():
        fail(f"processes left behind:\n{left.stdout}")
    print("PASS: MPICH build; sweeps with both MPIs verified and compared; Hydra's virtual nodes, cyclic allocation,")
    print("      planned cores; the other MPI's launcher refused; the fault tests pass on MPICH")
    return 0


if __name__ == "__main__":
    sys.exit(main())
