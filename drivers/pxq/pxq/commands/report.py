"""`pxq report PATH...`: the table (and chart) of results files, folders or globs, or their
export (csv, json, markdown); `report tiles FILE...` for tile benchmark results."""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq import records, registry, report, tiles
from pxq.errors import InputError

NAME = "report"
HELP = "table, chart or export (csv, json, markdown) of results files, folders or globs; `report tiles FILE...`"
APP_ARGS = False
FORMATS = ("table", "csv", "json", "markdown")


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "results", nargs="+", help="results files, folders (every *.jsonl in them) or globs; or: tiles FILE..."
    )
    p.add_argument("--plot", type=Path, help="write the chart (PNG) here")
    p.add_argument("--format", choices=FORMATS, default="table", help="table (default), csv, json or markdown")
    p.add_argument("--out", type=Path, help="with --format csv|json|markdown: write here instead of the screen")
    p.add_argument(
        "--group-by",
        default="",
        help="record fields that also split the rows, dotted and comma-separated, "
        "e.g. context.host,placement_summary.requested,context.mpi_library",
    )


def expand(items: list[str]) -> list[Path]:
    """Files as given, folders as their *.jsonl, anything else as a glob; each must match something."""
    out: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise InputError(
                    f"{item} is a directory without results files (*.jsonl): give a results file, "
                    "or a folder that holds some"
                )
        elif path.exists():
            found = [path]
        else:
            found = sorted(Path(p) for p in glob.glob(item) if Path(p).is_file())
            if not found:
                raise InputError(f"{item}: no such file, folder or files matching it")
        out += [p for p in found if p not in out]
    return out


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.results[0] == "tiles":
        if len(args.results) < 2:
            raise InputError("pxq report tiles needs a tile benchmark JSON file (pxq tune writes results/tiles.json)")
        return tiles.report(console, [Path(p) for p in args.results[1:]], args.plot)
    if args.out and args.format == "table":
        raise InputError("--out goes with --format csv, json or markdown")
    if args.out:
        records.check_writable(args.out)
    group_by = [f.strip() for f in args.group_by.split(",") if f.strip()]
    paths = expand(args.results)
    recs: list[dict[str, Any]] = []
    for path in paths:
        recs += records.final(records.read(path, must_exist=True))
    rows = report.summarize(recs, group_by)
    title = str(paths[0]) if len(paths) == 1 else f"{len(paths)} results files"
    if not rows and not report.failed_runs(recs):
        raise InputError(f"{title}: no run records to report (probe records are reported by their probe)")
    if args.format != "table":
        text = report.export(rows, args.format, group_by)
        if args.out:
            args.out.write_text(text)
            console.print(f"{args.format}: {args.out} ({len(rows)} rows)")
        else:
            print(text, end="")
    else:
        if rows:
            report.print_table(rows, title, console, group_by)
        report.print_failures(recs, console)
    if args.plot and rows:
        console.print(f"chart: {report.bar_chart(rows, args.plot, title)}")
    return records.exit_code(r for r in recs if r.get("app") in registry.apps())
