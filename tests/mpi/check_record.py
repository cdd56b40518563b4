"""What the driver adds to every real run's record (CTest driver.record): its start-up as
phases of their own, and how close it came to this machine's physical limits:

- the app's time block holds MPI_Init (slowest rank) within rank 0's seconds from main to its
  record (`app_wall`); the driver adds the launcher's share (`launch`: process start, finalize,
  teardown), none of them a phase of the timed iterations;

- with ceilings kept for this machine (a file of the check's own, PXQ_CEILINGS: a flat peak and
  memory bandwidth, so the roof can be worked out here by hand), `pxq run cg` writes a `roof`
  block whose roof_s is each declared phase's flops at the peak or its compulsory bytes at memory's
  bandwidth, whichever is longer, summed; phases_s their measured time; of_roof the ratio;
- `pxq report` shows it in its `of roof` column; against a memory bandwidth far below what any
  run gets, the run beats the roof and the report flags it (`(!)` and the above-roof note);
- without ceilings, the record says why it has no fraction (`of_roof` null, `why` naming
  `pxq roofline`), and the run did not wait for a measurement;
- every record passes `pxq validate`.

usage: check_record.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import math
import os

from driver_check import fail, fresh_workdir, pxq, records

from pxq.machine import caches, envinfo
from pxq.machine import ceilings as ceil

PEAK, MEMORY = 80.0, 20.0  # GFlop/s and GB/s of the whole 2-core node in the check's ceilings


def rows(total: float) -> list[dict]:
    return [{"cores": c, "median": total * c / 2, "min": total * c / 2, "max": total * c / 2} for c in (1, 2)]


def kept(memory: float) -> dict:
    """Ceilings for this machine with a flat bandwidth curve and peak, as pxq keeps them."""
    return {
        "format": ceil.FORMAT,
        "key": caches.key(envinfo.machine()),
        "cpu_model": "check_roof",
        "cores": 2,
        "date": "2026-11-28T00:00:00Z",
        "levels": [
            {"name": "L1", "bytes": 32 << 10, "shared": False},
            {"name": "L2", "bytes": 1 << 20, "shared": False},
        ],
        "curve": [{"bytes": b, "gbs": rows(memory)} for b in (16 << 10, 1 << 20, 1 << 30)],
        "peak_gflops": rows(PEAK),
        "kinds": {},
    }


def run_cg(results, ceilings) -> dict:
    os.environ["PXQ_CEILINGS"] = str(ceilings)
    out = pxq("run", "cg", "--layout", "1x2", "--results", str(results), "--", "--class", "S", timeout=300)
    if out.returncode != 0:
        fail(f"pxq run cg: exit {out.returncode}\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return records(results)[-1]


def by_hand(rec: dict, memory: float) -> float:
    """The physical roof of the record's declared phases, worked out here: per rank of a 2-core
    node (k = 2 busy, one thread), half the node's peak and half its bandwidth."""
    peak, bw = PEAK / 2 * 1e9, memory / 2 * 1e9
    return sum(max(w["rank_max"]["flops"] / peak, w["rank_max"]["memory_bytes"] / bw) for w in rec["work"].values())


def main() -> None:
    work = fresh_workdir()
    if envinfo.cores() < 2:
        fail("this check needs 2 cores (the run is 1x2)")
    c = work / "ceilings.json"
    os.environ["PXQ_CEILINGS"] = str(c)
    if ceil.save(kept(MEMORY)) is None:
        fail(f"could not write {c}")

    rec = run_cg(work / "cg.jsonl", c)
    t = rec["time"]
    if not (0 < t.get("mpi_init", 0) < t.get("app_wall", 0) and t.get("launch", 0) > 0):
        fail(f"the record's start-up: { ({k: t.get(k) for k in ('mpi_init', 'app_wall', 'launch')}) }")
    roof = rec.get("roof") or {}
    if not isinstance(roof.get("of_roof"), float):
        fail(f"the run's record has no fraction of its roof: {roof}")
    phases = sum(w["seconds"] for w in rec["work"].values())
    expect = by_hand(rec, MEMORY)
    if not math.isclose(roof["roof_s"], expect, rel_tol=1e-3, abs_tol=2e-6):
        fail(f"roof_s {roof['roof_s']} against {expect:.6g} s worked out by hand")
    if not math.isclose(roof["phases_s"], phases, rel_tol=1e-3, abs_tol=2e-6):
        fail(f"phases_s {roof['phases_s']} against the declared phases' {phases:.6g} s")
    if not math.isclose(roof["of_roof"], expect / phases, rel_tol=2e-3):
        fail(f"of_roof {roof['of_roof']} against {expect / phases:.4g}")
    if roof["cores"] != 2 or roof["memory_gbs"] != MEMORY or roof["peak_gflops"] != PEAK:
        fail(f"the roof names other limits than the kept ones: {roof}")
    shown = pxq("report", str(work / "cg.jsonl"))
    if "of roof" not in shown.stdout or f"{100 * roof['of_roof']:.0f}%" not in shown.stdout:
        fail(f"pxq report does not show the run's share of its roof ({roof['of_roof']}):\n{shown.stdout}")

    slow = work / "slow-ceilings.json"  # a bus far slower than any run gets: every run beats it
    os.environ["PXQ_CEILINGS"] = str(slow)
    ceil.save(kept(0.001))
    fast = run_cg(work / "fast.jsonl", slow)
    if not (fast["roof"]["of_roof"] or 0) > 1.05:
        fail(f"a run against a 1 MB/s bus is not above its roof: {fast['roof']}")
    shown = pxq("report", str(work / "fast.jsonl"))
    if "(!)" not in shown.stdout or "physical roof" not in shown.stdout:
        fail(f"pxq report does not flag a run above its physical roof:\n{shown.stdout}")

    none = run_cg(work / "none.jsonl", work / "no-such-ceilings.json")
    if none["roof"]["of_roof"] is not None or "pxq roofline" not in none["roof"].get("why", ""):
        fail(f"without ceilings the record should say why it has no fraction: {none['roof']}")
    if (work / "no-such-ceilings.json").exists():
        fail("a run measured the ceilings itself: it must never wait for that")

    valid = pxq("validate", str(work))
    if valid.returncode != 0 or " 0 invalid" not in valid.stdout:
        fail(f"pxq validate:\n{valid.stdout}{valid.stderr}")
    print(
        f"roof: of_roof {roof['of_roof']:.3f} ({roof['roof_s']:.4g} s of {roof['phases_s']:.4g} s), "
        "flagged above, null without"
    )


if __name__ == "__main__":
    main()
