"""`pxq run --trace` end to end: a 2-rank CG run's timeline, loaded back, holds every phase and
MPI call on the rank and thread that made it.

- every rank has its own lane, named after the rank, and its phases on its main thread;
- per rank, the phase spans inside the timed iterations add up to the rank's own phase timers:
  their maximum over the ranks is the record's phase time (the same clock readings);
- per (rank, peer), the sends inside the timed iterations are the messages the proxy itself
  counted (the record's by_peer), so every call sits on the rank that made it;
- the ranks are aligned on the barrier that starts the timed iterations;
- a hybrid run's lanes: phases on the main thread, the record's note says what threads show;
- repeats with a named file get one file each; a directory or an unwritable folder as --trace
  exits 2 before any run, with no record.

usage: check_trace.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import math
from pathlib import Path

from driver_check import fail, fresh_workdir, pxq, records

from pxq.analysis.exports import trace
from pxq.core import records as pxq_records


def lanes(t: dict) -> tuple[dict[int, str], dict[tuple[int, int], str]]:
    procs = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "thread_name"}
    return procs, threads


def check_cg(work: Path) -> None:
    res, out = work / "cg.jsonl", work / "cg.trace.json"
    p = pxq("run", "cg", "--layout", "1x2", "--results", str(res), "--trace", str(out), "--", "--class", "S")
    if p.returncode != 0:
        fail(f"cg --trace exited {p.returncode}\n{p.stdout}{p.stderr}")
    (rec,) = pxq_records.read(res)  # checked against the run schema, "trace" included
    if rec["trace"]["path"] != str(out) or f": {out} (2 ranks" not in p.stdout:
        fail(f"the record and the output must name the trace {out}: {rec['trace']}\n{p.stdout}")
    t = trace.load(out)
    procs, threads = lanes(t)
    if sorted(procs) != [0, 1] or not all(procs[r].startswith(f"rank {r} ") for r in procs):
        fail(f"a lane per rank, named after it: {procs}")
    xs = [e for e in t["traceEvents"] if e["ph"] == "X"]
    for e in xs:
        if e["cat"] == "phase" and threads.get((e["pid"], e["tid"])) != "main thread":
            fail(f"a phase off its rank's main thread: {e} (threads {threads})")
    starts = {e["pid"]: e["ts"] for e in xs if e["name"] == trace.TIMED}
    if len(starts) != 2 or abs(starts[0] - starts[1]) > 1e-3:
        fail(f"the ranks' timed iterations must start at the same instant: {starts}")
    per_rank = trace.phase_seconds(t)
    for phase in ("spmv", "vector", "comm"):
        slowest = max(per_rank[r].get(phase, 0.0) for r in (0, 1))
        want = rec["time"][phase]
        if not math.isclose(slowest, want, rel_tol=1e-9, abs_tol=1e-12):
            fail(f"phase {phase}: the trace's slowest rank has {slowest} s, the record {want} s")
    counted = {(s, d): n for s, d, n, _ in rec["messages"]["by_peer"]}
    traced = trace.sends(t, timed_only=True)
    if traced != counted:
        fail(f"sends per (rank, peer) in the timed iterations: trace {traced}, the proxy counted {counted}")
    calls = sum(1 for e in xs if e["cat"] == "mpi")
    print(f"cg 1x2: {len(xs)} spans, {calls} MPI calls, sends per pair {traced}; phases equal the record's")


def check_hybrid(work: Path) -> None:
    res, out = work / "ring.jsonl", work / "ring.trace.json"
    args = ["--block", "1M", "--iterations", "3"]
    p = pxq(
        "run", "ring", "--layout", "1x2x2", "--oversubscribe", "--results", str(res), "--trace", str(out), "--", *args
    )
    if p.returncode != 0:
        fail(f"ring 1x2x2 --trace exited {p.returncode}\n{p.stdout}{p.stderr}")
    (rec,) = records(res)
    t = trace.load(out)
    procs, threads = lanes(t)
    phases = [e for e in t["traceEvents"] if e["ph"] == "X" and e["cat"] == "phase"]
    if sorted(procs) != [0, 1] or not phases:
        fail(f"ring 1x2x2: lanes {procs}, {len(phases)} phase spans")
    if any(threads.get((e["pid"], e["tid"])) != "main thread" for e in phases):
        fail("ring 1x2x2: a phase off its rank's main thread")
    if "OpenMP" not in rec["trace"]["note"]:
        fail(f"the record must say what the threads' lanes show: {rec['trace']}")
    print(f"ring 1x2x2: {len(phases)} phase spans on the main threads; {len(threads)} thread lanes")


def check_repeats_and_refusals(work: Path) -> None:
    res = work / "rep.jsonl"
    p = pxq("run", "cg", "--repeat", "2", "--results", str(res), "--trace", str(work / "rep.trace.json"))
    files = sorted(f.name for f in work.glob("rep-r*.trace.json"))
    if p.returncode != 0 or files != ["rep-r0.trace.json", "rep-r1.trace.json"]:
        fail(f"two repeats, one file each: exit {p.returncode}, files {files}\n{p.stdout}{p.stderr}")
    for bad, why in ((work, "a directory"), (Path("/proc/pxq-none/t.json"), "cannot create")):
        res = work / "bad.jsonl"
        p = pxq("run", "cg", "--results", str(res), "--trace", str(bad))
        if p.returncode != 2 or why not in p.stderr or "Traceback" in p.stderr or res.exists():
            fail(f"--trace {bad}: want exit 2 saying '{why}', no record; got {p.returncode}\n{p.stderr}")
    print("repeats: one file each; a directory and an unwritable folder refused with exit 2")


def main() -> None:
    work = fresh_workdir()
    check_cg(work)
    check_hybrid(work)
    check_repeats_and_refusals(work)
    print("PASS: trace")


if __name__ == "__main__":
    main()
