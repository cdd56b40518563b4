"""`pxq sweep APP`: the cross product of layouts x modes x tiles x backends, interleaved (its
steps: pxq.experiments.sweeping)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.core.paths import results_path
from pxq.experiments import batch, expfile, options, runner, sweeping
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


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_steps(args)
    if args.collect:
        return sweeping.collect(args, console)
    results = results_path(args.results, f"{args.app}.jsonl")
    configs = sweeping.plan(args, app_args, results, console)
    if args.submit:  # the jobs' own allocations decide what fits: nothing is checked against this host
        return batch.submit(args, app_args, configs, results, console)
    for spec in configs:  # layouts that cannot run here fail now, not mid-sweep
        runner.build(spec, Path("/nonexistent"), "check")
    if args.precision is not None:
        return sweeping.settled(args, configs, results, console)
    if args.budget is not None or args.pairs != "baseline" or args.max_blocks != 20:
        raise InputError("--budget, --pairs and --max-blocks go with --precision (a settled sweep)")
    return sweeping.fixed(args, configs, results, console)


PLUGIN = plugins.Command(
    help="run the cross product of layouts x modes x tiles x backends",
    order=1,
    hooks=plugins.CommandHooks(add, handle, app_args=True, prepare=prepare),
    example="./pxq sweep ring --layouts 1x2,1x1x2 --modes flat,hybrid,tiled --precision 0.05 --budget 4m",
)
