"""Settled comparisons on this machine's real runs (CTest settle.real, slow):

- identical configurations (the ring 1x2 flat against itself, as two configurations that differ
  only in how an option is spelled): N settled sweeps (4 under CTest), each judged "equivalent" or
  "unsettled", "faster"/"slower" in at most 2 (the rule bounds false calls at 5%, with the slack a
  few sweeps need; the rate itself is the simulation's and the benchmark's, docs/PERFORMANCE.md);
- a known effect: the same ring run with three times the iterations (a work ratio, not a speed
  claim that a machine may refute) settles as "slower" within the rule's blocks, its ratio
  above 1.5x, in every sweep;
- `pxq sweep --precision` end to end: a verdict for the pair (whichever this machine measures),
  exit 0, records carrying their blocks, and `pxq report` judging the file again to the same
  verdict.

usage: check_settle.py WORKDIR [SWEEPS]   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import io
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from driver_check import fail, pxq, records
from rich.console import Console

from pxq.analysis.verdicts import settle
from pxq.core.layout import Layout
from pxq.experiments import settling
from pxq.experiments.runner import RunSpec


def ring(results: Path, *args: str) -> RunSpec:
    """The ring at 1x2, flat, with ARGS."""
    return RunSpec(app="ring", layout=Layout(1, 2), mode="flat", results=results, app_args=list(args))


def identical(work: Path, sweeps: int) -> None:
    base = ring(work / "same.jsonl", "--block", "32M", "--iterations", "6")
    twin = replace(base, app_args=["--block", "32M", "--iterations", "6", "--passes", "8"])  # the default, spelled
    rule = settle.Rule(precision=0.05, max_blocks=9)
    kinds = []
    for k in range(sweeps):
        out = settling.run([base, twin], [(0, 1)], rule, 600, Console(file=io.StringIO()), seed=k)
        v = out.pairs[0].verdict
        kinds.append(v.kind)
        print(f"A vs A sweep {k + 1}: {v.text()}", flush=True)
    wrong = sum(k in ("faster", "slower") for k in kinds)
    print(f"A vs A: {wrong} of {sweeps} called faster or slower, {kinds.count('equivalent')} equivalent")
    if wrong > max(2, sweeps // 10):
        fail(f"identical configurations called different in {wrong} of {sweeps} sweeps: {kinds}")


def known_effect(work: Path, sweeps: int) -> None:
    base = ring(work / "work.jsonl", "--block", "32M", "--iterations", "4")
    triple = replace(base, app_args=["--block", "32M", "--iterations", "12"])
    for k in range(sweeps):
        out = settling.run([base, triple], [(0, 1)], settle.Rule(), 600, Console(file=io.StringIO()), seed=100 + k)
        v = out.pairs[0].verdict
        print(f"4 against 12 iterations, sweep {k + 1}: {v.text()}", flush=True)
        if v.kind != "slower" or v.ratio is None or v.ratio < 1.5:
            fail(f"three times the work did not settle as slower (above 1.5x): {v.text()}")


def end_to_end(work: Path) -> None:
    res = work / "sweep.jsonl"
    p = pxq(
        "sweep", "ring", "--layouts", "1x2", "--modes", "flat,tiled", "--precision", "0.05", "--budget", "3m",
        "--results", str(res), "--", "--block", "64M", "--iterations", "3",
    )  # fmt: skip
    said = re.findall(r"(faster|slower|equivalent within|unsettled after)", p.stdout)
    if p.returncode != 0 or "settled comparisons" not in p.stdout or not said:
        fail(f"pxq sweep --precision: exit {p.returncode}\n{p.stdout}{p.stderr}")
    recs = records(res)
    if not recs or any("block" not in (r.get("driver") or {}).get("settle", {}) for r in recs):
        fail(f"a settled sweep's records carry their block: {recs[:1]}")
    again = pxq("report", str(res))
    if again.returncode != 0 or "as recorded (judged again from the records)" not in again.stdout:
        fail(f"pxq report of a settled sweep: exit {again.returncode}\n{again.stdout}{again.stderr}")
    if said[-1] not in again.stdout:
        fail(f"pxq report judged the sweep's records otherwise than the sweep ({said[-1]!r}):\n{again.stdout}")


def main() -> None:
    work = Path(sys.argv[1])
    # CTest's: a smoke test of the rule on real runs (at most 2 of 4 called different); the rate
    # itself is the simulation's (tests/python) and the 20-sweep benchmark's (docs/PERFORMANCE.md).
    sweeps = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    end_to_end(work)
    known_effect(work, 2)
    identical(work, sweeps)
    print("PASS: settled comparisons on real runs: A vs A, a known effect, pxq sweep --precision and report")


if __name__ == "__main__":
    main()
