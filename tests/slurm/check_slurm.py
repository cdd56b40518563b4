"""pxq on a real Slurm: a private two-node cluster on this machine (tests/slurm/cluster.py), then
the README's Slurm commands as users type them, and the records they leave:

- inside salloc, `./pxq run` launches with srun (the allocation's nodes, tasks per node, cpus
  per task, bound to cores, OMP_* from the layout); the record names the job, its nodes and
  the placement observed on each node;
- a layout larger than the allocation is refused (exit 2, no record);
- `pxq sweep --submit --dry-run` prints one sbatch script per layout and submits nothing;
- `pxq sweep --submit` and `--collect` run the sweep as jobs and gather every record once.

Exit 77 (CTest's skip) when Slurm cannot run here, with the reason.
usage: check_slurm.py WORKDIR   (PXQ_BUILD_DIR and PYTHONPATH as for the other driver checks)"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(HERE.parent / "mpi")]
from cluster import Cluster, Unavailable  # noqa: E402
from driver_check import fail, readme_commands, records  # noqa: E402


def as_here(cmd: str, results: Path) -> str:
    return re.sub(r"(?<![\w/])results/", f"{results}/", cmd)


def shell(cmd: str, env: dict, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, shell=True, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    print(f"$ {cmd}  -> {out.returncode}")
    return out


def check_run(results: Path) -> None:
    recs = records(results / "ring.jsonl")
    if len(recs) != 2 or any(r["status"] != "ok" for r in recs):
        fail(f"pxq run inside salloc: {[r.get('status') for r in recs]}")
    rec = recs[-1]
    if rec["layout"]["launcher"] != "slurm" or rec["layout"]["observed_nodes"] != 2:
        fail(f"launcher {rec['layout']['launcher']}, {rec['layout']['observed_nodes']} nodes observed")
    slurm = rec["driver"].get("slurm", {})
    if not slurm.get("job_id") or slurm.get("nodes") != ["n0", "n1"]:
        fail(f"the record's Slurm job: {slurm}")
    if {p["vnode"] for p in rec["placement"]} != {"n0", "n1"}:
        fail(f"the observed placement names nodes {[p['vnode'] for p in rec['placement']]}")
    for p in rec["placement"]:
        cpus = [t["cpu"] for t in p["threads"]]
        if len(cpus) != 2 or len(set(cpus)) != 2:
            fail(f"rank {p['rank']}: its 2 threads ran on cpus {cpus} (srun --cpus-per-task 2, OMP_PLACES cores)")
    if rec["driver"]["omp"]["OMP_NUM_THREADS"] != "2":
        fail(f"OMP_NUM_THREADS {rec['driver']['omp']['OMP_NUM_THREADS']}")


def check_sweep(results: Path, collected: subprocess.CompletedProcess, again: subprocess.CompletedProcess) -> None:
    if collected.returncode != 0:
        fail(f"--collect exited {collected.returncode}:\n{collected.stdout[-2000:]}\n{collected.stderr[-2000:]}")
    recs = records(results / "mg.jsonl")
    # 1x2 flat, 1x2 tiled, 2x1x2 tiled (flat skipped: T=2), 2 repeats each.
    if len(recs) != 6 or any(r["status"] != "ok" for r in recs):
        fail(f"collected {len(recs)} records ({[r.get('status') for r in recs]}), expected 6 verified")
    if {r["driver"]["slurm"]["job_id"] for r in recs} == {""} or len(
        {r["driver"]["slurm"]["job_id"] for r in recs}
    ) != 2:
        fail("the collected records do not come from two jobs, one per layout")
    if again.returncode != 0 or len(records(results / "mg.jsonl")) != 6:
        fail("collecting again changed the results file")


def leftovers(work: Path, grace: float = 30) -> list[str]:
    """Slurm's processes or anything started in the check's folder still alive after the cluster
    stopped (a step may take a few seconds to end after its daemon: allowed the grace)."""
    deadline = time.monotonic() + grace
    while True:
        found = subprocess.run(
            ["pgrep", "-a", "-f", f"{work}|slurmstepd|slurmd|slurmctld"], capture_output=True, text=True
        ).stdout.splitlines()
        left = [ln for ln in found if int(ln.split()[0]) != os.getpid()]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def check_labs(work: Path, env: dict) -> None:
    """The labs through the allocation: lab 1's ping-pong across the two Slurm nodes and lab 4
    on one, each graded done with srun as the launcher."""
    for number, shape in ((1, "-N 2 --ntasks-per-node 2"), (4, "-N 1 --ntasks-per-node 2")):
        grade = work / f"lab{number}.json"
        cmd = f"salloc {shape} {sys.executable} -m pxq lab check {number} --solution --repeat 1 --json {grade}"
        out = shell(cmd, env, ROOT, timeout=900)
        if out.returncode != 0 or not grade.is_file():
            fail(f"lab {number} inside salloc: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-2000:]}")
        got = json.loads(grade.read_text())
        if got["outcome"] != "done" or "Traceback" in out.stderr:
            fail(f"lab {number} inside salloc graded {got['outcome']}: {got}")
        if number == 1 and "the allocation's second node" not in out.stdout:
            fail(f"lab 1 inside salloc did not measure across the allocation's nodes:\n{out.stdout[-3000:]}")


def main() -> int:
    work = Path(sys.argv[1]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    results = work / "results"
    cluster = Cluster(work / "cluster", nodes=2)
    try:
        cluster.start()
    except Unavailable as e:
        print(f"SKIP: Slurm cannot run here: {e}")
        return 77
    env = dict(cluster.env, PXQ_RESULTS_DIR=str(results), PXQ_NO_INSTALL="1")
    try:
        outs = [shell(as_here(cmd, results), env, ROOT) for cmd in readme_commands("slurm-commands")]
        if len(outs) != 5:
            fail(f"the README's Slurm block has {len(outs)} commands; this check knows 5")
        for out in outs[:3] + outs[4:]:
            if out.returncode != 0:
                fail(f"exit {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}\n{cluster.log_tail()}")
        check_run(results)
        dry = outs[2].stdout
        scripts = sorted((results / "mg.jobs").glob("*.sbatch"))
        if dry.count("#!/bin/bash") != 2 or "#SBATCH --nodes=2" not in dry or len(scripts) != 2:
            fail(f"--submit --dry-run printed:\n{dry}")
        for script in scripts:  # what --dry-run printed is what --submit submitted
            if script.read_text() not in dry:
                fail(f"{script} differs from the script --dry-run printed")
        again = shell(f"{sys.executable} -m pxq sweep mg --collect", env, ROOT)
        check_sweep(results, outs[4], again)

        before = len(records(results / "ring.jsonl"))
        big = shell(f"salloc -N1 {sys.executable} -m pxq run ring --layout 2x1", env, ROOT)
        if big.returncode != 2 or "allocation has 1" not in big.stderr or "Traceback" in big.stderr:
            fail(f"a layout larger than the allocation: exit {big.returncode}\n{big.stderr[-2000:]}")
        if len(records(results / "ring.jsonl")) != before:
            fail("the refused run wrote a record")
        check_labs(work, env)
        valid = shell(f"{sys.executable} -m pxq validate {results}", env, ROOT)
        if valid.returncode != 0 or " 0 invalid" not in valid.stdout:
            fail(f"pxq validate:\n{valid.stdout}")
    finally:
        cluster.stop()
    left = leftovers(work)
    if left:
        fail(f"processes left behind: {left}")
    print(
        "PASS: salloc run (srun, 2 nodes, bound threads), too-large layout refused, "
        "sbatch sweep submitted and collected"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
