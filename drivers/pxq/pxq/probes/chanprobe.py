"""`pxq probe pingpong` and `pxq probe rankpairs`: the communication channels of an allocation.

pingpong runs pxq-probe-pingpong on a layout: one rank pair per channel it finds (intra-CMP,
inter-CMP, inter-node; virtual nodes count as nodes), latency and bandwidth against message
size, one curve per channel. rankpairs times every ordered rank pair sending one large buffer
and draws the rank x rank throughput matrix as a heatmap, on-node pairs outlined.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis import msgdist
from pxq.core import bounds, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, parse_bytes
from pxq.experiments import runner
from pxq.figures import pingpong


def _places(rec: dict[str, Any]) -> list[tuple[int, int]]:
    """(node, package) of every rank as observed, the classification msgdist uses."""
    return msgdist.observed_places({"ranks": len(rec["placement"]), "placement": rec["placement"]})


def plot_rankpairs(rec: dict[str, Any], path: Path) -> Path:
    """The rank-pair matrix (figures/pingpong.py draws it), pairs on one node outlined."""
    n, places = len(rec["matrix_gbs"]), _places(rec)
    on_node = [[msgdist.channel(places, i, j) != "inter_node" for j in range(n)] for i in range(n)]
    return pingpong.rankpairs(rec, on_node, path)


def rankpair_channels(rec: dict[str, Any]) -> dict[str, list[float]]:
    m, places = rec["matrix_gbs"], _places(rec)
    out: dict[str, list[float]] = {}
    for i in range(len(m)):
        for j in range(len(m)):
            if i != j:
                out.setdefault(msgdist.channel(places, i, j), []).append(m[i][j])
    return out


def _check_layout(layout: Layout) -> None:
    if layout.ranks < 2:
        raise InputError(f"layout {layout}: the probe needs at least 2 ranks (1x2, 2x1, 2x2 ...)")
    if layout.threads != 1:
        raise InputError(f"layout {layout}: the probe runs one thread per rank; use a layout PxQ")


def _execute(console: Console, base: runner.RunSpec, args: list[str]) -> tuple[dict[str, Any] | None, int]:
    """One run of pxq-probe-pingpong (flat, on base's layout): its record, or None and the exit code."""
    spec = replace(base, app="probe-pingpong", mode="flat", app_args=args)
    records.check_writable(spec.results)
    return runner.execute_probe(spec, console)


def run_pingpong(
    console: Console,
    base: runner.RunSpec,
    plot_path: Path,
    min_size: str,
    max_size: str,
    window: int,
    scale: float,
    validate: bool,
) -> int:
    """The channels' latency and bandwidth on base's layout, into base's results file."""
    layout, results = base.layout, base.results
    _check_layout(layout)
    if window < 1:
        raise InputError(f"--window {window}: use at least 1")
    if not scale > 0:
        raise InputError(f"--scale {scale}: must be above 0")
    if min_size != "0":
        parse_bytes(min_size)
    if parse_bytes(max_size) < (0 if min_size == "0" else parse_bytes(min_size)):
        raise InputError(f"--max {max_size} is below --min {min_size}")
    args = ["--min", min_size, "--max", max_size, "--window", str(window), "--scale", str(scale)]
    if validate:
        args.append("--validate")
    rec, code = _execute(console, base, args)
    if rec is None:
        return code
    t = Table(title="channels: latency (us) and bandwidth (GB/s), medians")
    for col in ("channel", "ranks", "0 B us", "8 B us", "64K us", "1M GB/s", "largest GB/s"):
        t.add_column(col, justify="left" if col in ("channel", "ranks") else "right")
    for ch in rec["channels"]:
        lat = {p["bytes"]: p["median_us"] for p in ch["latency"]}
        bw = {p["bytes"]: p["median_gbs"] for p in ch["bandwidth"]}
        cell = lambda d, k, f: f.format(d[k]) if k in d else "-"  # noqa: E731
        t.add_row(
            f"{ch['channel']} ({ch['detail']})",
            f"{ch['pair'][0]}-{ch['pair'][1]}",
            cell(lat, 0, "{:.2f}"),
            cell(lat, 8, "{:.2f}"),
            cell(lat, 65536, "{:.2f}"),
            cell(bw, 1 << 20, "{:.2f}"),
            f"{ch['bandwidth'][-1]['median_gbs']:.2f}" if ch["bandwidth"] else "-",
        )
    console.print(t)
    if base.oversubscribe:
        console.print("note: ranks oversubscribe the cores, so these figures include waiting for a core")
    console.print(f"record: {results}")
    console.print(f"plot: {pingpong.pingpong(rec, plot_path)}")
    return 0 if rec["status"] == "ok" else 1


def run_rankpairs(
    console: Console, base: runner.RunSpec, plot_path: Path, size: str, repeat: int, validate: bool
) -> int:
    """Every ordered rank pair's throughput on base's layout, into base's results file."""
    layout, results = base.layout, base.results
    _check_layout(layout)
    bounds.repeat(repeat)
    parse_bytes(size)
    args = ["--rankpairs", "--size", size, "--repeat", str(repeat)] + (["--validate"] if validate else [])
    rec, code = _execute(console, base, args)
    if rec is None:
        return code
    t = Table(title="rank pairs by channel (GB/s)")
    for col in ("channel", "pairs", "min", "median", "max"):
        t.add_column(col, justify="left" if col == "channel" else "right")
    for ch, vals in sorted(rankpair_channels(rec).items()):
        vals = sorted(vals)
        t.add_row(ch, str(len(vals)), f"{vals[0]:.2f}", f"{vals[len(vals) // 2]:.2f}", f"{vals[-1]:.2f}")
    console.print(t)
    console.print(f"record: {results}")
    console.print(f"plot: {plot_rankpairs(rec, plot_path)}")
    return 0 if rec["status"] == "ok" else 1
