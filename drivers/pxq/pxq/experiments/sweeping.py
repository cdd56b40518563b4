"""The steps of `pxq sweep` once its options are read: the configurations planned (every option
checked before any runs), a fixed count of interleaved repeats, paired blocks until the
comparisons settle (pxq.experiments.settling), and the records of submitted jobs collected."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pxq.analysis.models import tiles as tile_files
from pxq.analysis.verdicts import settle
from pxq.core import bounds, records, registry
from pxq.core.errors import InputError
from pxq.core.layout import parse_layouts, parse_tile
from pxq.core.paths import results_path
from pxq.experiments import batch, options, settling
from pxq.experiments import sweep as sweeps


def threads_of(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        threads = [int(t) for t in text.split(",")]
    except ValueError:
        raise InputError(f"--threads {text}: use integers such as 1,2") from None
    for t in threads:
        bounds.threads(t, f"--threads {text}:")
    return threads


def plan(args: argparse.Namespace, app_args: list[str], results: Path, console: Console) -> list:
    """The configurations to run, every option checked before any of them runs."""
    layouts = parse_layouts(args.layouts)
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in registry.modes():
            raise InputError(f"unknown mode '{m}': use {', '.join(registry.modes())}")
    tiles = [parse_tile(t) for t in args.tiles.split(",") if t]
    if "auto" in tiles and "tiled" in modes:
        tile_files.read_profile(tile_files.profile_path())  # a damaged profile is refused before any run
    backends = [b for b in args.backends.split(",") if b]
    options.check_backends(backends)
    threads = threads_of(args.threads)
    options.check_repeat(args.repeat)
    records.read(results)  # a file with a damaged line is refused before anything runs (pxq repair)
    configs, notes = sweeps.plan(options.base_spec(args, app_args, results), layouts, modes, tiles, backends, threads)
    for note in notes:
        console.print(f"[dim]{note}[/dim]")
    if not configs:
        raise InputError("nothing to run: every layout/mode combination was skipped")
    return configs


def fixed(args: argparse.Namespace, configs: list, results: Path, console: Console) -> int:
    """The sweep with a fixed count of interleaved repeats."""
    runs = sweeps.interleave(configs, args.repeat)
    console.print(f"{len(configs)} configurations x {args.repeat} repeats = {len(runs)} runs -> {results}")
    refused: dict[str, str] = {}
    recs = sweeps.run(runs, results, args.resume, console, refused)
    sweeps.summarize_and_print(recs, console, f"pxq sweep {args.app} ({results})")
    expected = [r for r in runs if sweeps.configuration_key(r) not in refused]
    if len(recs) != len(expected):
        console.print(f"[red]{len(expected) - len(recs)} run(s) have no record in {results}[/red]")
        return records.EXIT_RUN_FAILED
    if refused:  # the others ran and are recorded; the refused ones are bad input
        for why in refused.values():
            console.print(f"[red]refused as bad input[/red] (no record): {escape(why)}", highlight=False)
        return max(records.exit_code(recs), records.EXIT_BAD_INPUT)
    return records.exit_code(recs)


def settled(args: argparse.Namespace, configs: list, results: Path, console: Console) -> int:
    """The sweep run until its comparisons are settled (pxq.experiments.settling)."""
    if args.resume:
        raise InputError("--resume goes with a fixed --repeat: a settled sweep decides its blocks as it runs")
    rule = settle.Rule(precision=args.precision, max_blocks=args.max_blocks)
    rule.check()
    budget = settling.parse_budget(args.budget)
    pairs = settling.all_pairs(configs) if args.pairs == "all" else settling.baseline_pairs(configs)
    console.print(
        f"{len(configs)} configurations, {len(pairs)} comparison(s), precision +-{100 * rule.precision:g}%, "
        f"at most {rule.max_blocks} blocks or {budget:.0f} s -> {results}"
    )
    out = settling.run(configs, pairs, rule, budget, console)
    sweeps.summarize_and_print(out.records, console, f"pxq sweep {args.app} ({results})")
    settling.print_verdicts(out, rule, console)
    return settling.exit_code(out)


def collect(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, f"{args.app}.jsonl")
    recs, problems = batch.collect(args.app, results, console)
    if recs:
        sweeps.summarize_and_print(recs, console, f"pxq sweep {args.app} --collect ({results})")
    for problem in problems:
        console.print(f"[red]{problem}[/red]")
    if problems:
        return records.EXIT_RUN_FAILED
    return records.exit_code(recs)
