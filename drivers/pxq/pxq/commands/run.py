"""`pxq run APP`: one miniapp on one layout, repeated."""

from __future__ import annotations

import argparse
import shlex
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.exports import report, trace
from pxq.analysis.messages import placement_view
from pxq.analysis.models import tiles
from pxq.core import bounds, plugins, records, registry
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.core.paths import binary, results_path
from pxq.experiments import options, runner
from pxq.launch.plan import stage
from pxq.machine import counters


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("app", help=options.app_help())
    p.add_argument("--layout", default="1x1", help="PxQ[xT]: nodes x ranks per node [x threads per rank] (default 1x1)")
    p.add_argument(
        "--mode",
        choices=registry.modes(),
        help="variant preset (default from the layout and --tile: hybrid with threads, tiled with a tile, else flat)",
    )
    p.add_argument("--threads", type=int, help="threads per rank (overrides the layout's T)")
    p.add_argument("--tile", help="tile size: off, auto, or bytes such as 256K")
    p.add_argument(
        "--backend", choices=registry.backends(), default="openmp", help="the threading back end of hybrid runs"
    )
    p.add_argument("--repeat", type=int, default=1, help="runs of the same configuration")
    p.add_argument("--dry-run", action="store_true", help="print the exact launch command only")
    p.add_argument(
        "--rank-order",
        type=Path,
        metavar="FILE",
        help="place the ranks slot by slot as FILE lists them (pxq placement suggest writes one); the run is "
        "profiled and its record shows the channels measured beside the ones predicted",
    )
    p.add_argument(
        "--trace",
        type=Path,
        nargs="?",
        const=runner.TRACE_AUTO,
        metavar="FILE",
        help="write the run's timeline (every rank's phases and MPI calls) as a Chrome trace-event JSON file "
        "for ui.perfetto.dev (FILE.otf2: an OTF2 archive for Vampir, its Chrome twin inside it, with the otf2 "
        "package); FILE "
        "defaults to traces/APP-RUNID.trace.json beside the results",
    )
    options.add_fuse_option(p)
    options.add_launch_options(p)
    counters.add_option(p)


def _dry_run(spec: runner.RunSpec, console: Console) -> int:
    """Prints the exact launch; the files it needs (rankfile, agent link) are written into a
    folder beside the results, so the printed command runs as it is."""
    folder = spec.results.parent / f"{spec.results.stem}.dry-run"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create {folder} for the dry run's files ({e.strerror})") from None
    if spec.trace is not None:  # the ranks' own trace files, as a real run has them written
        (folder / "trace").mkdir(exist_ok=True)
        spec = replace(spec, profile=spec.profile or folder / "msgprof.jsonl")
        console.print(f"# each rank writes its phases and MPI calls into {folder / 'trace'}; a real run merges them")
    plan, argv = runner.build(spec, folder, "dry-run")
    stage(plan, folder)
    for path, content in plan.files.items():
        console.print(f"# {path}:\n{content}", markup=False)
    env = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in plan.env.items())
    print(f"{env} {shlex.join(argv)}")
    return 0


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    options.check_app(args.app)
    layout = parse_layout(args.layout)
    if args.threads is not None:
        bounds.threads(args.threads)
        layout = layout.with_threads(args.threads)
    options.check_repeat(args.repeat)
    options.check_backends([args.backend])
    if "--help" in app_args or "-h" in app_args:
        return subprocess.run([str(binary(args.app)), "--help"]).returncode
    results = results_path(args.results, f"{args.app}.jsonl")
    spec = replace(
        options.base_spec(args, app_args, results), layout=layout, mode=args.mode, tile=args.tile, backend=args.backend
    )
    if args.rank_order is not None:
        spec = options.with_rank_order(spec, args.rank_order)
    if args.trace is not None:
        spec = replace(spec, trace=options.trace_target(args.trace, writes=not args.dry_run))
    spec.resolved()  # validates mode/threads/tile before anything runs
    if spec.resolved()[2] == "auto":
        tiles.read_profile(tiles.profile_path())  # a damaged profile is refused here, by name
    if args.dry_run:
        return _dry_run(spec, console)
    counters.say_before(console, spec.counters)
    recs: list[dict[str, Any]] = []
    for rep in range(args.repeat):
        result = runner.execute(
            replace(spec, repeat=rep, trace=options.repeat_trace(spec.trace, rep, args.repeat)), echo=True
        )
        if result.status == "bad-input":
            console.print("[red]the app refused the run as bad input[/red] (exit code 2; no record written)")
            return records.EXIT_BAD_INPUT
        if result.status != "ok":
            runner.say_failure(console, "run", result, results)
        if result.record is not None:  # always, past bad input
            recs.append(result.record)
    _show(recs, f"pxq run {args.app} -> {results}", console)
    return records.exit_code(recs)


def _show(recs: list[dict[str, Any]], title: str, console: Console) -> None:
    """The runs' table, their failures, the channels their placement gives, the counters and the
    timelines."""
    split = report.split_fields(recs)
    rows = report.summarize(recs, split)
    if rows:
        report.print_table(rows, title, console, split)
    report.print_failures(recs, console)
    measured = [rec["channels"] for rec in recs if rec and rec.get("channels")]
    if measured:  # the same in every repeat: the order fixes them
        placement_view.print_channels(console, measured[-1])
    counters.print_summary(console, recs)
    trace.print_timelines(console, recs)


PLUGIN = plugins.Command(
    help="run one miniapp on one layout",
    order=0,
    hooks=plugins.CommandHooks(add, handle, app_args=True),
    example="./pxq run cg --layout 1x2 --mode hybrid --repeat 3 -- --class A",
)
