"""`pxq report PATH...`: the table (and chart) of results files, folders or globs, or their
export (csv, json, markdown, caliper, extrap: pxq.reports.writers); `report tiles
FILE...` for tile benchmark results."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.analysis.models import tiles
from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.reports import writers as reporting


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "results", nargs="+", help="results files, folders (every *.jsonl in them) or globs; or: tiles FILE..."
    )
    p.add_argument("--plot", type=Path, help="write the chart (PNG) here")
    p.add_argument(
        "--format",
        choices=tuple(reporting.WRITERS),
        default="table",
        help="table (default), csv, json, markdown, caliper (one Caliper JSON profile per run into the "
        "--out folder, with the run's context and placement as metadata: what Thicket reads), or extrap "
        "(Extra-P's text input for scaling models: one region per variant, the sweep's dimensions as parameters)",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="with --format csv|json|markdown: write here instead of the screen; caliper: the folder; extrap: the file",
    )
    p.add_argument(
        "--params",
        help="with --format extrap: the model's parameters, 1 to 4 of ranks, threads, nodes, tile, n (the problem "
        "size), comma-separated (default: every one the runs vary in)",
    )
    p.add_argument(
        "--model",
        action="store_true",
        help="with --format extrap: fit Extra-P's models too (./pxq setup --ecosystem installs it) and print "
        "each variant's model, its fit quality and where two variants' models cross",
    )
    p.add_argument(
        "--records",
        choices=("runs", "probes", "profiles", "studies"),
        help="with --format csv|json|markdown: which records to export (default: the runs, else every probe, "
        "profile and study record, each as its own table)",
    )
    p.add_argument(
        "--group-by",
        default="",
        help="record fields that also split the rows, dotted and comma-separated, "
        "e.g. context.host,placement_summary.requested,context.mpi_library",
    )


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.results[0] == "tiles":
        if len(args.results) < 2:
            raise InputError("pxq report tiles needs a tile benchmark JSON file (pxq tune writes results/tiles.json)")
        return tiles.report(console, [Path(p) for p in args.results[1:]], args.plot)
    for option, formats in reporting.OPTIONS.items():
        if getattr(args, option) and args.format not in formats:
            raise InputError(f"--{option} goes with --format {reporting.words(formats)}")
    return reporting.WRITERS[args.format](args, console)


PLUGIN = plugins.Command(
    help="table, chart or export (csv, json, markdown) of results files, folders or globs; `report tiles FILE...`",
    order=2,
    hooks=plugins.CommandHooks(add, handle, needs_build=False, reads_records=True),
    example="./pxq report results/ --format markdown",
)
