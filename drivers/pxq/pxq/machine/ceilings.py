"""This machine's ceilings for the roofline, measured once and kept.

A roofline is only as good as its roofs, and a layout changes them: the memory bandwidth a rank
gets falls as more ranks share the bus, and a shared cache shrinks per rank. So every ceiling
is measured as a function of how many cores use it at once (1..N), with the spread of
`REPEATS` runs:

- bandwidth against the bytes each core sweeps, from 16K to well past the last cache level:
  pxq-probe-bandwidth's in-place update (one read and one write per element, as the proxies'
  sweeps), as ranks on 1..N cores, swept often enough to time. A curve, not one figure per
  level: a VM's last level may hold more than its latency step suggests (the host's cache),
  and the curve measures what a sweep of that size gets. The cache levels the stride probe
  found (pxq.machine.caches) name the ranges;
- the peak flop rate: pxq-ring's affine update with 32 updates per element on an L1-resident
  block (a compute-bound kernel, as the Empirical Roofline Toolkit's), on 1..N cores;
- the attainable rate of each access kind a stream does not model (kinds()), against the bytes
  each core sweeps, on 1..N cores: pxq-probe-bandwidth --kind's kernels, which count their
  bytes and flops as the proxies' phases of that kind declare theirs. These are the roofline's
  lower ceilings: an SpMV's gathers or a sort's random counters never reach the stream's
  bandwidth, a 27-point stencil or an FFT never reaches the peak flop rate.

Kept in $PXQ_CEILINGS, else $XDG_CACHE_HOME/pxq/ceilings.json, else ~/.cache/pxq/ceilings.json,
keyed like the cache profile (host, processor, hwloc's figures); written whole. The
measurement itself is pxq.probes.ceilprobe's."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

from pxq.core import door, outputs, registry
from pxq.core.errors import InputError
from pxq.core.layout import format_bytes
from pxq.machine import caches, hostload

# 7: levels named by the level of hwloc's each measured step matched (6 named them in order, so a
# VM whose L1 step the probe missed called its L2 "L1" and its L3 share a private "L2"), and the
# interp kind (MG's interpolation) measured; 8: the alltoall kind (MPI's exchange among the
# node's ranks, which IS's key exchange is priced at) measured.
FORMAT = 8
# Kinds that exchange data among a node's ranks: alone, a rank's all-to-all is a copy to
# itself (a rate not to compare with the busy node's), and a rank's threads do not split it.
MESSAGE_KINDS = frozenset({"alltoall"})
HWLOC_LEVELS = ("l1d", "l2", "l3")
REPEATS = 3
SWEPT = 64 << 20  # bytes each timed repeat streams at least
FLOP_BLOCK_UPDATES = 32


@functools.cache
def kinds() -> dict[str, dict[str, Any]]:
    """Per access kind, in the registry's order (pxq-envinfo registry's access_kinds, the table
    of pxq/probes/kinds.hpp): the unit its ceiling is in ("gflops" for kernels whose arithmetic
    sets their pace, "gbs", declared bytes per second, for irregular access), the size of the
    phase that sets it ("footprint" per core, or the "working_set" one worker reuses), what
    it stands for and, for a kind in GFlop/s, the bytes its kernel takes from memory per flop
    ("memory_bytes_per_flop"; 0 for the others)."""
    return {
        k["name"]: {**{f: k[f] for f in ("unit", "size", "what")}, "memory_bytes_per_flop": _per_flop(k)}
        for k in registry.registry()["access_kinds"]
    }


def _per_flop(kind: dict[str, Any]) -> float:
    value = kind.get("memory_bytes_per_flop")
    return float(value) if isinstance(value, (int, float)) and value > 0 else 0.0


def path() -> Path:
    return caches.kept_path("PXQ_CEILINGS", "ceilings.json")


def levels(profile: dict[str, Any]) -> list[dict[str, Any]]:
    """The cache levels the stride probe measured (capacity: the largest size that still fit),
    each named by the level of hwloc's the profile matched its step to, so that a step the probe
    missed (a VM's L1, its latency hidden by prefetching) does not move the others' names: L1 and
    L2 private, L3 and beyond shared by every core. A step matched to no level takes the name
    after the one before it; hwloc's sizes where nothing was measured."""
    steps = sorted(profile.get("steps") or [], key=lambda s: s["fits"])
    if not steps:
        hw = profile.get("hwloc", {})
        sizes = [hw[k] for k in HWLOC_LEVELS if hw.get(k)]
        return [{"name": f"L{i + 1}", "bytes": int(b), "shared": i >= 2} for i, b in enumerate(sizes)]
    matched: dict[tuple[int, int], int] = {}
    for row in profile.get("levels") or []:
        step = row.get("step")
        if step and row.get("level") in HWLOC_LEVELS:
            matched.setdefault((step["fits"], step["spills"]), HWLOC_LEVELS.index(row["level"]) + 1)
    out, number = [], 0
    for s in steps:
        number = max(number + 1, matched.get((s["fits"], s["spills"]), 0))
        out.append({"name": f"L{number}", "bytes": int(s["fits"]), "shared": number >= 3})
    return out


def load(machine: dict[str, Any]) -> dict[str, Any] | None:
    try:
        data = door.json_doc(path(), "the kept ceilings (PXQ_CEILINGS)", "they are measured again")
    except (FileNotFoundError, InputError):
        return None  # measured again; a file of another kind is then refused, never replaced
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != caches.key(machine):
        return None
    return data


def save(data: dict[str, Any]) -> Path | None:
    """Written whole; None when the folder cannot be written."""
    return outputs.keep_json(path(), data, "ceilings", "the kept ceilings (PXQ_CEILINGS)")


def at(rows: list[dict[str, float]], cores: int) -> float:
    """The median total at `cores` active cores (the largest measured count beyond it)."""
    k = max(1, min(cores, len(rows)))
    return rows[k - 1]["median"]


def _on_curve(curve: list[dict[str, Any]], field: str, size: float, cores: int) -> float:
    """A curve's total at `cores` busy cores each sweeping `size` bytes, interpolated on a log
    scale between its sizes (its ends beyond them)."""
    if size <= curve[0]["bytes"]:
        return at(curve[0][field], cores)
    for lo, hi in zip(curve, curve[1:]):
        if size <= hi["bytes"]:
            f = math.log(size / lo["bytes"]) / math.log(hi["bytes"] / lo["bytes"])
            return at(lo[field], cores) * (1 - f) + at(hi[field], cores) * f
    return at(curve[-1][field], cores)


def spread_at(rows: list[dict[str, float]], cores: int) -> float:
    """How far the median at `cores` may be off, relative: half the range of its runs over the
    median. The range of n runs holds the true median with confidence 1 - 2 / 2^n whatever the
    noise's distribution (each run falls either side of it with even odds): 75% with REPEATS = 3."""
    row = rows[max(1, min(cores, len(rows))) - 1]
    # abs: a ceilings file whose min exceeds its max is as unsure as its range, never exact.
    return abs(row["max"] - row["min"]) / (2 * row["median"]) if row["median"] > 0 else 0.0


def spread_on_curve(curve: list[dict[str, Any]], field: str, size: float, cores: int) -> float:
    """spread_at on a curve at `size` bytes per core: at a size measured, that size's; between
    two, the larger of theirs (a size the interpolation gives no weight does not count)."""
    for lo, hi in zip(curve, curve[1:]):
        if size == hi["bytes"]:
            return spread_at(hi[field], cores)
        if lo["bytes"] < size < hi["bytes"]:
            return max(spread_at(lo[field], cores), spread_at(hi[field], cores))
    return spread_at((curve[0] if size <= curve[0]["bytes"] else curve[-1])[field], cores)


def bandwidth(c: dict[str, Any], size: float, cores: int) -> float:
    """Total GB/s of `cores` busy cores each sweeping `size` bytes in place (the stream curve)."""
    return _on_curve(c["curve"], "gbs", size, cores)


def kind_rate(c: dict[str, Any], kind: str, size: float, cores: int) -> float | None:
    """Total rate (kinds()[kind]["unit"]) of `cores` busy cores each running the kind's kernel on
    `size` bytes; None when these ceilings have no curve for it."""
    curve = (c.get("kinds") or {}).get(kind)
    return _on_curve(curve, "rate", size, cores) if curve else None


def level_of(c: dict[str, Any], size: float, cores: int, owners: int = 1) -> str:
    """The level whose share for `owners` of `cores` busy cores holds `size` bytes, else memory."""
    for level in c["levels"]:
        share = level["bytes"] / (cores if level["shared"] else 1) * owners
        if size <= share:
            return level["name"]
    return "memory"


def roofs(c: dict[str, Any], cores: int) -> list[tuple[str, float]]:
    """The bandwidth roofs with `cores` busy, total GB/s: each level at a sweep of half its
    share per core, memory at the largest size measured."""
    out = []
    for level in c["levels"]:
        share = level["bytes"] / (cores if level["shared"] else 1)
        out.append((level["name"], bandwidth(c, share / 2, cores)))
    out.append(("memory", at(c["curve"][-1]["gbs"], cores)))
    return out


def implausible(c: dict[str, Any]) -> list[str]:
    """Ceilings a careful engineer would not sign: measured beside a load (the host's cores busy
    the second before), all cores busy giving less in total than one core alone (the machine was
    busy while they were measured), a range wider than the median, or a nearer cache level
    slower than a farther one."""
    out = []
    n = c["cores"]
    busy = c.get("busy_before")
    if isinstance(busy, (int, float)) and busy > hostload.BUSY:
        out.append(f"measured while the host's cores were {100 * busy:.0f}% busy with other work the second before")
    rows = {"peak flop rate": c["peak_gflops"], "memory bandwidth": c["curve"][-1]["gbs"]}
    alone = set(rows)  # rows whose one core alone is comparable with the busy node
    for kind, curve in (c.get("kinds") or {}).items():
        rows[f"{kind} at {curve[-1]['bytes'] >> 20}M per core"] = curve[-1]["rate"]
        if kind not in MESSAGE_KINDS:
            alone.add(f"{kind} at {curve[-1]['bytes'] >> 20}M per core")
    for what, r in rows.items():
        if n > 1 and what in alone and at(r, n) < 0.9 * at(r, 1):
            out.append(f"{what}: {at(r, n):.1f} in total with {n} cores busy, below one core's {at(r, 1):.1f}")
        wide = [row for row in r if row["median"] > 0 and (row["max"] - row["min"]) > row["median"]]
        if wide:
            out.append(f"{what}: runs spread over more than their median with {wide[0]['cores']} core(s)")
    # A nearer level slower than a farther one (L1 below L2): one of them was measured disturbed.
    for cores in sorted({1, n}):
        levels = roofs(c, cores)
        for (near, fast), (far, slow) in zip(levels, levels[1:]):
            if fast < (1 - LEVEL_SLACK) * slow:
                out.append(
                    f"{near} at {fast / cores:.1f} GB/s per core below {far}'s {slow / cores:.1f} with {cores} core(s) "
                    "busy: a nearer level cannot be slower"
                )
    return out


LEVEL_SLACK = 0.10  # a nearer level may read this much below a farther one (noise) before it is implausible


KNEE_GAIN = 0.10  # past the knee, every further core together adds at most this share of its bandwidth


def knee(c: dict[str, Any]) -> int | None:
    """The saturation point of the memory bus: the fewest busy cores from which the largest
    sweep's total bandwidth grows by at most KNEE_GAIN however many more cores join (each core
    count's median; the ranges must agree: the more-core run's best against the fewer-core run's
    worst). None when the bus still grows at the last core measured: no knee within them."""
    rows = sorted(c["curve"][-1]["gbs"], key=lambda r: r["cores"])
    for i, row in enumerate(rows[:-1]):
        later = rows[i + 1 :]
        if all(r["median"] <= row["median"] * (1 + KNEE_GAIN) or r["min"] <= row["max"] for r in later):
            return int(row["cores"])
    return None


def knee_text(c: dict[str, Any]) -> str:
    """The knee in words, for the roofline's header and the advice."""
    rows = sorted(c["curve"][-1]["gbs"], key=lambda r: r["cores"])
    first, last = rows[0], rows[-1]
    k = knee(c)
    if k is None:
        return (
            f"memory bus: no knee within {last['cores']} core(s): the largest sweep's bandwidth grew from "
            f"{first['median']:.1f} GB/s on {first['cores']} core to {last['median']:.1f} on {last['cores']} "
            f"({last['median'] / first['median']:.2f}x): every core added still brings bandwidth"
        )
    at_k = next(r for r in rows if r["cores"] == k)
    return (
        f"memory bus: saturated at {k} core(s) ({at_k['median']:.1f} GB/s; {last['median']:.1f} with all "
        f"{last['cores']}): beyond {k} busy cores a node's flat ranks only share a saturated bus, so threads "
        "sharing data or tiles kept in cache must cut the traffic"
    )


def _machine_of(ctx: dict[str, Any]) -> tuple[Any, ...]:
    """What a record's context says of the machine it ran on, as far as the ceilings depend on
    it: the processor and hwloc's cache sizes (not the host's name: identical nodes share
    ceilings; not the CPU count: an affinity mask or a cpuset changes what the ceilings saw, not
    the machine)."""
    k = caches.key(ctx)
    return (k["cpu_model"], tuple(k["hwloc"].values()))


def _describe(cpu_model: Any, hwloc: dict[str, Any], host: Any) -> str:
    return f"host {host}: {cpu_model}, L2 {format_bytes(int(hwloc.get('l2') or 0))}"


def refuse_other_machines(recs: list[dict[str, Any]], c: dict[str, Any]) -> None:
    """Ceilings predict only the machine they were measured on: records from another processor
    or other cache sizes are refused (InputError), never predicted against this one's."""
    key = c.get("key")
    if not key:
        return
    here = (key.get("cpu_model"), tuple((key.get("hwloc") or {}).values()))
    other = [r.get("context") or {} for r in recs if _machine_of(r.get("context") or {}) != here]
    if other:
        theirs = caches.key(other[0])
        raise InputError(
            f"{len(other)} record(s) ran on another machine "
            f"({_describe(theirs['cpu_model'], theirs['hwloc'], other[0].get('host', '?'))}) than the one whose "
            f"ceilings would predict them (this one, {_describe(here[0], key.get('hwloc') or {}, key.get('host'))}): "
            "run `pxq roofline` on the machine that ran them, or leave them out of PATH"
        )


def _rows_problem(rows: Any, what: str) -> str | None:
    if not isinstance(rows, list) or not rows:
        return f"{what} is not a list of rows per core count"
    for i, r in enumerate(rows, 1):
        if not isinstance(r, dict) or r.get("cores") != i:
            return f"{what}: row {i} is not the row of {i} busy core(s)"
        for f in ("median", "min", "max"):
            v = r.get(f)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                return f"{what}: row {i}'s {f} is not a number of 0 or more"
    return None


def _curve_problem(curve: Any, field: str, what: str) -> str | None:
    if not isinstance(curve, list) or not curve:
        return f"{what} is not a list of sizes"
    last = 0.0
    for point in curve:
        size = point.get("bytes") if isinstance(point, dict) else None
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not last < size < math.inf:
            return f"{what}: its sizes are not finite, positive and growing"
        last = float(size)
        said = _rows_problem(point.get(field), f"{what} at {format_bytes(int(size))}")
        if said:
            return said
    return None


def _levels_problem(levels: Any) -> str | None:
    def level(lv: Any) -> bool:
        size = lv.get("bytes") if isinstance(lv, dict) else None
        named = isinstance(lv, dict) and isinstance(lv.get("name"), str) and isinstance(lv.get("shared"), bool)
        return named and isinstance(size, int) and not isinstance(size, bool) and size > 0

    if not isinstance(levels, list) or not all(level(lv) for lv in levels):
        return "levels is not a list of cache levels (name, bytes, shared)"
    return None


def _kinds_problem(kinds_: Any) -> str | None:
    if not isinstance(kinds_, dict):
        return "kinds is not an object of curves by access kind"
    for name, curve in kinds_.items():
        said = _curve_problem(curve, "rate", f"the {name} curve")
        if said:
            return said
    return None


def problem(data: Any) -> str | None:
    """What makes DATA no ceilings pxq can predict from (None: nothing): the format, the cores,
    the cache levels, the bandwidth curve, the peak flop rate and the access kinds' curves, each
    typed and sized, every curve's rows one per busy core up to the cores measured."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("format") != FORMAT:
        return f"format {data.get('format')!r}, not pxq's {FORMAT}: measure them again with pxq probe ceilings"
    n = data.get("cores")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1 << 16:
        return "cores is not a count of 1 or more"
    said = (
        _levels_problem(data.get("levels"))
        or _curve_problem(data.get("curve"), "gbs", "the bandwidth curve")
        or _rows_problem(data.get("peak_gflops"), "the peak flop rate")
        or _kinds_problem(data.get("kinds", {}))
    )
    if said:
        return said
    rows = [data["peak_gflops"], *(p["gbs"] for p in data["curve"])]
    rows += [p["rate"] for c in data.get("kinds", {}).values() for p in c]
    if any(len(r) != n for r in rows):
        return f"a curve's rows do not reach the {n} cores measured"
    return None


def read_file(path: Path) -> dict[str, Any]:
    """Another machine's kept ceilings (a file `pxq probe ceilings` wrote there), through the
    door, checked whole (InputError naming the problem)."""
    try:
        data = door.json_doc(path, "--ceilings", "give a ceilings file that pxq probe ceilings wrote")
    except FileNotFoundError:
        raise InputError(f"--ceilings {path}: no such file; `pxq probe ceilings --out FILE` writes one") from None
    said = problem(data)
    if said:
        raise InputError(
            f"--ceilings {path}: {said}; give a ceilings file that pxq probe ceilings wrote (PXQ_CEILINGS there)"
        )
    return data
