"""The POP efficiency breakdown over a report's rows. Each run record carries its own factors
(`efficiency`: load balance, communication efficiency, their product the parallel efficiency,
from every rank's elapsed and communication time). Across runs, computation scaling compares
the useful CPU time a configuration spent with its base's: the run of the same problem (and
allocation, and group) on the fewest workers, flat where there is a tie. Global efficiency is
parallel efficiency times computation scaling, as the POP methodology defines them."""

from __future__ import annotations

from typing import Any


def factors(rec: dict[str, Any], threads: int) -> tuple[float, float, float, float] | None:
    """(load balance, communication, parallel, useful CPU seconds) of a run, None without them."""
    e = rec.get("efficiency") or {}
    if not e.get("parallel"):
        return None
    useful = sum(e.get("useful_s") or []) * threads
    return float(e["load_balance"]), float(e["communication"]), float(e["parallel"]), useful


def base_of(row: Any, rows: list[Any]) -> Any | None:
    """The row whose useful time the others' computation scaling is over."""
    same = [
        r
        for r in rows
        if (r.app, r.size, r.alloc, r.extra) == (row.app, row.size, row.alloc, row.extra) and r.median_efficiency
    ]
    if not same:
        return None
    return min(same, key=lambda r: (r.layout.cores, r.mode.split()[0] != "flat", r.mode))


def add_scaling(rows: list[Any]) -> None:
    """Each row's computation scaling (base useful CPU time over its own) and global efficiency."""
    for row in rows:
        mine, base = row.median_efficiency, None
        b = base_of(row, rows) if mine else None
        if b is not None:
            base = b.median_efficiency
        if mine and base and mine[3] > 0:
            row.computation_scaling = base[3] / mine[3]
            row.global_efficiency = mine[2] * row.computation_scaling
