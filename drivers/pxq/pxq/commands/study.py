"""`pxq study STUDY APP`: studies that run an app over several layouts and placements."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from pxq import envinfo, msgdist, records, runner
from pxq import study as studies
from pxq.errors import InputError
from pxq.layout import parse_layout
from pxq.options import add_launch_options, app_help, base_spec, check_app
from pxq.paths import figure_path, results_path

NAME = "study"
HELP = "studies that run an app over several layouts and placements"
APP_ARGS = True


def add(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="study", required=True, metavar="STUDY")
    sc = sub.add_parser("contention", help="an app on 1xq, (q/2)x2 and qx1, packed and spread, normalised to qx1")
    sc.add_argument("app", help=app_help())
    sc.add_argument("--ranks", type=int, help="q: ranks in all (default: every core)")
    sc.add_argument("--placements", default="packed,spread", help="packed, spread or both (default both)")
    sc.add_argument("--repeat", type=int, default=3, help="interleaved repeats (default 3)")
    sc.add_argument("--plot", type=Path, help="bar chart PNG (default next to the results)")
    add_launch_options(sc)
    sa = sub.add_parser(
        "allocation", help="profile an app once, compare block and cyclic allocation on a machine model"
    )
    sa.add_argument("app", help=app_help())
    sa.add_argument("--ranks", type=int, required=True, help="ranks to profile (oversubscribed if above the cores)")
    sa.add_argument("--model", required=True, help="machine model NODESxSOCKETSxCORES, e.g. 4x2x2")
    sa.add_argument("--plot", type=Path, help="bar chart PNG (default next to the results)")
    add_launch_options(sa)


def allocation(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    model = msgdist.parse_model(args.model)
    if args.ranks < 2:
        raise InputError(f"--ranks {args.ranks}: use at least 2")
    if args.ranks > model.slots:
        raise InputError(
            f"model {model} has {model.slots} cores for {args.ranks} ranks: use a model with "
            f"at least {args.ranks} cores"
        )
    results = results_path(args.results, f"study-allocation-{args.app}.jsonl")
    profile_path = results.with_name(results.stem + "-msgprof.jsonl")
    records.check_writable(profile_path)
    over = args.ranks > envinfo.cores()
    spec = replace(
        base_spec(args, app_args, results),
        layout=parse_layout(f"1x{args.ranks}"),
        mode="flat",
        oversubscribe=over or args.oversubscribe,
        profile=profile_path,
    )
    console.print(
        f"profiling {args.app} on {args.ranks} ranks" + (f" (oversubscribing {envinfo.cores()} cores)" if over else "")
    )
    result = runner.execute(spec)
    if result.status != "ok":
        console.print(result.output[-2000:], markup=False)
        runner.say_failure(console, "run", result, results)
        return runner.STATUS_EXIT[result.status]
    profile = msgdist.load(profile_path)
    rows = msgdist.allocation_study(console, profile, model, spec.oversubscribe)
    title = msgdist.allocation_title(profile, model)
    records.append(results, studies.study_record("allocation", args.app, title, rows, [result.record], []))
    console.print(f"profile: {profile_path}")
    console.print(f"chart: {msgdist.plot_allocations(rows, figure_path(args.plot, results), title)}")
    return 0


def contention(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.placement or args.placement_cores:
        raise InputError("the contention study sets placements itself: use --placements packed,spread")
    if args.ranks is not None and args.ranks < 1:
        raise InputError(f"--ranks {args.ranks}: use at least 1 (default: every core)")
    results = results_path(args.results, f"study-contention-{args.app}.jsonl")
    base = base_spec(args, app_args, results)
    return studies.contention(
        console,
        base,
        args.ranks or envinfo.cores(),
        [p for p in args.placements.split(",") if p],
        args.repeat,
        results,
        figure_path(args.plot, results),
    )


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    check_app(args.app)
    return (allocation if args.study == "allocation" else contention)(args, app_args, console)
