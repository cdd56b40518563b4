"""Summaries of run records: tables (rich) and bar charts (pxq.figures.speedup draws them).

Over 400 lines: aggregation, the table, the exports (CSV, markdown, JSON) and the chart's labels
read one grouping of records."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from pxq.analysis.exports import efficiency
from pxq.analysis.exports.peers import NAS_MODE
from pxq.analysis.models import roofline, roofmark
from pxq.analysis.verdicts import settle
from pxq.core import outputs, records, schemas
from pxq.core.escape import Console, csv_cell, md, term
from pxq.core.layout import Layout, format_bytes
from pxq.core.records import FAILED_STATUSES
from pxq.figures import speedup
from pxq.machine.counters import misses

# The bandwidth each app reports: the ring's pipeline, CG's SpMV, MG's finest residual.
GBS_METRICS = ("effective_gbs", "spmv_gbs", "resid_gbs")
MIN_SECONDS = 0.1  # below this a run's time is mostly launch and timer noise
MAX_SPREAD = 0.25  # (max - min) / median above this: too noisy to compare without more runs
RANGE_RUNS = 10  # up to this many runs the noisy flag reads their range; beyond, the scaled IQR
RANGE_PER_IQR = 3.078 / 1.349  # normal noise: the expected range of 10 draws over the interquartile range
FLAG_TEXT = {
    "short": f"median under {MIN_SECONDS} s: launch and timer noise dominate; use a larger problem",
    "noisy": f"spread above {MAX_SPREAD:.0%}: add repeats (--repeat) before comparing",
    "single": "one run: no spread to judge it by; use --repeat 3 or more",
    "oversubscribed": "more workers than cores: times include waiting for a core, not the variant's speed",
    "loaded": "a run started with the host's load average above twice its cores (context.load_at_start): "
    "other work shared the machine; run again on a quiet host",
    "simulated": "ran under the cache simulator (20-100x slower): compare its misses, not its time",
    "near-tolerance": "verified, but a run's error used over half of its tolerance: a pass close to a fail "
    "(verification.tolerance_used in the record)",
    "above-roof": f"its median run beat this machine's physical roof by over {roofmark.ROOF_SLACK - 1:.0%}, "
    + roofmark.ABOVE.removeprefix("above the physical roof: "),
    "no-pay": "its tiles cannot pay here (the run's note says why: a buffer that already fits the cache its "
    "share targets, or an untiled code that skips work the tiles need), so they can only add work; --tile auto "
    "runs it untiled",
}
NEAR_TOLERANCE = 0.5  # a verified error above this share of its tolerance is flagged


@dataclass
class Row:
    app: str
    layout: Layout
    alloc: str
    mode: str
    tile: str
    backend: str
    size: str
    times: list[float]
    gbs: list[float]
    comm: list[float]
    verified: bool
    mops: list[float] = field(default_factory=list)
    speedup: float | None = None
    vs_nas: float | None = None  # Mop/s over the imported NAS run's on the same nodes and cores (pxq import)
    extra: tuple[str, ...] = ()  # the values of the --group-by fields
    tile_bytes: int = 0  # the tile as a number, for ordering
    gbs_over_total: bool = False  # the GB/s metric is over the whole run (the ring's), not a phase
    oversubscribed: bool = False  # a run had more workers than cores
    loaded: bool = False  # a run started with a load average above LOADED_PER_CORE x the host's cores
    misses: list[float] = field(default_factory=list)  # the outermost counted level's misses, per run
    miss_level: str = ""  # its record name (l2_misses, llc_misses, ...)
    moved: list[float] = field(default_factory=list)  # bytes the ring streamed, per run (misses per KiB)
    simulated: bool = False  # the runs' counters came from the cache simulator
    no_pay: bool = False  # a run's tile cuts a buffer already in its cache (its note, roofline.NO_PAY)
    paired: bool = False  # compared only within the blocks of a settled sweep: its spread is not flagged
    tolerance_used: float = 0.0  # the most of its verification tolerance a run's error used
    efficiency: list[tuple[float, float, float, float] | None] = field(default_factory=list)  # per run
    computation_scaling: float | None = None  # base useful CPU time over this row's (pxq.analysis.exports.efficiency)
    global_efficiency: float | None = None  # parallel efficiency x computation scaling
    rounds: list[settle.Round | None] = field(default_factory=list)  # per run: its sweep round (settle.round_of)
    roof: list[float | None] = field(default_factory=list)  # per run: its record's roof.of_roof (roofmark)

    @property
    def median_efficiency(self) -> tuple[float, float, float, float] | None:
        """(load balance, communication, parallel, useful CPU s) of the run with the median time:
        one run's factors, so that they multiply."""
        if not self.efficiency or len(self.efficiency) != len(self.times):
            return None
        return self.efficiency[self._median_run()]

    @property
    def median_roof(self) -> float | None:
        """The fraction of the physical roof the run with the median time reached (its record's)."""
        if not self.roof or len(self.roof) != len(self.times):
            return None
        return self.roof[self._median_run()]

    @property
    def median_misses(self) -> float | None:
        return statistics.median(self.misses) if self.misses and len(self.misses) == len(self.times) else None

    @property
    def misses_per_kib(self) -> float | None:
        """Misses per KiB the ring streamed (K passes x read+write of every block), median over runs."""
        if not self.moved or len(self.moved) != len(self.misses):
            return None
        return statistics.median(1024 * m / b for m, b in zip(self.misses, self.moved) if b > 0)

    @property
    def median_gbs(self) -> float | None:
        """GB/s at the median time: bytes over the median time when the metric is over the whole
        run, else the figure of the run with the median time (never a median of bandwidths)."""
        if not self.gbs or len(self.gbs) != len(self.times):
            return None
        if self.gbs_over_total:
            return statistics.median(g * t for g, t in zip(self.gbs, self.times)) / self.median
        return self.gbs[self._median_run()]

    @property
    def median_mops(self) -> float | None:
        """Mop/s at the median time: each run's operation count over the median time."""
        if not self.mops or len(self.mops) != len(self.times) or self.median <= 0:
            return None
        return statistics.median(m * t for m, t in zip(self.mops, self.times)) / self.median

    @property
    def flags(self) -> list[str]:
        """What makes this row's figures weak: `short` (median under MIN_SECONDS: launch and timer
        noise), `noisy` (spread above MAX_SPREAD; not for a row of a settled sweep, whose
        comparisons pair runs within a block, which cancels the drift between blocks that the
        spread holds), `single` (one run: no spread to judge)."""
        out = []
        if self.median < MIN_SECONDS:
            out.append("short")
        if len(self.times) > 1 and self.noise > MAX_SPREAD and not self.paired:
            out.append("noisy")
        if len(self.times) == 1:
            out.append("single")
        if self.oversubscribed:
            out.append("oversubscribed")
        if self.loaded:
            out.append("loaded")
        if self.simulated:
            out.append("simulated")
        if self.verified and self.tolerance_used > NEAR_TOLERANCE:
            out.append("near-tolerance")
        if (self.median_roof or 0.0) > roofmark.ROOF_SLACK:
            out.append("above-roof")
        if self.no_pay:
            out.append("no-pay")
        return out

    def _median_run(self) -> int:
        order = sorted(range(len(self.times)), key=lambda i: self.times[i])
        return order[(len(order) - 1) // 2]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def spread(self) -> float:
        """(max - min) / median, as a fraction."""
        return (max(self.times) - min(self.times)) / self.median if self.median > 0 else 0.0

    @property
    def noise(self) -> float:
        """What the `noisy` flag reads: the spread (range over median) of up to RANGE_RUNS runs;
        beyond, the interquartile range scaled to the range RANGE_RUNS runs of the same noise
        would have. The range of n runs grows with n (the same 5% noise flagged 3 of 16 rows
        at 62 repeats and 16 of 16 at 625); the interquartile range does not, so more repeats
        never turn a quiet row noisy."""
        n = len(self.times)
        if n <= RANGE_RUNS or self.median <= 0:
            return self.spread
        q1, _, q3 = statistics.quantiles(self.times, n=4, method="inclusive")
        return (q3 - q1) * RANGE_PER_IQR / self.median


def _size_text(rec: dict[str, Any]) -> str:
    s = rec.get("size", {})
    if rec.get("app") == "ring":
        parts = {"K": s.get("passes"), "F": s.get("flops"), "it": s.get("iterations")}
        return " ".join(
            [format_bytes(s.get("block_bytes", 0)), *(f"{k}={v}" for k, v in parts.items() if v is not None)]
        )
    # FT's decomposition changes its communication, so runs in different ones are not pooled.
    return f"{s.get('class', '')} {s['decomp']}" if "decomp" in s else str(s.get("class", ""))


def _layout_of(rec: dict[str, Any]) -> Layout:
    lay = rec["layout"]
    return Layout(lay["nodes"], lay["ranks_per_node"], lay["threads"])


def field_value(rec: dict[str, Any], path: str) -> str:
    """A record's field by dotted path ("context.host", "placement_summary.requested"), as text;
    "-" where the record has none."""
    value: Any = rec
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return "-"
        value = value[part]
    if value is None:
        return "-"
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)


# Fields that make runs differ although app, layout, variant and problem agree: when they take
# more than one value among the records, rows are split by them too (never merged).
DISTINGUISH = ("placement_summary.requested", "context.host", "context.mpi_library", "context.git_commit")
# Their headers in the table: short words, not dotted paths cut by the terminal
# ("placement_summary…"); a --group-by field shows its last part.
FIELD_HEADERS = dict(zip(DISTINGUISH, ("placement", "host", "MPI", "commit")))


# What the report reads of a run's context (DISTINGUISH, the loaded flag, timelines); and the
# per-rank and per-peer detail no table of it reads.
READ_CONTEXT = ("host", "mpi_library", "git_commit", "load_at_start", "logical_cpus", "date")
UNREAD = ("placement", "messages")
# Of a verified run, the report reads no more than these of its parts (the rounds and the
# settled sweep: the driver's ids; a row's figures: these metrics, the roof's fraction, the
# tolerance used, the efficiency factors), and not its declared work.
HELD = {
    "driver": ("run_id", "repeat", "sweep_id", "sweep_key", "settle"),
    "metrics": (*GBS_METRICS, "mops_total"),
    "roof": ("of_roof",),
    "verification": ("tolerance_used",),
    "efficiency": ("load_balance", "communication", "parallel", "useful_s"),
}
SHARED = ("variant", "layout", "size", "placement_summary", "notes")  # alike in many runs: held once


def essentials(rec: dict[str, Any], group_by: Sequence[str] = ()) -> dict[str, Any]:
    """A run's record as the report holds it: without UNREAD and with READ_CONTEXT of its
    context; a verified run with only the HELD fields of those parts, without its declared work
    and with its SHARED parts one object for all the runs alike (a --group-by field keeps the
    part it names whole). 100,000 runs of a sweep in about half the memory. A run that did
    not verify (its failure is shown) and every other record whole."""
    if schemas.kind_of(rec) != "run":
        return rec
    named = {f.split(".", 1)[0] for f in group_by}
    out = {k: v for k, v in rec.items() if k not in UNREAD or k in named}
    ctx = rec.get("context")
    if isinstance(ctx, dict) and "context" not in named:
        out["context"] = {k: ctx[k] for k in READ_CONTEXT if k in ctx}
    if rec.get("status") != "ok":
        return out
    if "work" not in named:
        out.pop("work", None)
    for part, fields in HELD.items():
        value = out.get(part)
        if isinstance(value, dict) and part not in named:
            out[part] = {k: value[k] for k in fields if k in value}
    for part in SHARED:
        if part in out:
            out[part] = records.shared_part(part, out[part])
    return out


def field_header(path: str) -> str:
    return FIELD_HEADERS.get(path, path.rsplit(".", 1)[-1])


# An app's own variant choices, shown in the mode when not the default ("flat+fftw",
# "tiled+shm", "hybrid+sym") so runs that differ in them are never pooled: FT's FFT engine
# (--fft), the ring's hand-over between ranks (--exchange) and CG's matrix storage (--matrix).


def split_fields(recs: Iterable[dict[str, Any]], group_by: Sequence[str] = ()) -> list[str]:
    """`group_by` and every DISTINGUISH field whose value differs between the finished runs."""
    done = [r for r in recs if r.get("status") in ("ok", "failed") and "time" in r]

    def values(f: str) -> set[str]:  # an imported peer run has no pxq commit to differ by
        return {field_value(r, f) for r in done if not (f == "context.git_commit" and "imported" in r)}

    auto = [f for f in DISTINGUISH if f not in group_by and len(values(f)) > 1]
    return [*group_by, *auto]


def summarize(recs: Iterable[dict[str, Any]], group_by: Sequence[str] = ()) -> list[Row]:
    """Groups ok/failed records by configuration (and the `group_by` fields); speedup against
    the flat rank-per-core run with the same cores per node (p x q*T x 1), the same problem and
    the same `group_by` values."""
    groups: dict[tuple, Row] = {}
    for rec in recs:
        if rec.get("status") not in ("ok", "failed") or "time" not in rec:
            continue
        v = rec["variant"]
        tile = format_bytes(v["tile_bytes"]) if v.get("tile_bytes") else "off"
        if v.get("tile_source") == "auto:untiled":  # --tile auto found that tiling cannot pay here
            tile = "auto: off"
        if v.get("tile_bytes") and v.get("column_windows") == 1:  # the tile held the whole vector: clamped
            tile += " (1 window: untiled)"
        mode = v["mode"]
        if "fused" in v and v["fused"] != bool(v.get("tile_bytes")):  # fusion chosen apart from the tile
            mode += "+fused" if v["fused"] else " unfused"
        for choice, c in schemas.app_choices().items():  # an app's own choice, when not its default
            if v.get(choice, c["default"]) != c["default"]:
                mode += f"+{v[choice]}"
        simulated = bool((rec.get("counters") or {}).get("simulated"))
        if simulated:  # times under the simulator are not the variant's speed: never pooled with native runs
            mode += " sim"
        extra = tuple(field_value(rec, f) for f in group_by)
        key = (
            rec["app"],
            str(_layout_of(rec)),
            rec["layout"]["alloc"],
            mode,
            tile,
            v["backend"],
            _size_text(rec),
            extra,
        )
        row = groups.get(key)
        if row is None:
            row = groups[key] = Row(
                rec["app"],
                _layout_of(rec),
                rec["layout"]["alloc"],
                mode,
                tile,
                v["backend"],
                _size_text(rec),
                [],
                [],
                [],
                True,
                extra=extra,
                tile_bytes=v.get("tile_bytes") or 0,
            )
        _add_run(row, rec, simulated)
    rows = list(groups.values())
    _speedups(rows)
    efficiency.add_scaling(rows)
    _against_nas(rows)
    order = {"flat": 0, "hybrid": 1, "tiled": 2}
    rows.sort(
        key=lambda r: (
            r.app,
            r.size,
            r.layout.cores,
            str(r.layout),
            order.get(r.mode.split()[0], 3),
            r.mode,
            r.tile_bytes,
            r.backend,
        )
    )
    return rows


def _add_run(row: Row, rec: dict[str, Any], simulated: bool) -> None:
    """One finished run's figures into its configuration's row."""
    row.times.append(rec["time"]["total"])
    row.rounds.append(settle.round_of(rec))
    row.efficiency.append(efficiency.factors(rec, _layout_of(rec).threads))
    block = rec.get("roof")
    roof = block.get("of_roof") if isinstance(block, dict) else None
    row.roof.append(float(roof) if isinstance(roof, (int, float)) and not isinstance(roof, bool) else None)
    if "comm" in rec["time"]:  # an imported peer run has no communication time
        row.comm.append(rec["time"]["comm"])
    metrics = rec.get("metrics", {})
    # The ring's streamed bandwidth, CG's SpMV and MG's residual bandwidth; FT has none.
    # A metric the app could not compute is null (NaN in its JSON): absent from the row's figures.
    gbs_key = next((k for k in GBS_METRICS if metrics.get(k) is not None), None)
    if gbs_key is not None:
        row.gbs.append(metrics[gbs_key])
        row.gbs_over_total = gbs_key == "effective_gbs"
    if metrics.get("mops_total") is not None:
        row.mops.append(metrics["mops_total"])
    row.verified = row.verified and rec["status"] == "ok"
    row.tolerance_used = max(row.tolerance_used, float((rec.get("verification") or {}).get("tolerance_used", 0)))
    row.oversubscribed = row.oversubscribed or bool(rec["layout"].get("oversubscribed"))
    row.loaded = row.loaded or started_loaded(rec)
    row.no_pay = row.no_pay or roofline.no_pay(rec) is not None
    _add_misses(row, rec, simulated)


LOADED_PER_CORE = 2.0  # a load average above this many per core at a run's start is other work's, not pxq's


def started_loaded(rec: dict[str, Any]) -> bool:
    """Whether the run started beside other work: the 1-minute load average its record took at the
    start above LOADED_PER_CORE x the cores the machine has (pxq's own earlier runs of a sweep
    leave at most about one per core)."""
    ctx = rec.get("context") or {}
    load, cores = ctx.get("load_at_start"), ctx.get("logical_cpus")
    if not isinstance(load, (int, float)) or isinstance(load, bool) or load < 0:
        return False
    if not isinstance(cores, int) or isinstance(cores, bool) or cores < 1:
        return False
    return load > LOADED_PER_CORE * cores


def _rank_per_core(row: Row, rows: list[Row], mode: str, same_group: bool = True) -> Row | None:
    """The row of `mode` that ran `row`'s problem a rank per core on the same nodes and cores per
    node (p x q*T x 1), with the same allocation (and group, unless `same_group` is False)."""
    base = Layout(row.layout.nodes, row.layout.ranks_per_node * row.layout.threads, 1)
    for cand in rows:
        if (cand.mode, cand.layout, cand.app, cand.size, cand.alloc) == (mode, base, row.app, row.size, row.alloc) and (
            cand.extra == row.extra or not same_group
        ):
            return cand
    return None


def _speedups(rows: list[Row]) -> None:
    """Each row's speedup over the flat rank-per-core row with the same cores per node, problem,
    allocation and group."""
    for row in rows:
        flat = _rank_per_core(row, rows, "flat")
        if flat is not None:
            row.speedup = flat.median / row.median


def _against_nas(rows: list[Row]) -> None:
    """Each pxq row's Mop/s over the imported NAS row's (pxq import) with the same app, problem,
    nodes and cores per node: NAS's MPI codes run a rank per core. A NAS run's host, MPI library or
    commit may differ from pxq's (that is the comparison), so the group is not matched."""
    for row in rows:
        if row.mode == NAS_MODE or row.median_mops is None:
            continue
        peer = _rank_per_core(row, rows, NAS_MODE, same_group=False)
        if peer is not None and peer.median_mops:
            row.vs_nas = row.median_mops / peer.median_mops


def _add_misses(row: Row, rec: dict[str, Any], simulated: bool) -> None:
    """The run's misses at the outermost level its counters counted (none: nothing added)."""
    row.simulated = row.simulated or simulated
    got = misses(rec)
    if got is None:
        return
    row.miss_level = got[0]
    row.misses.append(got[1])
    if rec.get("metrics", {}).get("effective_gbs") is not None:
        row.moved.append(rec["metrics"]["effective_gbs"] * rec["time"]["total"] * 1e9)


def miss_label(level: str) -> str:
    """ "l2_misses" -> "L2", "llc_misses" -> "LLC"."""
    return level.removesuffix("_misses").upper() if level else "-"


def table(rows: list[Row], title: str = "pxq results", group_by: Sequence[str] = ()) -> Table:
    t = Table(title=title)
    with_mops = any(r.mops for r in rows)
    with_size = any(r.app != "ring" for r in rows) or len({r.size for r in rows}) > 1
    with_misses = any(r.median_misses is not None for r in rows)
    with_nas = any(r.vs_nas is not None for r in rows)
    with_eff = any(r.median_efficiency for r in rows)
    with_roof = any(r.median_roof is not None for r in rows)
    cols = [
        "app",
        *(["size"] if with_size else []),
        "layout",
        "mode",
        "tile",
        "backend",
        *(field_header(f) for f in group_by),
        "runs",
        "median s",
        "spread",
        "comm s",
        "comm %",
        "GB/s",
        *(["Mop/s"] if with_mops else []),
        *(["misses", "miss/KiB"] if with_misses else []),
        "speedup",
        *(["x NAS"] if with_nas else []),
        *(["par. eff."] if with_eff else []),
        *(["of roof"] if with_roof else []),
        "verified",
    ]
    split = {field_header(f) for f in group_by}
    for col in cols:
        left = col in ("app", "size", "layout", "mode", "backend") or col in split
        t.add_column(col, justify="left" if left else "right", overflow="fold" if col in split else "ellipsis")
    for r in rows:
        cells = [
            r.app,
            *([r.size] if with_size else []),
            f"{r.layout} {r.alloc if r.layout.nodes > 1 else ''}".strip(),
            r.mode,
            r.tile,
            r.backend,
            *r.extra,
            str(len(r.times)),
            f"{r.median:.4f}",
            f"{100 * r.spread:.1f}%" if len(r.times) > 1 else "-",  # one run has no spread
            f"{statistics.median(r.comm):.4f}" if r.comm else "-",
            f"{100 * statistics.median(r.comm) / r.median:.1f}%" if r.comm and r.median > 0 else "-",
            "-" if r.median_gbs is None else f"{r.median_gbs:.1f}",
        ]
        if with_mops:
            cells.append("-" if r.median_mops is None else f"{r.median_mops:.0f}")
        if with_misses:
            n, per = r.median_misses, r.misses_per_kib
            cells += ["-" if n is None else f"{n:.3g} {miss_label(r.miss_level)}", "-" if per is None else f"{per:.2f}"]
        cells.append("-" if r.speedup is None else f"{r.speedup:.2f}x")
        if with_nas:
            cells.append("-" if r.vs_nas is None else f"{r.vs_nas:.2f}")
        if with_eff:
            e = r.median_efficiency
            cells.append("-" if e is None else f"{e[2]:.2f}")
        if with_roof:
            cells.append(roof_text(r.median_roof))
        cells = [term(c) for c in cells]  # text from records shows as written, never as markup
        cells.append("yes" if r.verified else "[red]NO[/red]")
        t.add_row(*cells)
    return t


def roof_text(fraction: float | None) -> str:
    """A run's share of the physical roof, "(!)" above ROOF_SLACK (faster than memory allows)."""
    if fraction is None:
        return "-"
    return f"{100 * fraction:.0f}%" + (" (!)" if fraction > roofmark.ROOF_SLACK else "")


def print_table(
    rows: list[Row], title: str = "pxq results", console: Console | None = None, group_by: Sequence[str] = ()
) -> None:
    console = console or Console()
    console.print(table(rows, title, group_by))
    print_flags(rows, console)


def _varying(rows: Sequence[Row]) -> tuple[tuple[str, ...], bool]:
    """The fields beyond app, layout, mode and tile whose values differ among ROWS (size, back
    end, allocation), and whether the --group-by values do: counted once per table or chart."""
    fields = tuple(f for f in ("size", "backend", "alloc") if len({getattr(o, f) for o in rows}) > 1)
    return fields, len({o.extra for o in rows}) > 1


def row_extras(r: Row, rows: Sequence[Row], varying: tuple[tuple[str, ...], bool] | None = None) -> list[str]:
    """The fields beyond app, layout, mode and tile that tell row R from the others of ROWS: the
    problem size, the back end, the allocation and the --group-by values, where they differ
    (VARYING: _varying(ROWS), when the caller names many rows)."""
    fields, extra = varying or _varying(rows)
    out = [str(getattr(r, f)) for f in fields if getattr(r, f)]
    return out + ([str(v) for v in r.extra] if extra else [])


def row_name(r: Row, rows: Sequence[Row], varying: tuple[tuple[str, ...], bool] | None = None) -> str:
    """A row's name in notes, with every field that tells it from the others shown."""
    parts = [r.app, str(r.layout), r.mode] + ([r.tile] if r.tile != "off" else [])
    return " ".join(parts + row_extras(r, rows, varying))


def print_flags(rows: list[Row], console: Console) -> None:
    """One line per weakness the rows share, naming the rows: figures a careful reader discounts."""
    for flag, text in FLAG_TEXT.items():
        hit = [r for r in rows if flag in r.flags]
        if hit:
            varying = _varying(rows)
            names = ", ".join(row_name(r, rows, varying) for r in hit[:6])
            more = f" and {len(hit) - 6} more" if len(hit) > 6 else ""
            console.print(f"[yellow]note:[/yellow] {text}: {term(names)}{more}")


# The flat columns of `pxq report --format csv|json|markdown` (documented in docs/REPORTS.md).
COLUMNS = (
    "app",
    "size",
    "nodes",
    "ranks_per_node",
    "threads",
    "alloc",
    "mode",
    "tile",
    "backend",
    "runs",
    "median_s",
    "min_s",
    "max_s",
    "spread",
    "comm_s",
    "comm_share",
    "gbs",
    "mops",
    "misses",
    "miss_level",
    "misses_per_kib",
    "speedup",
    "vs_nas",
    "load_balance",
    "comm_efficiency",
    "parallel_efficiency",
    "computation_scaling",
    "global_efficiency",
    "of_roof",
    "verified",
    "flags",
)


def flat_rows(rows: list[Row], group_by: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One dict per configuration with COLUMNS (and the group_by fields, by their paths)."""
    out = []
    for r in rows:
        comm = statistics.median(r.comm) if r.comm else None
        d: dict[str, Any] = {
            "app": r.app,
            "size": r.size,
            "nodes": r.layout.nodes,
            "ranks_per_node": r.layout.ranks_per_node,
            "threads": r.layout.threads,
            "alloc": r.alloc,
            "mode": r.mode,
            "tile": r.tile,
            "backend": r.backend,
            "runs": len(r.times),
            "median_s": r.median,
            "min_s": min(r.times),
            "max_s": max(r.times),
            "spread": r.spread if len(r.times) > 1 else None,
            "comm_s": comm,
            "comm_share": comm / r.median if comm is not None and r.median > 0 else None,
            "gbs": r.median_gbs,
            "mops": r.median_mops,
            "misses": r.median_misses,
            "miss_level": r.miss_level or None,
            "misses_per_kib": r.misses_per_kib,
            "speedup": r.speedup,
            "vs_nas": r.vs_nas,
            **dict(
                zip(
                    ("load_balance", "comm_efficiency", "parallel_efficiency"),
                    (r.median_efficiency or (None, None, None))[:3],
                )
            ),
            "computation_scaling": r.computation_scaling,
            "global_efficiency": r.global_efficiency,
            "of_roof": r.median_roof,
            "verified": r.verified,
            "flags": " ".join(r.flags),
        }
        d.update(zip(group_by, r.extra))
        out.append(d)
    return out


def export(rows: list[Row], fmt: str, group_by: Sequence[str] = ()) -> str:
    """The rows as csv, json (a list of objects) or a markdown table."""
    flat = flat_rows(rows, group_by)
    names = [*COLUMNS, *group_by]
    if fmt == "json":
        return outputs.dumps(outputs.finite(flat), indent=1) + "\n"
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
        writer.writerow({n: csv_cell(n) for n in names})
        writer.writerows(
            {k: "" if v is None else (csv_cell(v) if isinstance(v, str) else v) for k, v in d.items()} for d in flat
        )
        return buf.getvalue()
    cell = lambda v: "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else md(v))  # noqa: E731
    lines = ["| " + " | ".join(md(n) for n in names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(cell(d[n]) for n in names) + " |" for d in flat]
    return "\n".join(lines) + "\n"


def failed_runs(recs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs that crashed, were killed or timed out: no figures, but they count."""
    return [r for r in recs if r.get("status") in FAILED_STATUSES]


def print_failures(recs: Iterable[dict[str, Any]], console: Console | None = None) -> int:
    """A table of the failed runs (layout, variant, status, exit code, last line of output)."""
    failed = failed_runs(recs)
    if not failed:
        return 0
    t = Table(title=f"{len(failed)} failed run(s): no figures, counted as failures")
    for col in ("app", "layout", "mode", "tile", "repeat", "status", "exit", "last output"):
        t.add_column(col)
    for r in failed:
        v, lay, err = r.get("variant", {}), r.get("layout", {}), r.get("error", {})
        layout = f"{lay.get('nodes')}x{lay.get('ranks_per_node')}" + (
            f"x{lay['threads']}" if lay.get("threads", 1) != 1 else ""
        )
        tail = (err.get("output_tail") or "").strip().splitlines()[-1:] or ["-"]
        t.add_row(
            *(
                term(c)
                for c in (
                    r.get("app"),
                    layout,
                    v.get("mode", "-"),
                    v.get("tile_request", "-"),
                    r.get("driver", {}).get("repeat", "-"),
                )
            ),
            f"[red]{term(r['status'])}[/red]",
            term(err.get("returncode", "-")),
            term(tail[0][:100]),
        )
    (console or Console()).print(t)
    return len(failed)


def chart_title(rows: list[Row]) -> str:
    """What a chart of these rows shows, in words: the apps and problems, not a file name."""
    problems = sorted({f"{r.app} {r.size}".strip() for r in rows})
    return "Speedup over flat MPI: " + ("; ".join(problems) if len(problems) <= 3 else f"{len(problems)} problems")


def bar_chart(rows: list[Row], path: Path, title: str) -> Path:
    """Speedup over the flat run of the same cores per node, one bar per configuration
    (figures/speedup.py draws it)."""
    shown = [r for r in rows if r.speedup is not None]
    varying = _varying(shown)
    labels = [
        f"{r.layout}\n{r.mode}"
        + (f"\n{r.tile}" if r.mode.startswith("tiled") else "")
        + "".join(f"\n{v}" for v in row_extras(r, shown, varying))
        for r in shown
    ]
    return speedup.plot(shown, labels, NAS_MODE, path, title)
