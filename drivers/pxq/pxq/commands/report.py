"""`pxq report FILE`: the table (and chart) of a results file; `report tiles FILE...`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq import records, registry, report, tiles
from pxq.errors import InputError

NAME = "report"
HELP = "table (and chart) of a results file; `report tiles FILE...` for tile benchmark results"
APP_ARGS = False


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", type=Path, nargs="+", help="a results file, or: tiles FILE...")
    p.add_argument("--plot", type=Path, help="write the chart (PNG) here")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if str(args.results[0]) == "tiles":
        if len(args.results) < 2:
            raise InputError("pxq report tiles needs a tile benchmark JSON file (pxq tune writes results/tiles.json)")
        return tiles.report(console, args.results[1:], args.plot)
    if len(args.results) != 1:
        raise InputError("pxq report takes one results file (or: pxq report tiles FILE...)")
    path = args.results[0]
    recs = records.final(records.read(path, must_exist=True))
    rows = report.summarize(recs)
    if not rows and not report.failed_runs(recs):
        raise InputError(f"{path}: no run records to report (probe records are reported by their probe)")
    if rows:
        report.print_table(rows, str(path), console)
    report.print_failures(recs, console)
    if args.plot and rows:
        console.print(f"chart: {report.bar_chart(rows, args.plot, str(path))}")
    return records.exit_code(r for r in recs if r.get("app") in registry.apps())
