"""The communication tools through the driver:
- ping-pong finds the shared-memory channel on 1x2 and the TCP channel between 2 virtual
  nodes, measures every size, validates every byte, and names the channels it cannot find;
- rank pairs give a full throughput matrix;
- the message profiler, preloaded into a plain MPI program (and linked into another), gives
  exactly the expected matrix for a ring and an all-to-all;
- msgdist classifies it, study allocation compares block and cyclic;
- bad input (a model that does not fit, an unknown allocation, a record without a matrix, a
  truncated record, a command that is not a launcher) exits 2 and overwrites nothing.

usage: check_comm.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

BUILD = Path(os.environ["PXQ_BUILD_DIR"])


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def pxq(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pxq", *args], capture_output=True, text=True, timeout=600, env=env)


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def bin_of(nbytes: int) -> int:
    k, upper = 1, 1
    while upper < nbytes:
        upper, k = upper * 2, k + 1
    return k if nbytes else 0


def main() -> None:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    # ---- ping-pong: shared memory on one node, TCP between two virtual nodes ----
    res = work / "pingpong.jsonl"
    for layout, channel, detail in (("1x2", "intra_cmp", ""), ("2x1", "inter_node", "virtual nodes (TCP)")):
        p = pxq(
            "probe",
            "pingpong",
            "--layout",
            layout,
            "--max",
            "64K",
            "--scale",
            "0.05",
            "--validate",
            "--oversubscribe",
            "--results",
            str(res),
        )
        if p.returncode != 0:
            fail(f"pingpong {layout} exited {p.returncode}\n{p.stdout}{p.stderr}")
        rec = read(res)[-1]
        chans = [c["channel"] for c in rec["channels"]]
        if chans != [channel]:
            fail(f"{layout}: channels {chans}, expected [{channel}]")
        ch = rec["channels"][0]
        if detail and ch["detail"] != detail:
            fail(f"{layout}: {ch['detail']}")
        if [x["bytes"] for x in ch["latency"]] != [0] + [1 << k for k in range(17)]:
            fail(f"{layout}: latency sizes {[x['bytes'] for x in ch['latency']]}")
        if not all(0 < x["min_us"] <= x["median_us"] <= x["max_us"] for x in ch["latency"]):
            fail(f"{layout}: latency figures {ch['latency']}")
        if len(ch["bandwidth"]) != 17 or not all(x["median_gbs"] > 0 for x in ch["bandwidth"]):
            fail(f"{layout}: bandwidth {ch['bandwidth']}")
        v = rec["validation"]
        if not (v["on"] and v["bytes_checked"] > 0 and v["wrong"] == 0):
            fail(f"{layout}: validation {v}")
        if not any(m.startswith("inter_cmp") for m in rec["missing"]):
            fail(f"{layout}: missing channels not named: {rec['missing']}")
        if layout == "1x2" and not any(m.startswith("inter_node") for m in rec["missing"]):
            fail(f"1x2: inter_node not named as missing: {rec['missing']}")

    # ---- rank pairs: every ordered pair of a 2x2 layout ----
    res = work / "rankpairs.jsonl"
    p = pxq(
        "probe",
        "rankpairs",
        "--layout",
        "2x2",
        "--size",
        "1M",
        "--repeat",
        "1",
        "--oversubscribe",
        "--results",
        str(res),
    )
    if p.returncode != 0:
        fail(f"rankpairs exited {p.returncode}\n{p.stdout}{p.stderr}")
    m = read(res)[-1]["matrix_gbs"]
    if len(m) != 4 or any(len(r) != 4 for r in m):
        fail(f"matrix shape {m}")
    if any((m[i][j] > 0) != (i != j) for i in range(4) for j in range(4)):
        fail(f"matrix values {m}")
    if "inter_node" not in p.stdout or "intra_cmp" not in p.stdout or not (work / "rankpairs.png").exists():
        fail(f"rankpairs report\n{p.stdout}")

    # ---- rank pairs past --pairs: each rank sends to a fixed set of partner offsets ----
    # 2x4 with --pairs 16: two offsets a rank (1 and 7: the next rank and the one before), 16 of
    # the 56 ordered pairs, the record holding a sample that grows with the ranks, not a matrix.
    p = pxq(
        *"probe rankpairs --layout 2x4 --size 256K --repeat 1 --pairs 16 --oversubscribe".split(), "--results", str(res)
    )
    if p.returncode != 0:
        fail(f"sampled rankpairs exited {p.returncode}\n{p.stdout}{p.stderr}")
    rec = read(res)[-1]
    sampled = rec.get("pairs_sampled") or {}
    if rec["matrix_gbs"] != [] or sampled.get("offsets") != [1, 7] or sampled.get("pairs_total") != 56:
        fail(f"sampled record {rec.get('matrix_gbs')} {sampled}")
    if len(sampled["gbs"]) != 8 or any(len(r) != 2 or min(r) <= 0 for r in sampled["gbs"]):
        fail(f"sampled values {sampled['gbs']}")
    if "16 of the 56 ordered pairs" not in p.stdout or "rank-pair probe on layout 2x4" not in p.stdout:
        fail(f"sampled rankpairs report\n{p.stdout}")

    # ---- the profiler: preloaded into a plain MPI program, and linked into one ----
    prof = work / "msgprof.jsonl"
    mpirun = shutil.which("mpirun") or "mpirun"
    p = pxq(
        "profile",
        "--results",
        str(prof),
        "--",
        mpirun,
        "-np",
        "3",
        "--oversubscribe",
        str(BUILD / "bin" / "pxq-traffic"),
        "4",
        "1024",
    )
    if p.returncode != 0:
        fail(f"profile exited {p.returncode}\n{p.stdout}{p.stderr}")
    # The linked run gathers its profile rank by rank (what a total beyond an MPI count does at
    # some 15,000 ranks): the same profile as the preloaded run's one gather.
    linked_env = dict(
        os.environ,
        PXQ_MSGPROF_OUT=str(prof),
        PXQ_MSGPROF_GATHER_MAX="1",
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    )
    q = subprocess.run(
        [mpirun, "-np", "3", "--oversubscribe", str(BUILD / "bin" / "pxq-traffic-linked"), "4", "1024"],
        capture_output=True,
        text=True,
        timeout=120,
        env=linked_env,
    )
    if q.returncode != 0:
        fail(f"linked program exited {q.returncode}\n{q.stdout}{q.stderr}")
    recs = [r for r in read(prof) if r["app"] == "msgprof"]
    if len(recs) != 2:
        fail(f"{len(recs)} profiles, expected 2 (preloaded, linked)")
    b = bin_of(1024)
    for rec in recs:
        expected = sorted([(r, (r + 1) % 3, b, 4, 4096) for r in range(3)] + [(r, r, b, 1, 1024) for r in range(3)])
        if sorted(map(tuple, rec["p2p"])) != expected:
            fail(f"ring matrix (with one self message per rank) {rec['p2p']}")
        if rec["excluded"]["calls"] != 6:  # a barrier and an allreduce per rank in MPI_Pcontrol(0) .. (1)
            fail(f"calls left out by MPI_Pcontrol: {rec['excluded']}, expected 6")
        time = rec["time_in_mpi"]
        for call, calls in (("MPI_Alltoall", 3), ("MPI_Send", 6), ("MPI_Start", 3), ("MPI_Sendrecv", 3)):
            if time.get(call, {}).get("calls") != calls or not time[call]["seconds"] > 0:
                fail(f"time in {call}: {time.get(call)}, expected {calls} calls with their seconds")
        if "MPI_Allreduce" in time or "MPI_Barrier" in time:
            fail(f"calls in an MPI_Pcontrol(0) region were timed: {sorted(time)}")
        if not 0 < rec["overhead"]["per_call_ns"] < 1e5:
            fail(f"timer overhead {rec['overhead']}")
        expected = sorted((s, d, b, 1, 1024) for s in range(3) for d in range(3) if s != d)
        if sorted(map(tuple, rec["collective_model"])) != expected:
            fail(f"all-to-all model {rec['collective_model']}")
        if rec["collectives"] != {"alltoall": {"calls": 3, "bytes": 3 * 2048}}:
            fail(f"collective calls {rec['collectives']}")
        if len(rec["placement"]) != 3 or "model" not in rec:
            fail("placement or model note missing")

    # ---- the Fortran bindings (built where there is a Fortran compiler) ----
    fortran = BUILD / "bin" / "pxq-traffic-f"
    if fortran.exists():
        fprof = work / "msgprof-fortran.jsonl"
        p = pxq(
            "profile", "--results", str(fprof), "--", mpirun, "-np", "3", "--oversubscribe", str(fortran), "3", "1024"
        )
        if p.returncode != 0:
            fail(f"profile of the Fortran program exited {p.returncode}\n{p.stdout}{p.stderr}")
        (rec,) = read(fprof)
        if sorted(map(tuple, rec["p2p"])) != [(r, (r + 1) % 3, b, 4, 4096) for r in range(3)]:
            fail(f"Fortran ring matrix (mpi_send, mpi_isend, mpi_sendrecv, mpi_ssend) {rec['p2p']}")
        expected_calls = {
            "alltoall": {"calls": 3, "bytes": 3 * 2048},
            "allreduce": {"calls": 3, "bytes": 24},
            "allgather": {"calls": 3, "bytes": 3 * 1024},
            "gather": {"calls": 3, "bytes": 3 * 1024},
        }
        if rec["collectives"] != expected_calls:
            fail(f"Fortran collective calls {rec['collectives']}, expected {expected_calls}")
        if rec["excluded"]["calls"] != 3 or rec["time_in_mpi"].get("MPI_Ssend", {}).get("calls") != 3:
            fail(f"Fortran mpi_pcontrol or mpi_ssend: {rec['excluded']} {rec['time_in_mpi']}")
        if not any(e[2] == bin_of(8) for e in rec["collective_model"]):
            fail("Fortran allreduce not modelled")

    # ---- msgdist and the allocation study ----
    p = pxq("msgdist", str(prof), "--model", "3x1x1", "--plot", str(work / "msgdist.png"))
    if p.returncode != 0 or "inter-node" not in p.stdout or not (work / "msgdist.png").exists():
        fail(f"msgdist exited {p.returncode}\n{p.stdout}{p.stderr}")
    p = pxq(
        "study",
        "allocation",
        "ring",
        "--ranks",
        "4",
        "--model",
        "2x1x2",
        "--results",
        str(work / "alloc.jsonl"),
        "--",
        "--block",
        "64K",
        "--iterations",
        "2",
    )
    if p.returncode != 0 or "block" not in p.stdout or "cyclic" not in p.stdout:
        fail(f"study allocation exited {p.returncode}\n{p.stdout}{p.stderr}")
    (alloc,) = [r for r in read(work / "alloc-ring-msgprof.jsonl") if r["app"] == "msgprof"]
    if alloc["ranks"] != 4 or not alloc["p2p"]:
        fail("the allocation study's profile is empty")

    # ---- bad input ----
    truncated = work / "truncated.jsonl"
    truncated.write_text(prof.read_text()[:500])
    before = truncated.read_text()
    ring_results = work / "ring.jsonl"
    run_record = Path(__file__).resolve().parents[1] / "python" / "data" / "run-record.json"
    ring_results.write_text(json.dumps(json.loads(run_record.read_text())) + "\n")  # a run, no profile
    cases = [
        (("msgdist", str(prof), "--model", "1x1x2"), "at least 3 cores"),
        (("msgdist", str(prof), "--model", "4x2"), "NODESxSOCKETSxCORES"),
        (("msgdist", str(prof), "--model", "3x1x1", "--alloc", "scatter"), "unknown allocation"),
        (("msgdist", str(ring_results)), "no message profile"),
        (("msgdist", str(truncated)), "truncated"),
        (
            ("profile", "--results", str(work / "x.jsonl"), "--", str(BUILD / "bin" / "pxq-traffic")),
            "not an MPI launcher",
        ),
        (("study", "allocation", "ring", "--ranks", "8", "--model", "2x1x2"), "at least 8 cores"),
        (("probe", "pingpong", "--layout", "1x1"), "at least 2 ranks"),
        (("probe", "rankpairs", "--layout", "1x2", "--repeat", "0"), "--repeat"),
        (("probe", "rankpairs", "--layout", "1x2", "--pairs", "1"), "--pairs 1"),
    ]
    for args, msg in cases:
        p = pxq(*args)
        if p.returncode != 2 or msg not in p.stderr:
            fail(f"{' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}")
    if truncated.read_text() != before:
        fail("a truncated record was overwritten")
    # The damaged files served their cases; what stays in the folder is what records.schema checks.
    truncated.unlink()
    ring_results.unlink()
    print(
        "PASS: ping-pong channels, rank pairs, profiler matrices (preloaded and linked), msgdist, allocation "
        "study, bad input"
    )


if __name__ == "__main__":
    main()
