"""The contention tools through the driver: `pxq probe stride` (alone and as 2 placed copies)
and `pxq probe bandwidth` (ranks and threads) write complete records and plots; `pxq run
--placement` records what was planned and what was achieved; `pxq study contention` runs every
layout and placement; bad input (stride larger than the array, zero iterations, a placement
that cannot be satisfied, custom cores that do not exist) exits 2 and writes no record.

usage: check_contention.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from driver_check import fail, pxq, records


def main() -> None:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cores = len(os.sched_getaffinity(0))

    # ---- stride: every (size, stride) point, two copies on two cores ----
    res = work / "stride.jsonl"
    p = pxq(
        "probe",
        "stride",
        "--max",
        "64K",
        "--accesses",
        "20000",
        "--repeat",
        "1",
        "--copies",
        "2",
        "--results",
        str(res),
    )
    if p.returncode != 0:
        fail(f"stride probe exited {p.returncode}\n{p.stdout}{p.stderr}")
    (rec,) = records(res)
    sizes = sorted({pt["bytes"] for pt in rec["points"]})
    if sizes != [4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536]:
        fail(f"array sizes {sizes}")
    for size in sizes:
        strides = sorted(pt["stride"] for pt in rec["points"] if pt["bytes"] == size)
        expected, s = [], 8
        while s <= size // 2:
            expected.append(s)
            s *= 2
        if strides != expected:
            fail(f"strides at {size}: {strides}")
    for pt in rec["points"]:
        if not (pt["ns"] > 0 and len(pt["ns_copies"]) == 2 and all(x > 0 for x in pt["ns_copies"])):
            fail(f"bad point {pt}")
    if len(rec["blocks"]) != len(sizes) or not all(b["gbs"] > 0 for b in rec["blocks"]):
        fail("block variant missing")
    if len(set(rec["placement"]["cpus"])) != 2 or rec["placement"]["mode"] != "packed":
        fail(f"copies not on two cores: {rec['placement']}")
    if [c["level"] for c in rec["detection"]["caches"]] != ["L1d", "L2", "L3"]:
        fail(f"cache levels {rec['detection']['caches']}")
    if not (work / "stride.png").stat().st_size > 10000:
        fail("no stride plot")

    # ---- bandwidth: ranks and threads, every kernel on 1..N cores ----
    res = work / "bandwidth.jsonl"
    p = pxq("probe", "bandwidth", "--array", "4M", "--repeat", "2", "--results", str(res))
    if p.returncode != 0:
        fail(f"bandwidth probe exited {p.returncode}\n{p.stdout}{p.stderr}")
    recs = records(res)
    if [r["size"]["as"] for r in recs] != (["ranks", "threads"] if cores > 1 else ["ranks"]):
        fail(f"bandwidth records {[r['size'] for r in recs]}")
    for r in recs:
        if [k["kernel"] for k in r["kernels"]] != ["copy", "scale", "add", "triad"]:
            fail(f"kernels {r['kernels']}")
        for k in r["kernels"]:
            if [row["cores"] for row in k["rows"]] != list(range(1, cores + 1)):
                fail(f"core counts {k['rows']}")
            if not all(row["total_gbs"] > 0 for row in k["rows"]):
                fail(f"bandwidth {k}")
            if k["saturation"] is None and not k["still_scaling"]:
                fail(f"neither a saturation point nor still scaling: {k}")
    if not (work / "bandwidth.png").exists():
        fail("no bandwidth plot")

    # ---- placement: planned cores recorded, achieved sharing and as_planned ----
    if cores >= 2:
        res = work / "placed.jsonl"
        for mode, extra in (("spread", []), ("custom", ["--cores", "1,0"])):
            small = "--block 1M --iterations 2".split()
            p = pxq(*"run ring --layout 1x2 --placement".split(), mode, *extra, "--results", str(res), "--", *small)
            if p.returncode != 0:
                fail(f"run --placement {mode} exited {p.returncode}\n{p.stdout}{p.stderr}")
        spread, custom = records(res)
        for r in (spread, custom):
            summary = r["placement_summary"]
            if summary["as_planned"] is not True or sum(summary["rank_pairs_on_a_node"].values()) != 1:
                fail(f"placement summary {summary}")
        if [pl["threads"][0]["cpu"] for pl in custom["placement"]] != [1, 0]:
            fail(f"custom cores not honoured: {custom['placement']}")
        if custom["driver"]["placement"]["cpus"] != [[1], [0]] or spread["placement_summary"]["requested"] != "spread":
            fail("planned placement not recorded")

        # ---- the contention study: 1x2 packed and spread, 2x1 ----
        res = work / "study.jsonl"
        args = "study contention ring --repeat 1 --results".split()
        p = pxq(*args, str(res), "--", *"--block 1M --iterations 2".split())
        if p.returncode != 0 or "vs qx1" not in p.stdout:
            fail(f"study exited {p.returncode}\n{p.stdout}{p.stderr}")
        recs = records(res)
        runs = [r for r in recs if r.get("kind") == "run"]
        seen = sorted(
            (f"{r['layout']['nodes']}x{r['layout']['ranks_per_node']}", r["driver"]["placement"]["mode"]) for r in runs
        )
        if seen != [("1x2", "packed"), ("1x2", "spread"), ("2x1", "packed")]:
            fail(f"study runs {seen}")
        # After its runs, the study's own record: the rows as printed and the runs they came from.
        study = recs[-1]
        if study.get("kind") != "study" or sorted(study["run_ids"]) != sorted(r["driver"]["run_id"] for r in runs):
            fail(f"the study record does not follow its runs: {study.get('kind')}")
        redraw = work / "study-again.png"
        p = pxq("report", str(res), "--plot", str(redraw))
        if p.returncode != 0 or not redraw.is_file():
            fail(f"report did not redraw the study's chart: exit {p.returncode}\n{p.stdout}{p.stderr}")

    # ---- bad input: exit 2, no record ----
    bad = work / "bad.jsonl"
    cases = [
        ("probe", "stride", "--max", "64K", "--stride", "64K"),  # stride larger than half the array
        ("probe", "stride", "--max", "64K", "--accesses", "0"),  # zero iterations
        ("probe", "stride", "--max", "64K", "--copies", str(cores + 1)),  # more copies than cores
        ("probe", "stride", "--max", "64K", "--placement", "custom", "--cores", "0,999"),
        ("probe", "stride", "--max", "64K", "--copies", "0"),
        ("probe", "bandwidth", "--kernels", "fma"),
        ("probe", "bandwidth", "--max-cores", str(cores + 1)),
        ("run", "ring", "--layout", f"1x{cores}", "--placement", "custom"),
        ("run", "ring", "--layout", f"1x{cores}", "--placement", "spread", "--oversubscribe", "--threads", "2"),
        ("run", "ring", "--placement", "packed", "--cores", "0"),
    ]
    for args in cases:
        p = pxq(*args, "--results", str(bad))
        if p.returncode != 2 or "error" not in p.stderr:
            fail(f"{' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}")
    p = pxq("probe", "stride", "--max", "64K", "--stride", "64K", "--results", str(bad))
    if "larger than half the largest array" not in p.stderr:
        fail(f"stride message: {p.stderr}")
    exe = Path(os.environ["PXQ_BUILD_DIR"]) / "bin" / "pxq-probe-stride"
    for args in (
        ["--stride", "12", "--max", "64K"],
        ["--max", "64K", "--repeat", "0"],
        ["--max", "64K", "--placement", "nearest"],
    ):
        q = subprocess.run([str(exe), *args, "--json", str(bad)], capture_output=True, text=True, timeout=60)
        if q.returncode != 2 or "error" not in q.stderr:
            fail(f"pxq-probe-stride {args}: exit {q.returncode} {q.stderr!r}")
    if bad.exists():
        fail("bad input wrote a record")
    print("PASS: stride and bandwidth probes, placement records, contention study, bad input")


if __name__ == "__main__":
    main()
