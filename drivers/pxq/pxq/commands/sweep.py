"""`pxq sweep APP`: the cross product of layouts x modes x tiles x backends, interleaved."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pxq.analysis import settle
from pxq.analysis import tiles as tile_files
from pxq.core import bounds, plugins, records, registry
from pxq.core.errors import InputError
from pxq.core.layout import parse_layouts, parse_tile
from pxq.core.paths import results_path
from pxq.experiments import batch, expfile, options, runner, settling
from pxq.experiments import sweep as sweeps
from pxq.machine import counters


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("app", nargs="?", help=options.app_help() + " (or give it in --file)")
    p.add_argument(
        "--file",
        metavar="EXPERIMENT",
        help="the sweep from a TOML experiment file (app, layouts, modes, ... ; docs/EXPERIMENTS.md); "
        "its name, hash and text go into every record",
    )
    # How a job of `--submit` carries its experiment's identity (the JSON of driver.experiment).
    p.add_argument("--experiment-identity", help=argparse.SUPPRESS)
    p.add_argument(
        "--layouts", default="1x2,2x1,1x1x2", help="layouts PxQ[xT], comma-separated (default 1x2,2x1,1x1x2)"
    )
    p.add_argument(
        "--modes",
        default="flat,hybrid,tiled",
        help="variants, comma-separated: flat, hybrid, tiled (default all three; a mode that contradicts a layout "
        "is skipped with a note)",
    )
    p.add_argument("--tiles", default="256K", help="tile sizes for the tiled mode, e.g. 64K,256K,1M")
    p.add_argument("--threads", help="threads per rank to sweep (overrides the layouts' T), e.g. 1,2")
    p.add_argument("--backends", default="openmp", help="kernel backends, comma-separated (default openmp)")
    p.add_argument("--repeat", type=int, default=3, help="interleaved repeats of every configuration (a fixed count)")
    p.add_argument(
        "--precision",
        type=float,
        help="run paired blocks until every comparison is settled: faster by r [lo-hi], equivalent within +-P, or "
        "unsettled when the budget is spent (e.g. 0.05; docs/RESULTS.md, 'Settled comparisons')",
    )
    p.add_argument("--budget", help="with --precision: the time the blocks may take, e.g. 300, 5m, 1h (default 10m)")
    p.add_argument(
        "--pairs",
        choices=("baseline", "all"),
        default="baseline",
        help="with --precision: compare each configuration with its flat run on the same cores (default), or all pairs",
    )
    p.add_argument("--max-blocks", type=int, default=20, help="with --precision: the most blocks (default 20)")
    p.add_argument("--resume", action="store_true", help="skip runs the results file already holds")
    p.add_argument(
        "--submit",
        action="store_true",
        help="submit the sweep to Slurm instead: one sbatch job per layout (scripts in RESULTS.jobs/)",
    )
    p.add_argument(
        "--collect",
        action="store_true",
        help="wait for the jobs --submit started and gather their records into the results file",
    )
    p.add_argument("--dry-run", action="store_true", help="with --submit: print the job scripts, submit nothing")
    batch.add_site_options(p)
    options.add_fuse_option(p)
    options.add_launch_options(p)
    counters.add_option(p)


def _threads(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        threads = [int(t) for t in text.split(",")]
    except ValueError:
        raise InputError(f"--threads {text}: use integers such as 1,2") from None
    for t in threads:
        bounds.threads(t, f"--threads {text}:")
    return threads


def prepare(args: argparse.Namespace, app_args: list[str]) -> list[str]:
    """The experiment file's options (--file), checked against the command line's."""
    if not args.file:
        if args.app is None:
            raise InputError("give an app (ring, cg, mg, ft, is) or an experiment file (--file EXPERIMENT.toml)")
        if args.experiment_identity is not None:
            args.experiment = expfile.identity(args.experiment_identity)
        return app_args
    if args.experiment_identity is not None:
        raise InputError("--experiment-identity is what a submitted job carries in place of --file: give one")
    fresh = argparse.ArgumentParser()
    add(fresh)
    return expfile.apply(args, app_args, fresh.parse_args([]))


def _check_steps(args: argparse.Namespace) -> None:
    options.check_app(args.app)
    if args.submit and args.collect:
        raise InputError("--submit and --collect are two steps: submit first, then collect")
    if args.dry_run and not args.submit:
        raise InputError("--dry-run goes with --submit (it prints the job scripts)")
    batch.site_lines(args)  # site options only with --submit, each checked before anything runs


def _plan(args: argparse.Namespace, app_args: list[str], results: Path, console: Console) -> list:
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
    threads = _threads(args.threads)
    options.check_repeat(args.repeat)
    records.read(results)  # a file with a damaged line is refused before anything runs (pxq repair)
    configs, notes = sweeps.plan(options.base_spec(args, app_args, results), layouts, modes, tiles, backends, threads)
    for note in notes:
        console.print(f"[dim]{note}[/dim]")
    if not configs:
        raise InputError("nothing to run: every layout/mode combination was skipped")
    return configs


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_steps(args)
    if args.collect:
        return _collect(args, console)
    results = results_path(args.results, f"{args.app}.jsonl")
    configs = _plan(args, app_args, results, console)
    if args.submit:  # the jobs' own allocations decide what fits: nothing is checked against this host
        return batch.submit(args, app_args, configs, results, console)
    for spec in configs:  # layouts that cannot run here fail now, not mid-sweep
        runner.build(spec, Path("/nonexistent"), "check")
    if args.precision is not None:
        return _settled(args, configs, results, console)
    if args.budget is not None or args.pairs != "baseline" or args.max_blocks != 20:
        raise InputError("--budget, --pairs and --max-blocks go with --precision (a settled sweep)")
    return _fixed(args, configs, results, console)


def _fixed(args: argparse.Namespace, configs: list, results: Path, console: Console) -> int:
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


def _settled(args: argparse.Namespace, configs: list, results: Path, console: Console) -> int:
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


def _collect(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, f"{args.app}.jsonl")
    recs, problems = batch.collect(args.app, results, console)
    if recs:
        sweeps.summarize_and_print(recs, console, f"pxq sweep {args.app} --collect ({results})")
    for problem in problems:
        console.print(f"[red]{problem}[/red]")
    if problems:
        return records.EXIT_RUN_FAILED
    return records.exit_code(recs)


PLUGIN = plugins.Command(
    help="run the cross product of layouts x modes x tiles x backends",
    order=1,
    hooks=plugins.CommandHooks(add, handle, app_args=True, prepare=prepare),
    example="./pxq sweep ring --layouts 1x2,1x1x2 --modes flat,hybrid,tiled --precision 0.05 --budget 4m",
)
