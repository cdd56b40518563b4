"""How close a run came to this machine's physical limits: the "roof" its record carries.

From the work the proxy declares (its phases' flops and compulsory bytes, for the slowest rank)
and this machine's kept ceilings (pxq.machine.ceilings: the memory bandwidth of the largest
sweep with the run's cores busy, the peak flop rate on those cores), the time the physical
limits allow the declared phases (`roof_s`: per phase, the longer of its flops at the peak and its
compulsory bytes at memory's bandwidth), beside the phases' measured time (`phases_s`) and the
fraction of the roof the run reached (`of_roof` = roof_s / phases_s: 1 is the limit). Beside
it, the access-kind roof pxq roofline predicts with (`model_s`: each phase at its own kind's
measured rate, and `model_binds`: the ceiling that binds its heaviest phase, "update (L1)
(bucket)"), which explains a run, where the physical roof says how far the kernel itself is
from what the hardware allows: a run far below its physical roof and near `model_s` is held by
that other limit (random updates, gathers, a stencil's loads), by model_s / roof_s.

A run above ROOF_SLACK of its physical roof ran faster than memory allows: its working set was
served from a cache (the roof counts every compulsory byte from memory), or the ceilings were
taken on a disturbed machine. Without kept ceilings the record says so and how to get them
(`of_roof` null, `why`); the run itself never waits for a measurement."""

from __future__ import annotations

import math
from typing import Any

from pxq.analysis.models import roofline
from pxq.machine import ceilings as ceil

ROOF_SLACK = roofline.ROOF_SLACK
NO_CEILINGS = (
    "no ceilings kept for this machine: `pxq roofline` on any of its records measures them once "
    "(a few minutes); runs after that carry their fraction"
)
ABOVE = (
    "above the physical roof: its working set was served from a cache "
    "(the roof counts every compulsory byte from memory)"
)


def mark(rec: dict[str, Any], ceilings: dict[str, Any] | None) -> dict[str, Any]:
    """The record's "roof" block (see the module's docstring)."""
    work = rec.get("work")
    if not work:
        return {"of_roof": None, "why": "the run declares no work"}
    if ceilings is None:
        return {"of_roof": None, "why": NO_CEILINGS}
    try:
        k, _, t = roofline.cores_used(rec, ceilings)
        roof, phases = roofline.physical(work, ceilings, k, t)
        each = {name: roofline.phase_prediction(w, ceilings, k, t) for name, w in work.items()}
        model = sum(p["seconds"] for p in each.values())
        heaviest = max(each, key=lambda n: each[n]["seconds"])
        peak = ceil.at(ceilings["peak_gflops"], k)
        memory = ceil.at(ceilings["curve"][-1]["gbs"], k)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return {"of_roof": None, "why": "the kept ceilings lack a figure this run needs: `pxq roofline --remeasure`"}
    if not (phases > 0 and math.isfinite(roof)):
        return {"of_roof": None, "why": "its declared phases took no measurable time"}
    flops_s = sum(w["rank_max"]["flops"] for w in work.values()) / (peak / k * 1e9 * t)
    bytes_s = sum(w["rank_max"]["memory_bytes"] for w in work.values()) / (memory / k * 1e9 * t)
    return {
        "of_roof": _digits(roof / phases),
        "roof_s": _digits(roof),
        "phases_s": _digits(phases),
        "model_s": _digits(model),
        "model_binds": f"{each[heaviest]['binding']} ({heaviest})",
        "cores": k,
        "memory_gbs": _digits(memory),
        "peak_gflops": _digits(peak),
        "binds": "memory" if bytes_s >= flops_s else "flops",
        "ceilings_date": str(ceilings.get("date", "?")),
    }


def _digits(x: float) -> float:
    """Five significant digits: a fraction of 0.0336 keeps as many as one of 0.9."""
    return float(f"{x:.5g}")


def attach(rec: dict[str, Any]) -> None:
    """Puts the roof block into a run's record, against the ceilings kept for the machine its
    context names (none kept: the block says so)."""
    rec["roof"] = mark(rec, ceil.load(rec.get("context") or {}))


def above(block: Any) -> bool:
    """Whether a record's roof block says the run beat the physical limits."""
    return isinstance(block, dict) and isinstance(block.get("of_roof"), (int, float)) and block["of_roof"] > ROOF_SLACK
