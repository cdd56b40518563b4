"""`pxq probe osu TEST`: pxq-probe-osu, the ping-pong and collective probes behind the OSU
Micro-Benchmarks' flags (-m, -i, -x, -W, -f, -c) and columns, on any layout; the record keeps
every row, and the plot draws latency or bandwidth against message size."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.core import plugins, records
from pxq.core.errors import InputError
from pxq.core.layout import parse_bytes, parse_layout
from pxq.core.paths import results_path
from pxq.experiments import runner
from pxq.experiments.options import add_launch_options, launch_spec
from pxq.figures import osu

POINT_TO_POINT = ("latency", "bw", "bibw", "mbw_mr")
COLLECTIVES = ("allreduce", "bcast", "alltoall", "barrier")
TESTS = POINT_TO_POINT + COLLECTIVES


def check_sizes(test: str, text: str | None) -> None:
    """-m as OSU takes it: MIN:MAX, MAX or MIN: (bytes with K, M, G suffixes)."""
    if text is None:
        return
    lo, _, hi = text.rpartition(":") if ":" in text else ("", "", text)
    if not lo and not hi:
        raise InputError(f"-m {text}: give MIN:MAX, MAX or MIN:, e.g. -m 1:4M")
    low, high = (0 if p in ("", "0") else parse_bytes(p) for p in (lo, hi))
    if hi and high < low:
        raise InputError(f"-m {text}: MAX is below MIN")
    if test == "allreduce" and hi and high < 8:
        raise InputError(f"-m {text}: allreduce sums doubles, so its sizes are 8 bytes or more")


def argv_of(
    test: str, sizes: str | None, iters: int | None, warmup: int | None, window: int, full: bool, check: bool
) -> list[str]:
    """pxq-probe-osu's arguments, checked here so that bad input never starts MPI."""
    if test in POINT_TO_POINT and full:
        raise InputError("-f (full statistics) belongs to the collective tests, as in OSU: drop -f")
    if iters is not None and iters < 1:
        raise InputError(f"-i {iters}: use at least 1 iteration")
    if warmup is not None and warmup < 0:
        raise InputError(f"-x {warmup}: use 0 or more warm-up iterations")
    if window < 1:
        raise InputError(f"-W {window}: use a window of at least 1")
    check_sizes(test, sizes)
    argv = [test, "-W", str(window)]
    argv += ["-m", sizes] if sizes is not None else []
    argv += ["-i", str(iters)] if iters is not None else []
    argv += ["-x", str(warmup)] if warmup is not None else []
    return argv + (["-f"] if full else []) + (["-c"] if check else [])


def run(console: Console, base: runner.RunSpec, plot_path: Path, argv: list[str]) -> int:
    """One OSU-style test on base's layout, into base's results file; its table as OSU prints it."""
    test, lay = argv[0], base.layout
    if lay.threads != 1:
        raise InputError(f"layout {lay}: the OSU-style tests run one thread per rank; use a layout PxQ")
    if test in ("latency", "bw", "bibw") and lay.ranks != 2:
        raise InputError(f"osu {test} runs on 2 ranks, as OSU's does: use --layout 1x2 (one node) or 2x1 (two nodes)")
    if test == "mbw_mr" and lay.ranks % 2:
        raise InputError(
            f"osu mbw_mr pairs rank i with rank i + N/2: layout {lay} has {lay.ranks} ranks, use an even number"
        )
    if lay.ranks < 2:
        raise InputError(f"layout {lay}: the OSU-style tests need at least 2 ranks")
    spec = replace(base, app="probe-osu", mode="flat", app_args=argv)
    records.check_writable(spec.results)
    rec, code = runner.execute_probe(spec, console)
    if rec is None:
        return code
    if base.oversubscribe:
        console.print("note: ranks oversubscribe the cores, so these figures include waiting for a core")
    console.print(f"record: {spec.results}")
    console.print(f"plot: {plot([rec], plot_path)}")
    return 0 if rec["status"] == "ok" else 1


def source(rec: dict[str, Any]) -> str:
    """Who measured a record: pxq, or the imported peer (pxq import)."""
    imp = rec.get("imported")
    return f"OSU {imp.get('version', '?')} (imported)" if imp else "pxq"


def plot(recs: list[dict[str, Any]], path: Path) -> Path:
    """The latest record's test on its layout; when pxq's run and an imported OSU run of that test
    and layout are both among `recs` (the latest of each), both lines and, below them, pxq's
    figure over OSU's at every size both measured."""
    latest = recs[-1]
    test, layout = latest["osu"]["test"], latest["driver"].get("layout")
    by_source = {source(r): r for r in recs if r["osu"]["test"] == test and r["driver"].get("layout") == layout}
    if len(by_source) < 2 or test == "barrier" or "pxq" not in by_source:
        return osu.one(latest, path)
    return osu.compared(by_source, test, layout, path)


def _add(probes: argparse._SubParsersAction) -> None:
    po = probes.add_parser(
        "osu",
        help="OSU's flags and columns: latency, bw, bibw, mbw_mr, allreduce, bcast, alltoall, barrier",
        epilog="example: ./pxq probe osu latency --layout 2x1 -m 1:4M -i 1000 -x 100",
    )
    po.add_argument("test", choices=TESTS, help="the OSU test")
    po.add_argument("--layout", default="1x2", help="PxQ (default 1x2; 2x1 for two virtual nodes)")
    po.add_argument("-m", dest="sizes", metavar="MIN:MAX", help="message sizes, as OSU's -m (MIN:MAX, MAX or MIN:)")
    po.add_argument("-i", dest="iterations", type=int, help="timed iterations per size (default OSU's)")
    po.add_argument("-x", dest="warmup_iterations", type=int, help="untimed iterations per size first (default OSU's)")
    po.add_argument("-W", dest="window", type=int, default=64, help="window of messages in flight (default 64)")
    po.add_argument("-f", dest="full", action="store_true", help="collectives: min, max and iterations columns")
    po.add_argument("-c", dest="check", action="store_true", help="validate the data delivered")
    po.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(po, "results/probe-osu.jsonl", None)


def _run(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, "probe-osu.jsonl")
    argv = argv_of(args.test, args.sizes, args.iterations, args.warmup_iterations, args.window, args.full, args.check)
    # one figure per test and layout, not one overwritten by the next test
    plot = args.plot or results.with_name(f"{results.stem}-{args.test}-{args.layout}.png")
    return run(console, replace(launch_spec(args), layout=parse_layout(args.layout), results=results), plot, argv)


PLUGIN = plugins.Probe(("osu",), _add, _run, order=3)
