"""Counters end to end through the driver:

- `--counters` (hw): on a machine without a PMU the run goes ahead, and its record and output say
  that no hardware counters are available and how to get simulated ones (never zeros); with a
  PMU, the record holds counted instructions;
- `--counters sim` on the ring, blocks four times this machine's L2, untiled vs 256 KiB tiles:
  the untiled run misses the L2 once per line per pass (the simulator is set to a cache smaller
  than the block, and no pass may be fused into another), the tiled one at least 4x less; the
  records validate, the report shows the misses, and no valgrind process is left;
- `pxq study counters mg --class S`: a valid study record with misses for every variant;
- the simulator's build with another backend: exit 2, no record.

usage: check_counters.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from driver_check import fail, pxq, records

from pxq.core import registry
from pxq.machine import counters, envinfo


def check_hw(work: Path) -> None:
    res = work / "hw.jsonl"
    p = pxq("run", "ring", "--layout", "1x2", "--counters", "--results", str(res), "--", "--block", "1M")  # hw
    if p.returncode != 0:
        fail(f"--counters hw exited {p.returncode}\n{p.stdout}{p.stderr}")
    (rec,) = records(res)
    c = rec.get("counters") or fail("--counters hw: no counters in the record")
    if counters.pmu_present():
        if c["source"] not in ("papi", "perf_event") or c["total"].get("instructions", 0) <= 0:
            fail(f"a PMU is here, but the record counted nothing: {c}")
    else:
        if c["source"] != "none" or "total" in c or "--counters sim" not in c.get("note", ""):
            fail(f"no PMU here: the record must say so and point at --counters sim, not count: {c}")
        if "no hardware counters" not in p.stdout:
            fail(f"no PMU here: the output must say so\n{p.stdout}")
    print(f"hw: {c['source']}: {c.get('note', '')[:100]}")


def check_ring(work: Path) -> None:
    l2 = envinfo.machine()["caches"]["l2"]["bytes"]
    block = 4 * l2
    passes, iterations = 8, 2
    res = work / "sim.jsonl"
    args = ["--block", str(block), "--passes", str(passes), "--iterations", str(iterations)]
    p = pxq(
        "sweep", "ring", "--layouts", "1x2", "--modes", "flat,tiled", "--tiles", "256K", "--repeat", "1",
        "--counters", "sim", "--results", str(res), "--", *args,
    )  # fmt: skip
    if p.returncode != 0:
        fail(f"--counters sim sweep exited {p.returncode}\n{p.stdout}{p.stderr}")
    recs = {r["variant"]["mode"]: r for r in records(res)}
    flat, tiled = recs["flat"]["counters"], recs["tiled"]["counters"]
    for c in (flat, tiled):
        if c["source"] != "callgrind" or not c["simulated"] or len(c["per_rank"]) != 2:
            fail(f"a simulated run's counters: {c}")
    # Two ranks, every line of the block once per pass: a block four times the L2 cannot stay in
    # it from one pass to the next, and each pass ends at a compiler barrier (no pass is fused
    # into another's sweep, as gcc's unroll-and-jam did before it), so K passes are K sweeps.
    lines = 2 * iterations * passes * block / 64
    f, t = flat["total"]["l2_misses"], tiled["total"]["l2_misses"]
    print(f"ring {block >> 20} MiB blocks: L2 misses untiled {f:.3g}, tiled {t:.3g} ({f / t:.1f}x); lines {lines:.3g}")
    if f < 0.9 * lines:
        fail(f"untiled misses {f} < 0.9 x {lines} lines, one sweep per pass: passes fused, or the L2 holds the block?")
    if 4 * t > f:
        fail(f"tiled L2 misses {t} are not 4x below untiled {f}")
    v = pxq("validate", str(res))
    if v.returncode != 0:
        fail(f"records do not validate\n{v.stdout}{v.stderr}")
    r = pxq("report", str(res))
    if r.returncode != 0 or "L2" not in r.stdout or "cache simulator" not in r.stdout:
        fail(f"the report shows no misses or no simulated flag\n{r.stdout}{r.stderr}")
    left = subprocess.run(["pgrep", "-f", "valgrind"], capture_output=True, text=True).stdout.strip()
    if left:
        fail(f"valgrind processes left behind: {left}")


def check_study(work: Path) -> None:
    res = work / "study.jsonl"
    p = pxq("study", "counters", "mg", "--class", "S", "--repeat", "1", "--counters", "sim", "--results", str(res))
    if p.returncode != 0:
        fail(f"study counters exited {p.returncode}\n{p.stdout}{p.stderr}")
    study = records(res)[-1]
    if study.get("kind") != "study" or len(study["rows"]) != 3:
        fail(f"study record: {study}")
    for row in study["rows"]:
        if not row.get("l2_misses") or not row.get("median"):
            fail(f"a variant without misses or time: {row}")
    v = pxq("validate", str(res))
    if v.returncode != 0:
        fail(f"study records do not validate\n{v.stdout}{v.stderr}")
    print("study:", ", ".join(f"{r['variant']} {r['l2_misses']:.3g}" for r in study["rows"]))


def check_bad(work: Path) -> None:
    if "kokkos" not in registry.available_backends():
        return
    res = work / "bad.jsonl"
    p = pxq("run", "ring", "--backend", "kokkos", "--counters", "sim", "--results", str(res))
    if p.returncode != 2 or "openmp backend only" not in p.stderr or "Traceback" in p.stderr or res.exists():
        fail(f"--counters sim --backend kokkos: {p.returncode}\n{p.stderr}")


def main() -> None:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    check_hw(work)
    if counters.valgrind() is None:
        fail("valgrind is missing: ./pxq test installs it (apt-get install valgrind)")
    check_ring(work)
    check_study(work)
    check_bad(work)
    print("PASS: counters (hardware: said why not or counted; simulated: tiled ring 4x fewer L2 misses; study)")


if __name__ == "__main__":
    main()
