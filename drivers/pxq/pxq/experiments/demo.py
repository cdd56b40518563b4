"""`pxq demo`: the headline study on whatever machine it runs on: the ring in flat, hybrid
and tiled variants across the layouts that use every core, a table and a bar chart."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from rich.console import Console

from pxq.analysis.exports import report
from pxq.analysis.verdicts import settle
from pxq.core import records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, format_bytes
from pxq.core.paths import binary, results_dir, results_path
from pxq.experiments import settling, sweep
from pxq.experiments.runner import RunSpec
from pxq.figures import settled as settled_figure
from pxq.machine import caches
from pxq.machine.envinfo import cores


def demo_layouts(n: int) -> list[Layout]:
    """1xN (flat, one node), Nx1 (one rank per virtual node), 1x1xN (one hybrid rank)."""
    out = [Layout(1, n, 1), Layout(n, 1, 1), Layout(1, 1, n)]
    unique = []
    for lay in out:
        if lay not in unique:
            unique.append(lay)
    return unique


def triad_gbs(threads: int) -> float | None:
    exe = binary("stream")
    try:
        out = subprocess.run(
            [str(exe), "--threads", str(threads), "--json", "--size", "128M"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return float(json.loads(out.stdout)["best_gbs"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return None


def choose_block(console: Console, n: int) -> str:
    """64 MiB per worker, grown past the last cache level pxq measured here (pxq.machine.caches), so
    the untiled ring streams from memory whatever cache the machine reports."""
    try:
        prof = caches.here(console.print)
    except (InputError, OSError, ValueError, subprocess.SubprocessError) as e:
        console.print(f"caches not measured ({e}): 64M per worker")
        return "64M"
    ws = caches.ring_block(prof["last_level_bytes"], n, caches.available_memory())
    console.print(f"block: {ws.why} ({prof['note']})", markup=False)
    return format_bytes(ws.bytes)


DEMO_BUDGET = 150.0  # seconds of blocks: the demo ends within about 3 minutes on 2 cores


def run(
    console: Console,
    repeat: int | None = None,
    block: str | None = None,
    iterations: int = 10,
    budget: float = DEMO_BUDGET,
) -> int:
    """The ring's variants on every layout of this machine's cores, each against its flat run on
    the same cores, run until those comparisons are settled (or `repeat` fixed repeats)."""
    n = cores()
    results = results_path(None, "demo.jsonl")
    console.rule(f"pxq demo: the ring on {n} core(s)")
    block = block or choose_block(console, n)
    console.print(
        "Each worker owns a block, runs 8 passes over it, and hands it to its right "
        "neighbour; flat copies every block through MPI, hybrid hands blocks between "
        "threads without copying, tiled works in 256 KiB chunks that stay in L2 and "
        "sends each chunk while it is still in cache.\n"
    )
    base = RunSpec(
        app="ring",
        layout=Layout(1, 1),
        results=results,
        app_args=["--block", block, "--iterations", str(iterations)],
        timeout=300,
    )
    # The demo picks its combinations; the ones plan() skips are not news here.
    configs, _ = sweep.plan(base, demo_layouts(n), ["flat", "hybrid", "tiled"], ["256K"], ["openmp"], None)
    if repeat is not None:
        return _fixed(console, configs, repeat, block, results, n)
    rule = settle.Rule(precision=0.05)
    pairs = settling.baseline_pairs(configs)
    console.print(
        f"{len(configs)} configurations in paired blocks of shuffled order until each comparison with its flat run "
        f"is settled (precision +-5%, at most {rule.max_blocks} blocks or {budget:.0f} s)"
    )
    out = settling.run(configs, pairs, rule, budget, console)
    kept = kept_runs(out.records)
    split = report.split_fields(kept)
    rows = report.summarize(kept, split)
    for r in rows:  # a ratio of two medians is not a verdict: the settled comparisons below give the speedups
        r.speedup, r.paired = None, True
    title = f"ring, {block} per worker, K=8, {blocks_text(out)}: each configuration's runs in the blocks kept"
    report.print_table(rows, title, console, split)
    if any(len(r.times) > 1 and r.noise > report.MAX_SPREAD for r in rows):
        console.print(
            f"spread: some rows' runs differ by over {report.MAX_SPREAD:.0%} from block to block (the host drifts); "
            "the verdicts below compare runs within a block, which cancels that drift"
        )
    report.print_failures(out.records, console)
    settling.print_verdicts(out, rule, console)
    _triad(console, n)
    chart = settled_figure.plot(
        out.names,
        [(p.base, p.other, p.verdict) for p in out.pairs],
        results_dir() / "demo-ring.png",
        f"pxq ring on {n} cores: speedup over the flat run on the same cores ({blocks_text(out)})",
    )
    console.print(f"chart: {chart}\nrecords: {results}")
    return settling.exit_code(out)


def kept_runs(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs a settled sweep's verdicts rest on: those of the blocks the host moved under left out."""
    moved = settle.moved_rounds(recs)
    return [r for r in recs if (settle.round_of(r) or ("", -1, ""))[:2] not in moved]


def blocks_text(out: settling.Outcome) -> str:
    """The blocks the verdicts rest on, and those left out because the host moved."""
    used = out.blocks - len(out.moved)
    return f"{used} paired blocks" + (f", {len(out.moved)} more left out: the host moved" if out.moved else "")


def _fixed(console: Console, configs: list[RunSpec], repeat: int, block: str, results: Any, n: int) -> int:
    """The demo with a fixed number of interleaved repeats (--repeat)."""
    runs = sweep.interleave(configs, repeat)  # a sweep id of its own: the summary is this demo's
    recs = sweep.run(runs, results, resume=False, console=console)
    split = report.split_fields(recs)
    rows = report.summarize(recs, split)
    report.print_table(rows, f"ring, {block} per worker, K=8, {repeat} interleaved repeats", console, split)
    report.print_failures(recs, console)
    _triad(console, n)
    chart = report.bar_chart(
        rows, results_dir() / "demo-ring.png", f"pxq ring on {n} cores: speedup over flat (median of {repeat})"
    )
    console.print(f"chart: {chart}\nrecords: {results}")
    return records.exit_code(recs) if len(recs) == len(runs) else records.EXIT_RUN_FAILED


def _triad(console: Console, n: int) -> None:
    triad = triad_gbs(n)
    if triad:
        console.print(
            f"STREAM-style triad with {n} thread(s): {triad:.1f} GB/s. An untiled run "
            "whose blocks do not fit in cache cannot stream them faster than this; "
            "untiled GB/s above it means part of the blocks stayed in a shared cache, "
            "tiled GB/s above it is the K passes running in cache."
        )
