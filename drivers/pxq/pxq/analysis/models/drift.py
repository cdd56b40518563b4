"""The machine's drift between its ceilings and its runs, from reference measurements taken beside
the runs.

Ceilings are measured once per machine; the runs they explain come later. On a shared host the
memory bandwidth a core gets can halve in half an hour (other tenants, the host's own load), and
a roofline whose roofs were measured on a quieter machine predicts runs too fast. A reference
re-times one of the ceilings' own measurements beside the runs (`pxq probe reference` takes the
stream at a cache's and at memory's size and every access kind at three sizes, as ranks on 1..N
cores, in about half a minute; a `pxq probe bandwidth --as ranks --kernels update` record is a
stream reference too).

Each reference gives, per core count k, the factor its rate is of the kept curve's at its size:
that curve's drift at that size when it ran. A run's ceilings are the kept ones with each curve
scaled by its own drift at the run's start: the median of the references within 15 minutes of
it (one reference is one timing, as noisy as a run), the nearest one's when none is; between
reference sizes, at the size of each point of the curve (on a log scale; the nearest reference
size's beyond them). The peak flop rate drifts like the stream in a cache. A curve without
references of its own is kept as measured: an access kind's pace is set by its latency and
arithmetic as much as by the bus, so the stream's drift does not say its."""

from __future__ import annotations

import copy
import math
import statistics
from datetime import datetime
from typing import Any

from pxq.core.errors import InputError
from pxq.machine import ceilings as ceil


def _curve(rec: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The ceilings' curve a bandwidth probe record re-times ("stream" for the update kernel, else
    an access kind's name) and its kernel's entry; None for anything else."""
    if rec.get("app") != "probe-bandwidth" or rec.get("status") != "ok" or rec.get("size", {}).get("as") != "ranks":
        return None
    for k in rec.get("kernels", []):
        if k.get("kind") and k.get("kernel") in ceil.kinds():
            return k["kernel"], k
        if not k.get("kind") and k.get("kernel") == "update":
            return "stream", k
    return None


def is_reference(rec: dict[str, Any]) -> bool:
    """A bandwidth probe record of a ceilings' curve: the stream's update or an access kind, as ranks."""
    return _curve(rec) is not None


def _seconds(date: str) -> float:
    try:
        return datetime.fromisoformat(date.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        raise InputError(f"a record's context.date {date!r} is not an ISO 8601 time: drop that record") from None


Factors = dict[str, dict[int, list[tuple[float, list[float]]]]]


def factors(refs: list[dict[str, Any]], c: dict[str, Any]) -> Factors:
    """Per curve ("stream" or a kind) and reference size (bytes per core): (time, [factor with
    1..N cores busy]) per reference, in time order. A factor is the reference's total rate over
    the kept curve's at that size and core count; a kind these ceilings lack is left out."""
    out: Factors = {}
    for rec in refs:
        found = _curve(rec)
        if found is None:
            continue
        curve, kernel = found
        size = int(rec["size"]["array_bytes"])
        per_k = []
        for row in kernel["rows"]:
            if curve == "stream":
                per_k.append(row["total_gbs"] / ceil.bandwidth(c, size, row["cores"]))
            else:
                kept = ceil.kind_rate(c, curve, size, row["cores"])
                field = "total_gflops" if ceil.kinds()[curve]["unit"] == "gflops" else "total_gbs"
                if kept:
                    per_k.append(row[field] / kept)
        if per_k:
            out.setdefault(curve, {}).setdefault(size, []).append((_seconds(rec["context"]["date"]), per_k))
    for sizes in out.values():
        for series in sizes.values():
            series.sort(key=lambda tf: tf[0])
    return out


WINDOW = 15 * 60  # seconds either side of a run whose references say its machine


def _at_time(series: list[tuple[float, list[float]]], when: float, cores: int) -> float:
    """The factor with `cores` busy at time `when`: the median of the references within WINDOW of
    it (one reference is one timing, as noisy as a run), else the nearest one's."""

    def of(f: list[float]) -> float:
        return f[max(0, min(cores, len(f)) - 1)]

    near = [of(f) for t, f in series if abs(t - when) <= WINDOW]
    if near:
        low, high = _spread(near)
        return 1.0 if low <= 1.0 <= high else statistics.median(near)
    return of(min(series, key=lambda tf: abs(tf[0] - when))[1])


def _spread(values: list[float]) -> tuple[float, float]:
    """The references' own noise: their quartiles (four or more), else their range. A move
    within it is not told apart from the kept ceilings, so it is not applied."""
    if len(values) >= 4:
        q = statistics.quantiles(values, n=4)
        return q[0], q[2]
    return min(values), max(values)


Series = dict[int, list[tuple[float, list[float]]]]


def at(series: Series, when: float, size: float, cores: int) -> float:
    """One curve's drift at time `when` for `size` bytes per core with `cores` busy."""
    sizes = sorted(series)
    if size <= sizes[0]:
        return _at_time(series[sizes[0]], when, cores)
    for lo, hi in zip(sizes, sizes[1:]):
        if size <= hi:
            w = math.log(size / lo) / math.log(hi / lo)
            return _at_time(series[lo], when, cores) * (1 - w) + _at_time(series[hi], when, cores) * w
    return _at_time(series[sizes[-1]], when, cores)


def _scale_rows(rows: list[dict[str, float]], series: Series, when: float, size: float) -> None:
    for row in rows:
        f = at(series, when, size, int(row["cores"]))
        for key in ("median", "min", "max"):
            row[key] *= f


def scaled(c: dict[str, Any], fs: Factors, when: float) -> dict[str, Any]:
    """The ceilings as the references say the machine was at time `when` (a copy). A curve
    without references of its own is kept as measured: an access kind's pace is set by its
    latency and arithmetic as much as by the bus, so the stream's drift does not say its."""
    out = copy.deepcopy(c)
    stream = fs.get("stream")
    if stream:
        for point in out["curve"]:
            _scale_rows(point["gbs"], stream, when, point["bytes"])
        _scale_rows(out["peak_gflops"], stream, when, c["levels"][0]["bytes"] / 2)  # drifts like a cache's sweep
    for kind, curve in (out.get("kinds") or {}).items():
        for point in curve if fs.get(kind) else []:
            _scale_rows(point["rate"], fs[kind], when, point["bytes"])
    return out


def for_run(rec: dict[str, Any], c: dict[str, Any], fs: Factors | None) -> dict[str, Any]:
    """The ceilings that apply to this run: scaled by the drift at its start when there are references."""
    date = rec.get("context", {}).get("date")
    if not fs or not date:
        return c
    return scaled(c, fs, _seconds(date))


def summary(fs: Factors, cores: int) -> list[dict[str, Any]]:
    """Per curve and reference size: how many references, the median factor with `cores` busy, its
    range over them and its quartiles (the range with fewer than 4): how far the machine moved
    while the runs were taken, one noisy reference aside; and whether the kept curve lies within
    those quartiles (a move the references cannot tell from their own noise, not applied)."""
    out = []
    for curve in ["stream", *ceil.kinds()]:
        for size in sorted(fs.get(curve, {})):
            values = [f[max(0, min(cores, len(f)) - 1)] for _, f in fs[curve][size]]
            low, high = _spread(values)
            out.append(
                {
                    "curve": curve,
                    "bytes": size,
                    "references": len(values),
                    "median": statistics.median(values),
                    "min": min(values),
                    "max": max(values),
                    "quartiles": [low, high],
                    "within_noise": low <= 1.0 <= high,  # not applied (see _at_time), over all of them
                }
            )
    return out
