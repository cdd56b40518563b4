"""`pxq probe PROBE`: collectives' variability, channels (ping-pong, rank pairs), the memory
hierarchy (stride) and bandwidth per active core."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from pxq.analysis import drift
from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.core.layout import format_bytes, parse_layout
from pxq.core.paths import figure_path, results_path
from pxq.experiments.options import add_launch_options, launch_spec, parse_cpus
from pxq.launch.request import PLACEMENTS
from pxq.machine import ceilings as ceil
from pxq.machine import envinfo
from pxq.probes import ceilprobe, chanprobe, memprobe, osuprobe, probe


def _add_collective(probes: argparse._SubParsersAction, op: str) -> None:
    p = probes.add_parser(op, help=f"N back-to-back MPI {op} calls, optionally next to a background load")
    p.add_argument("--layout", default="1x2", help="PxQ: nodes x ranks per node (default 1x2)")
    p.add_argument("--calls", type=int, default=2000, help="timed calls (default 2000)")
    p.add_argument("--size", default="16K", help="message size (default 16K; per peer for alltoall)")
    p.add_argument("--warmup", type=int, default=50, help="untimed calls first (default 50)")
    p.add_argument("--noise", choices=probe.NOISE_MODES, help="a background load while the probe runs")
    p.add_argument("--noise-cores", help="cores the load runs on, e.g. 1 or 0,1 (default the last core)")
    p.add_argument(
        "--noise-intensity",
        type=float,
        default=1.0,
        help="share of each 10 ms period the load works, (0, 1] (default 1)",
    )
    p.add_argument("--plot", type=Path, help="time series and histogram PNG (default next to the results)")
    add_launch_options(p, f"results/probe-{op}.jsonl", None)


def _add_channels(probes: argparse._SubParsersAction) -> None:
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
    rk.add_argument("--validate", action="store_true", help="check every received byte")
    rk.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(rk, "results/probe-rankpairs.jsonl", None)


def _add_osu(probes: argparse._SubParsersAction) -> None:
    po = probes.add_parser(
        "osu",
        help="OSU's flags and columns: latency, bw, bibw, mbw_mr, allreduce, bcast, alltoall, barrier",
        epilog="example: ./pxq probe osu latency --layout 2x1 -m 1:4M -i 1000 -x 100",
    )
    po.add_argument("test", choices=osuprobe.TESTS, help="the OSU test")
    po.add_argument("--layout", default="1x2", help="PxQ (default 1x2; 2x1 for two virtual nodes)")
    po.add_argument("-m", dest="sizes", metavar="MIN:MAX", help="message sizes, as OSU's -m (MIN:MAX, MAX or MIN:)")
    po.add_argument("-i", dest="iterations", type=int, help="timed iterations per size (default OSU's)")
    po.add_argument("-x", dest="warmup_iterations", type=int, help="untimed iterations per size first (default OSU's)")
    po.add_argument("-W", dest="window", type=int, default=64, help="window of messages in flight (default 64)")
    po.add_argument("-f", dest="full", action="store_true", help="collectives: min, max and iterations columns")
    po.add_argument("-c", dest="check", action="store_true", help="validate the data delivered")
    po.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(po, "results/probe-osu.jsonl", None)


def _add_memory(probes: argparse._SubParsersAction) -> None:
    ps = probes.add_parser(
        "stride",
        help="time per read+write access over array sizes and strides (and "
        "blocks), alone or as q copies on placed cores",
    )
    ps.add_argument("--min", default="4K", help="smallest array (default 4K)")
    ps.add_argument("--max", default="auto", help="largest array (default: twice the last-level cache, >= 64M)")
    ps.add_argument("--stride", help="measure this stride only (bytes), e.g. 64")
    ps.add_argument("--accesses", type=int, default=1 << 22, help="accesses per point, at least (default 4194304)")
    ps.add_argument("--repeat", type=int, default=3, help="measurements per point, fastest counts (default 3)")
    ps.add_argument("--copies", type=int, default=1, help="copies run at once on as many cores (default 1)")
    ps.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default="packed",
        help="cores of the copies: packed (sharing caches), spread, or custom (--cores)",
    )
    ps.add_argument("--cores", dest="placement_cores", help="with --placement custom: one cpu per copy, e.g. 0,1")
    ps.add_argument(
        "--points-per-octave",
        type=int,
        choices=(1, 2),
        default=2,
        help="array sizes per doubling: 1 (powers of two) or 2 (also 1.5x; default)",
    )
    ps.add_argument("--no-blocks", action="store_true", help="skip the block-size variant")
    ps.add_argument("--results", type=Path, help="results file (default results/probe-stride.jsonl)")
    ps.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    pb = probes.add_parser(
        "bandwidth",
        help="STREAM copy/scale/add/triad on 1..N active cores, as ranks and as threads, with the saturation point",
    )
    pb.add_argument("--max-cores", type=int, help="N: measure 1..N active cores (default: every core)")
    pb.add_argument("--array", default="auto", help="bytes per array per core (default: 4 x the last-level cache)")
    pb.add_argument("--kernels", default="copy,scale,add,triad", help="comma-separated STREAM kernels")
    pb.add_argument("--repeat", type=int, default=5, help="timed passes, fastest counts (default 5)")
    pb.add_argument(
        "--as",
        dest="workers_as",
        choices=("both", "ranks", "threads"),
        default="both",
        help="cores as ranks (flat), threads (hybrid) or both (default)",
    )
    pb.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(pb, "results/probe-bandwidth.jsonl", None)


def _add_reference(probes: argparse._SubParsersAction) -> None:
    pr = probes.add_parser(
        "reference",
        help="re-time the roofline ceilings' reference points beside your runs (the stream and the access "
        "kinds, about half a minute), so `pxq roofline` scales the ceilings to the runs' time",
    )
    pr.add_argument("--results", type=Path, help="results file (default results/roofline-reference.jsonl)")


def add(p: argparse.ArgumentParser) -> None:
    probes = p.add_subparsers(dest="op", required=True, metavar="PROBE")
    for op in probe.COLLECTIVES:
        _add_collective(probes, op)
    _add_channels(probes)
    _add_osu(probes)
    _add_memory(probes)
    _add_reference(probes)


def _reference(args: argparse.Namespace, console: Console) -> int:
    """The reference points, appended to the results, and how far each is from the kept ceilings."""
    results = results_path(args.results, "roofline-reference.jsonl")
    refs = ceilprobe.reference(lambda s: console.print(f"[dim]{s}[/dim]"), results)
    kept = ceil.load(envinfo.machine())
    if kept is None:
        console.print("no ceilings kept on this machine yet: `pxq roofline` measures them, then uses these")
    else:
        n = kept["cores"]
        rows = drift.summary(drift.factors(refs, kept), n)
        console.print(f"these references over the kept ceilings (measured {kept['date']}), median, {n} cores busy:")
        t = Table()
        t.add_column("curve")
        sizes = sorted({r["bytes"] for r in rows})
        for size in sizes:
            t.add_column(format_bytes(size), justify="right")
        for curve in dict.fromkeys(r["curve"] for r in rows):
            by = {r["bytes"]: f"{r['median']:.2f}" for r in rows if r["curve"] == curve}
            t.add_row(curve, *(by.get(size, "") for size in sizes))
        console.print(t)
    console.print(f"{len(refs)} reference(s) appended to {results}; pass it to `pxq roofline` with the runs")
    return 0


def _stride(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, "probe-stride.jsonl")
    argv = memprobe.stride_argv(
        args.min,
        args.max,
        args.stride,
        args.accesses,
        args.repeat,
        args.copies,
        args.placement,
        parse_cpus(args.placement_cores),
        args.points_per_octave,
        args.no_blocks,
        results,
        {"command": "pxq probe stride"},
    )
    return memprobe.run_stride(console, argv, results, figure_path(args.plot, results))


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.op == "stride":
        return _stride(args, console)
    if args.op == "reference":
        return _reference(args, console)
    if args.problem_class:
        raise InputError("--class: the probes have no problem classes")
    if args.op == "bandwidth" and args.max_cores is not None and args.max_cores < 1:
        raise InputError(f"--max-cores {args.max_cores}: measure at least 1 core (default: every core)")
    base = launch_spec(args)
    results = results_path(args.results, f"probe-{args.op}.jsonl")
    plot = figure_path(args.plot, results)
    if args.op == "osu":
        argv = osuprobe.argv_of(
            args.test, args.sizes, args.iterations, args.warmup_iterations, args.window, args.full, args.check
        )
        if args.plot is None:  # one figure per test and layout, not one overwritten by the next test
            plot = results.with_name(f"{results.stem}-{args.test}-{args.layout}.png")
        return osuprobe.run(console, replace(base, layout=parse_layout(args.layout), results=results), plot, argv)
    if args.op in ("pingpong", "rankpairs"):
        on = replace(base, layout=parse_layout(args.layout), results=results)
        if args.op == "pingpong":
            return chanprobe.run_pingpong(console, on, plot, args.min, args.max, args.window, args.scale, args.validate)
        return chanprobe.run_rankpairs(console, on, plot, args.size, args.repeat, args.validate)
    if args.op == "bandwidth":
        return memprobe.run_bandwidth(
            console,
            args.max_cores or envinfo.cores(),
            args.array,
            args.kernels,
            args.repeat,
            args.workers_as,
            results,
            plot,
            base,
        )
    return probe.run(
        console,
        args.op,
        parse_layout(args.layout),
        args.calls,
        args.size,
        args.warmup,
        args.noise,
        args.noise_cores,
        args.noise_intensity,
        results,
        plot,
        base,
    )


PLUGIN = plugins.Command(
    help="probes: a collective's variability (allreduce, bcast, alltoall, barrier), channels (pingpong, "
    "rankpairs), OSU-style tests (osu), the memory hierarchy (stride), bandwidth per active core (bandwidth)",
    order=6,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq probe pingpong --layout 1x2",
)
