"""The contention-aware roofline: each run's declared work (the record's "work") placed against
the ceilings of its layout (pxq.machine.ceilings), the binding ceiling named and the time
predicted beside the measured one.

Per declared phase, for the slowest rank (its rank_max figures), with k = the cores of a node
in use (ranks per node x threads, at most the cores there are) and T the rank's threads. A
phase of an access kind the ceilings measured (gather, update, stencil, restrict, interp, fft, alltoall: its record's
"kind") takes its flops or bytes at that kind's rate for its size (a kind in GFlop/s split into
its kernel's arithmetic at its in-cache rate and the bytes it streams at what its kernel's cost
at that size: kind_split), the bytes a tile moves
again at the edges of its blocks ("edge_bytes") at the stream's, and each row its kernel starts
("row_visits") at what a row's start costs, from the window kinds (window_costs); a stream:

- compute: flops / (peak(k) / k x T);
- the compulsory bytes at the bandwidth per core that the measured curve gives a sweep of the
  rank's footprint per core with k cores busy (so a footprint that spills shares the memory
  bus with the node's other ranks, one that fits is served by its cache);
- the reused bytes (bytes - compulsory) at the bandwidth of a sweep of one worker's working set
  (a tile in L2 runs at L2's rate, an untiled block that spills at memory's);
- each named by the level whose share holds that size (shared levels split over the k cores);
- the phase takes the larger of its compute time and the sum of its levels' times (a tile's
  first pass brings it from memory and its other passes find it in L2: one core does one, then
  the other, so their times add, while the core's arithmetic overlaps its loads); the binding
  ceiling is the one with the largest time; the run takes the sum over its declared phases plus
  what was measured outside them (communication, waiting, undeclared set-up), as measured.

The intensity a point is drawn at is flops over the bytes the model sends to memory (not the
compulsory ones alone): an untiled sweep whose block spills streams every pass from memory, its
tiled twin only once, and the arrow between them is the tile's gain."""

from __future__ import annotations

import math
import statistics
from typing import Any

from pxq.analysis.models import drift
from pxq.analysis.verdicts import settle
from pxq.core import records
from pxq.launch import launchers
from pxq.machine import ceilings as ceil


def cores_used(rec: dict[str, Any], ceilings: dict[str, Any]) -> tuple[int, int, int]:
    """(k cores of a host in use, ranks per host, threads per rank). Ranks per host come from the
    hosts the run was observed on: virtual nodes of one machine share its memory bus."""
    lay = rec.get("layout", {})
    t = int(lay.get("threads") or rec.get("variant", {}).get("threads") or 1)
    virtual = lay.get("virtual_nodes") or launchers.emulated(lay.get("launcher"))
    hosts = 1 if virtual else int(lay.get("observed_nodes") or lay.get("nodes") or 1)
    q = max(1, -(-int(lay.get("ranks") or lay.get("ranks_per_node") or 1) // hosts))
    return max(1, min(q * t, int(ceilings["cores"]))), q, t


# The window kinds' rows (pxq/probes/kinds.cpp): of 8 and of 64 entries on average; each entry
# 12 B of matrix and 8 of x, each row its pointer and y written (8 B each).
WINDOW_ROWS = {"window": 8, "window64": 64}


def window_costs(ceilings: dict[str, Any], size: float, k: int) -> tuple[float, float] | None:
    """(seconds an entry, seconds a row's start) for one core of k busy, on `size` bytes each, in
    a column window: the two window kinds' rows (of 8 and 64 entries on average, each ending where
    the branch predictor cannot know) at their measured rates give two times a row, L entries
    and a start each, solved for both. None without both curves. The start prices a phase's
    row visits; its entries stay at its own kind's rate (CG's in column windows measured no
    faster than untiled ones here: the matrix streamed sets their pace, not where x's window is)."""
    times: list[tuple[int, float]] = []  # (entries a row, seconds a row)
    for kind, n in WINDOW_ROWS.items():
        rate = ceil.kind_rate(ceilings, kind, size, k)
        if not rate:
            return None
        times.append((n, (20.0 * n + 16.0) * k / rate / 1e9))
    (n1, t1), (n2, t2) = times
    entry = max(0.0, (t2 - t1) / (n2 - n1))
    return entry, max(0.0, t1 - n1 * entry)


def kind_split(ceilings: dict[str, Any], kind: str, size: float, k: int) -> tuple[float, float]:
    """(seconds a flop, seconds a byte from memory) of one of k busy cores running a GFlop/s
    kind's kernel on `size` bytes: its time at its smallest measured size (its data in cache)
    is all arithmetic; what its time at `size` adds, over the bytes its kernel takes from
    memory per flop (ceilings.kinds()), is waiting for data. A kind without that figure (or
    no slower at `size`) is all arithmetic at its rate for `size`, as before the split."""
    rate = ceil.kind_rate(ceilings, kind, size, k) or 0.0
    if rate <= 0:
        return math.inf, 0.0
    per_flop = k / (rate * 1e9)
    per_byte = ceil.kinds()[kind]["memory_bytes_per_flop"]
    if per_byte <= 0:
        return per_flop, 0.0
    core = k / (max(ceil.at(ceilings["kinds"][kind][0]["rate"], k), rate) * 1e9)
    return core, (per_flop - core) / per_byte


def _kind_time(w: dict[str, Any], ceilings: dict[str, Any], k: int, t: int) -> tuple[str, float, float] | None:
    """The phase's time at its access kind's measured ceiling (named "kind (level)") and how far
    that ceiling may be off (ceilings.spread_on_curve), or None for a stream or ceilings without
    that kind's curve. The kind's kernel was measured on data
    of the size that sets its pace, in the phase's own form (its gathers, its strided lines), so
    its rate already holds that data's trips from wherever it lives."""
    spec = ceil.kinds().get(w.get("kind", "stream"))
    if spec is None:
        return None
    if w["kind"] in ceil.MESSAGE_KINDS:
        t = 1  # the rank's exchange (IS's keys), not split over its threads
    size = max(w["footprint_bytes"] / t if spec["size"] == "footprint" else w["working_set_bytes"], 1.0)
    amount = w["rank_max"]["flops"] if spec["unit"] == "gflops" else w["rank_max"]["bytes"]
    rate = ceil.kind_rate(ceilings, w["kind"], size, k)
    if not rate:
        return None
    # A phase fusing two kinds' loops (MG's residual into the restriction): its "also" share of
    # the amount at the other kind's rate, the rest at its own; one pass, so the times add.
    also = w.get("also") or {}
    other = ceil.kinds().get(also.get("kind", ""))
    other_rate = ceil.kind_rate(ceilings, also["kind"], size, k) if other and other["unit"] == spec["unit"] else None
    share = float(also.get("share") or 0.0) if other_rate else 0.0  # without its curve: at the phase's kind's
    edge = float(w["rank_max"].get("edge_bytes") or 0.0)
    if spec["unit"] == "gflops":
        # Its flops at the kind's in-cache pace, the bytes it streams (its edges apart) at what
        # each of the kernel's bytes cost on top at this size: a phase of the kernel's own
        # flops per byte at the kind's rate, a fused one (more flops per byte) faster.
        core, wait = kind_split(ceilings, w["kind"], size, k)
        streamed = max(0.0, float(w["rank_max"].get("memory_bytes") or 0.0) - edge)
        seconds = (amount * (1.0 - share) * core + streamed * wait) / t
    else:
        seconds = amount * (1.0 - share) / (rate / k * 1e9 * t)
    # The rows its kernel starts (CG's SpMV: once per row, once per row and window when tiled),
    # each on top of its bytes at the kind's rate, split over the rank's threads.
    visits = float(w["rank_max"].get("row_visits") or 0.0)
    costs = window_costs(ceilings, size, k) if visits > 0 else None
    if costs:
        seconds += visits * costs[1] / t
    if share > 0 and other_rate:  # in GFlop/s, as the phase's kind: its flops at its in-cache pace
        seconds += amount * share * kind_split(ceilings, also["kind"], size, k)[0] / t
    # A tile's edges (MG's rows read and written again where two blocks of rows meet): bytes the
    # kind's kernel never moved, at the stream's bandwidth for the rank's footprint, on top.
    if edge > 0:
        streamed = max(w["footprint_bytes"] / t, 1.0)
        seconds += edge / (ceil.bandwidth(ceilings, streamed, k) / k * 1e9 * t)
    error = ceil.spread_on_curve(ceilings["kinds"][w["kind"]], "rate", size, k)
    return f"{w['kind']} ({ceil.level_of(ceilings, size, k)})", seconds, error


def phase_prediction(w: dict[str, Any], ceilings: dict[str, Any], k: int, t: int) -> dict[str, Any]:
    """One phase's predicted seconds, the ceiling that binds it and the bytes it sends to memory.

    A phase of an access kind the ceilings measured (gather, update, stencil, restrict, interp, fft, alltoall) takes its
    amount (flops or bytes, as the kind's unit) at the kind's rate for its size with k cores busy,
    or its compulsory bytes at the stream's, whichever is longer. A stream: the compulsory bytes
    at the bandwidth the measured curve gives a sweep of the rank's footprint (per core) with k
    cores busy; the reused bytes at the bandwidth of a sweep of one worker's working set. Each is
    named by the level that holds that size. Traffic at different levels adds up; compute
    overlaps it."""
    m = w["rank_max"]
    flops, core, compulsory = m["flops"], m["bytes"], m["memory_bytes"]
    peak_worker = ceil.at(ceilings["peak_gflops"], k) / k * 1e9
    times: dict[str, float] = {"compute": flops / (peak_worker * t)}
    errors: dict[str, float] = {"compute": ceil.spread_at(ceilings["peak_gflops"], k)}  # each ceiling's own
    memory_bytes = 0.0
    streamed = (compulsory, max(w["footprint_bytes"] / t, 1.0), t)
    reused = (max(0.0, core - compulsory), max(w["working_set_bytes"], 1.0), 1)
    kind = _kind_time(w, ceilings, k, t)
    if kind is not None:
        # The kind's kernel moved its data itself, at its own bytes per flop; a phase that must
        # stream more per flop than that kernel (MG's restriction and interpolation against the
        # residual) meets the stream's roof for its compulsory bytes first: the larger binds.
        times[kind[0]], errors[kind[0]] = kind[1], kind[2]
        if compulsory > 0:
            name = ceil.level_of(ceilings, streamed[1] * t, k, t)
            times[name] = compulsory / (ceil.bandwidth(ceilings, streamed[1], k) / k * 1e9 * t)
            errors[name] = ceil.spread_on_curve(ceilings["curve"], "gbs", streamed[1], k)
            memory_bytes += compulsory if name == "memory" else 0.0
        binding = max(times, key=lambda n: times[n])
        return {
            "seconds": times[binding],
            "binding": binding,
            "times": times,
            "memory_bytes": memory_bytes,
            "error": errors[binding],
        }
    for amount, size, owners in (streamed, reused):
        if amount <= 0:
            continue
        name = ceil.level_of(ceilings, size * owners, k, owners)
        per_core = ceil.bandwidth(ceilings, size, k) / k * 1e9
        times[name] = times.get(name, 0.0) + amount / (per_core * t)
        errors[name] = max(errors.get(name, 0.0), ceil.spread_on_curve(ceilings["curve"], "gbs", size, k))
        if name == "memory":
            memory_bytes += amount
    binding = max(times, key=lambda n: times[n])
    traffic = sum(v for n, v in times.items() if n != "compute")
    seconds = max(times["compute"], traffic)
    return {
        "seconds": seconds,
        "binding": binding,
        "times": times,
        "memory_bytes": memory_bytes,
        "error": errors[binding],
    }


def physical(work: dict[str, Any], ceilings: dict[str, Any], k: int, t: int) -> tuple[float, float]:
    """The time the machine's physical limits allow the declared phases, and the phases' measured
    time (their slowest rank's): per phase, its flops at the peak flop rate or its compulsory
    bytes at the memory bandwidth with K cores busy (the largest sweep of the bandwidth curve),
    whichever is longer, for a rank of T workers. Not the access kind's roof: a kernel that is
    slow for its kind still shows how far it is from what the hardware allows."""
    peak = ceil.at(ceilings["peak_gflops"], k) / k * 1e9 * t
    memory = ceil.at(ceilings["curve"][-1]["gbs"], k) / k * 1e9 * t
    roof = sum(max(w["rank_max"]["flops"] / peak, w["rank_max"]["memory_bytes"] / memory) for w in work.values())
    return roof, sum(float(w.get("seconds") or 0.0) for w in work.values())


ROOF_SLACK = 1.05  # a run's phases above this share of the physical roof: faster than the limits allow


def predict(rec: dict[str, Any], ceilings: dict[str, Any]) -> dict[str, Any] | None:
    """The run's predicted time beside its measured one; None without declared work."""
    work = rec.get("work")
    if not work:
        return None
    k, _, t = cores_used(rec, ceilings)  # the k-core curve already divides the bus among the ranks
    phases = {name: phase_prediction(w, ceilings, k, t) for name, w in work.items()}
    declared = sum(w["seconds"] for w in work.values())
    measured = rec["time"]["total"]
    outside = max(0.0, measured - declared)
    predicted = sum(p["seconds"] for p in phases.values()) + outside
    flops = sum(w["flops"] for w in work.values())
    memory = sum(p["memory_bytes"] * rec["layout"].get("ranks", 1) for p in phases.values())
    heaviest = max(phases, key=lambda n: phases[n]["seconds"])
    sources: dict[str, list[float]] = {}  # predicted seconds per ceiling (and cores busy), and its error
    for ph in phases.values():
        src = sources.setdefault(f"{ph['binding']} @ {k}", [0.0, 0.0])
        src[0] += ph["seconds"]
        src[1] = max(src[1], ph["error"])
    roof, declared_s = physical(work, ceilings, k, t)
    return {
        "roof": roof,
        "of_roof": roof / declared_s if declared_s > 0 else math.nan,
        "cores": k,
        "phases": phases,
        "predicted": predicted,
        "measured": measured,
        "outside": outside,
        "binding": phases[heaviest]["binding"],
        "binding_phase": heaviest,
        "flops": flops,
        "intensity": flops / memory if memory > 0 else math.inf,
        "gflops": flops / declared / 1e9 if declared > 0 else 0.0,
        "sources": sources,
    }


HELD = ("kind", "schema", "status", "app", "time", "kernels")
RENDERED = frozenset(("gbs", "gflops", "memory_gbs", "intensity", "core_intensity"))  # work's rates, not read
SHARED_PARTS = ("size", "layout", "variant")  # alike in many runs: held once for all of them
HELD_DRIVER = ("run_id", "sweep_id", "sweep_key", "repeat", "settle")
HELD_CONTEXT = ("host", "cpu_model", "date")
NO_PAY = "tile: these tiles cannot pay here: "  # the run's note on a tile that cuts a buffer in cache


def _declared(w: Any) -> Any:
    """A phase's declared work without the rates rendered from it; its words shared."""
    if not isinstance(w, dict):
        return w
    out = {k: v for k, v in w.items() if k not in RENDERED}
    if isinstance(out.get("what"), str):
        out["what"] = records.share(("what", out["what"]), out["what"])
    return out


def no_pay(rec: dict[str, Any]) -> str | None:
    """The run's note that its tiles cannot pay here (NO_PAY), if it has one."""
    notes = rec.get("notes")
    return next((n for n in notes if isinstance(n, str) and n.startswith(NO_PAY)), None) if notes else None


def held(rec: dict[str, Any]) -> dict[str, Any]:
    """What the roofline reads of a run's record, taken as each line is read (100,000 runs of a
    sweep in a fraction of their memory): the configuration (its parts shared between the runs
    alike), its times and declared work, the driver's ids (pairing, rounds) and the context naming
    the machine (ceilings are refused for another) and the date (drift); any other record (a
    bandwidth reference) whole."""
    if rec.get("kind") != "run":
        return rec
    out = {k: rec[k] for k in HELD if k in rec}
    work = rec.get("work")
    if isinstance(work, dict):
        out["work"] = {name: _declared(w) for name, w in work.items()}
    for name in SHARED_PARTS:
        part = rec.get(name)
        if isinstance(part, dict):
            out[name] = records.share((name, *part.items()), part)
    note = no_pay(rec)
    if note:
        out["notes"] = [records.share(("note", note), note)]
    driver, ctx = rec.get("driver"), rec.get("context")
    if isinstance(driver, dict):
        out["driver"] = {k: driver[k] for k in HELD_DRIVER if k in driver}
    if isinstance(ctx, dict):
        out["context"] = {k: ctx[k] for k in HELD_CONTEXT if k in ctx}
        caches = ctx.get("caches")
        if isinstance(caches, dict):
            levels = tuple((k, tuple(v.items()) if isinstance(v, dict) else v) for k, v in caches.items())
            out["context"]["caches"] = records.share(("caches", *levels), caches)
    return out


def group_key(rec: dict[str, Any]) -> tuple[Any, ...]:
    v, lay = rec.get("variant", {}), rec.get("layout", {})
    size = rec.get("size", {})
    return (
        rec.get("app"),
        size.get("class") or size.get("block_bytes"),
        f"{lay.get('nodes', 1)}x{lay.get('ranks_per_node', 1)}x{lay.get('threads', 1)}",
        v.get("mode"),
        v.get("tile_bytes") if v.get("mode") == "tiled" or v.get("tile_bytes") else None,
        v.get("backend"),
    )


def points(
    recs: list[dict[str, Any]], ceilings: dict[str, Any], fs: drift.Factors | None = None
) -> list[dict[str, Any]]:
    """One point per configuration: the run nearest the median time predicted, beside the
    median measured time and its spread; with reference measurements (pxq.analysis.models.drift's
    factors), against the ceilings scaled to the machine as it was when that run started."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in recs:
        if r.get("status") == "ok" and r.get("work"):
            groups.setdefault(group_key(r), []).append(r)
    out = []
    moved = settle.moved_rounds(recs)  # a settled sweep's blocks whose host moved: not paired
    for key, runs in groups.items():
        times = sorted(r["time"]["total"] for r in runs)
        rounds = [(float(r["time"]["total"]), _kept_round(r, moved)) for r in runs]
        median = statistics.median(times)
        rep = min(runs, key=lambda r: abs(r["time"]["total"] - median))
        pred = predict(rep, drift.for_run(rep, ceilings, fs))
        if pred is None:
            continue
        out.append(
            {
                "app": key[0],
                "size": key[1],
                "layout": key[2],
                "mode": key[3],
                "tile": key[4],
                "backend": key[5],
                "runs": len(runs),
                "median": median,
                "times": times,
                "rounds": rounds,
                "low": times[0],
                "high": times[-1],
                "spread": (times[-1] - times[0]) / median if median > 0 else 0.0,
                "phase_seconds": {n: float(w.get("seconds") or 0.0) for n, w in rep["work"].items()},
                "phase_what": {n: str(w.get("what") or "") for n, w in rep["work"].items()},
                "no_pay": (no_pay(rep) or "")[len(NO_PAY) :] or None,
                **pred,
                "ratio": pred["predicted"] / median if median > 0 else math.nan,
            }
        )
    return out


def _kept_round(rec: dict[str, Any], moved: set[tuple[str, int]]) -> settle.Round | None:
    """The run's round, None (not paired) where its block is one the host moved under."""
    r = settle.round_of(rec)
    return None if r is None or (r[0], r[1]) in moved else r


SHORT_WHAT = 56  # a phase's description up to this long names its row in the per-phase table


def phase_groups(p: dict[str, Any]) -> list[dict[str, Any]]:
    """A point's phases by kind (MG's L8.residual and L7.residual are one "residual"), in the
    order declared: the measured seconds of its representative run (the slowest rank's, as the
    record keeps them) beside the predicted ones, and the ceiling that binds the group's longest
    predicted phase; then what was measured outside the declared phases, predicted as measured."""
    out: dict[str, dict[str, Any]] = {}
    for name, ph in p["phases"].items():
        g = out.setdefault(
            name.rsplit(".", 1)[-1], {"measured": 0.0, "predicted": 0.0, "binding": ph["binding"], "top": -1.0}
        )
        g["measured"] += p["phase_seconds"].get(name, 0.0)
        g["predicted"] += ph["seconds"]
        if ph["seconds"] > g["top"]:
            g["top"], g["binding"] = ph["seconds"], ph["binding"]
    rows = [{"phase": k, **{f: g[f] for f in ("measured", "predicted", "binding")}} for k, g in out.items()]
    for row in rows:  # a phase of its own with a short description (FT's "I1 evolve") is named by it
        what = p.get("phase_what", {}).get(row["phase"], "")
        if what and len(what) <= SHORT_WHAT:
            row["phase"] += f" {what}"
    if p["outside"] > 0:
        rows.append({"phase": "outside", "measured": p["outside"], "predicted": p["outside"], "binding": "measured"})
    return rows
