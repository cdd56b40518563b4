"""`pxq probe pingpong` and `pxq probe rankpairs`: the communication channels of an allocation.

pingpong runs pxq-probe-pingpong on a layout: one rank pair per channel it finds (intra-CMP,
inter-CMP, inter-node; virtual nodes count as nodes), latency and bandwidth against message
size, one curve per channel. rankpairs times every ordered rank pair sending one large buffer
(past `--pairs`, a sample of partner offsets whose size grows with the ranks) and draws the rank x
rank throughput matrix as a heatmap, on-node pairs outlined (binned past 64 ranks).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.messages import msgdist, rankpair_map
from pxq.core import bounds, plugins, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, parse_bytes, parse_layout
from pxq.core.paths import figure_path, results_path
from pxq.experiments import runner
from pxq.experiments.options import add_launch_options, launch_spec
from pxq.figures import pingpong


def _places(rec: dict[str, Any]) -> list[tuple[int, int]]:
    """(node, package) of every rank as observed, the classification msgdist uses."""
    return msgdist.observed_places({"ranks": len(rec["placement"]), "placement": rec["placement"]})


def plot_rankpairs(rec: dict[str, Any], path: Path) -> Path:
    """The rank-pair matrix (figures/pingpong.py draws it), pairs on one node outlined."""
    places = _places(rec)
    return pingpong.rankpairs(rec, list(rankpair_map.timed_pairs(rec)), [node for node, _ in places], path)


def rankpair_channels(rec: dict[str, Any]) -> dict[str, list[float]]:
    places = _places(rec)
    out: dict[str, list[float]] = {}
    for i, j, v in rankpair_map.timed_pairs(rec):
        out.setdefault(msgdist.channel(places, i, j), []).append(v)
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
    console: Console, base: runner.RunSpec, plot_path: Path, size: str, repeat: int, validate: bool, pairs: int = 4096
) -> int:
    """Every ordered rank pair's throughput on base's layout (a sample of them past PAIRS), into
    base's results file."""
    layout, results = base.layout, base.results
    _check_layout(layout)
    bounds.repeat(repeat)
    bounds.count(pairs, "--pairs", 2, bounds.MAX_PAIRS, "ordered rank pairs")
    parse_bytes(size)
    args = ["--rankpairs", "--size", size, "--repeat", str(repeat), "--pairs", str(pairs)]
    rec, code = _execute(console, base, args + (["--validate"] if validate else []))
    if rec is None:
        return code
    timed, total = rankpair_map.coverage(rec)
    if timed < total:
        console.print(f"a sample: {timed:,} of the {total:,} ordered pairs (--pairs {pairs}), at fixed offsets")
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


def _add(probes: argparse._SubParsersAction) -> None:
    pp = probes.add_parser(
        "pingpong", help="latency and bandwidth of each channel (intra-CMP, inter-CMP, inter-node) the layout offers"
    )
    pp.add_argument("--layout", default="1x2", help="PxQ (default 1x2; 2x1 for two virtual nodes)")
    pp.add_argument("--min", default="0", help="smallest message (default 0)")
    pp.add_argument("--max", default="4M", help="largest message (default 4M)")
    pp.add_argument("--window", type=int, default=64, help="sends in flight per bandwidth window (default 64)")
    pp.add_argument("--scale", type=float, default=1.0, help="iteration counts x this (default 1)")
    pp.add_argument("--validate", action="store_true", help="check every received byte")
    pp.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(pp, "results/probe-pingpong.jsonl", None)
    rk = probes.add_parser(
        "rankpairs", help="every ordered rank pair sends one large buffer: a throughput matrix and heatmap"
    )
    rk.add_argument("--layout", default="1x2", help="PxQ (default 1x2)")
    rk.add_argument("--size", default="64M", help="bytes per send (default 64M)")
    rk.add_argument("--repeat", type=int, default=3, help="timed sends per pair, best counts (default 3)")
    rk.add_argument(
        "--pairs",
        type=int,
        default=4096,
        help="most ordered pairs timed (default 4096: every pair up to 64 ranks); past it each rank "
        "sends to a fixed set of partner offsets, near and far, so the pairs grow with the ranks",
    )
    rk.add_argument("--validate", action="store_true", help="check every received byte")
    rk.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(rk, "results/probe-rankpairs.jsonl", None)


def _run(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, f"probe-{args.op}.jsonl")
    on = replace(launch_spec(args), layout=parse_layout(args.layout), results=results)
    plot = figure_path(args.plot, results)
    if args.op == "pingpong":
        return run_pingpong(console, on, plot, args.min, args.max, args.window, args.scale, args.validate)
    return run_rankpairs(console, on, plot, args.size, args.repeat, args.validate, args.pairs)


PLUGIN = plugins.Probe(("pingpong", "rankpairs"), _add, _run, order=2)
