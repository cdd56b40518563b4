"""What `pxq report` writes, one writer per format (WRITERS: a table of exporters): the runs'
table with its chart, failures, timelines and settled verdicts (and the hit rate of advice
records); CSV, JSON and markdown; Caliper
profiles; Extra-P's input; and, for probe, profile and study records, their figures and tables
drawn again. A new format is its writer and its line in WRITERS (and OPTIONS for the options
only it takes); `pxq report` lists the names in --format's choices."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.exports import caliper, extrap, extrapfit, report, tables, trace
from pxq.analysis.models import advice
from pxq.analysis.verdicts import settle
from pxq.core import outputs, records, schemas
from pxq.core import paths as paths_mod
from pxq.core.errors import InputError
from pxq.core.paths import figure_path
from pxq.experiments import settling
from pxq.reports import redraw


def words(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _gather(
    args: argparse.Namespace, recs: list[dict[str, Any]] | None = None
) -> tuple[list[Path], list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The results named: their paths, their runs, their other records with a figure or table
    (probes, profiles, studies; only those --records names) and the fields that split the rows.
    RECS: the records, already read (by `pxq validate`, which has just checked each)."""
    group_by = [f.strip() for f in args.group_by.split(",") if f.strip()]
    paths = paths_mod.expand(args.results)
    if recs is None:
        recs = records.read_files(paths, keep=functools.partial(report.essentials, group_by=group_by))
    kinds = {"probes": "probe", "profiles": "profile", "studies": "study"}
    if args.records and args.records != "runs":
        recs = [r for r in recs if schemas.kind_of(r) == kinds[args.records]]
        if not recs:
            raise InputError(f"no {kinds[args.records]} records in {', '.join(str(p) for p in paths)}")
    runs = [r for r in recs if schemas.kind_of(r) == "run"]
    others = [r for r in recs if redraw.figure_key(r) or schemas.kind_of(r) == "advice"]
    return paths, runs, others, report.split_fields(runs, group_by)


def _title(paths: list[Path]) -> str:
    return str(paths[0]) if len(paths) == 1 else f"{len(paths)} results files"


def table(args: argparse.Namespace, console: Console, recs: list[dict[str, Any]] | None = None) -> int:
    """The runs' table, their failures, timelines and settled verdicts, and the chart; without
    runs, the figures of the probes, profiles and studies. RECS: the records of args.results,
    already read (else read here)."""
    paths, runs, others, group_by = _gather(args, recs)
    advised = [r for r in others if schemas.kind_of(r) == "advice"]
    others = [r for r in others if schemas.kind_of(r) != "advice"]
    rows = report.summarize(runs, group_by)
    if advised:
        console.print(advice.hit_rate_text(advice.hit_rate(advised)), highlight=False)
    if not rows and not report.failed_runs(runs):
        if others:
            return _redraw(others, args.plot or figure_path(None, paths[0]), console)
        if advised:
            return 0
        raise InputError(f"{_title(paths)}: no run, probe, profile, study or advice records to report")
    if rows:
        report.print_table(rows, _title(paths), console, group_by)
    report.print_failures(runs, console)
    trace.print_timelines(console, runs)
    settled = settling.from_records(runs)
    if settled is not None:
        settling.print_verdicts(settled, settle.Rule(), console)
    studies = [r for r in others if schemas.kind_of(r) == "study"]
    if studies:
        _redraw(studies, args.plot or figure_path(None, paths[0]), console)
    else:
        _chart(args.plot, rows, console)
    return records.exit_code(runs)


def _export(args: argparse.Namespace, console: Console) -> int:
    """The runs' rows as CSV, JSON or markdown (to --out or the screen); without runs, the
    probes', profiles' and studies' own tables."""
    if args.out:
        records.check_writable(args.out, "--out", args.format)
    paths, runs, others, group_by = _gather(args)
    others = [r for r in others if schemas.kind_of(r) != "advice"]  # the table's hit rate, not an export
    rows = report.summarize(runs, group_by)
    if not rows and not report.failed_runs(runs):
        if others:
            text, count = tables.export(others, args.format)
            _emit(text, count, args, console)
            return records.exit_code(r for r in others if schemas.kind_of(r) != "profile")
        raise InputError(f"{_title(paths)}: no run, probe, profile or study records to report")
    _emit(report.export(rows, args.format, group_by), len(rows), args, console)
    _chart(args.plot, rows, console)
    return records.exit_code(runs)


def _chart(path: Path | None, rows: list[report.Row], console: Console) -> None:
    if path is None or not rows:
        return
    if not any(r.speedup is not None for r in rows):
        console.print("chart: none drawn: it shows each configuration's speedup over its flat run, and none has one")
        return
    console.print(f"chart: {report.bar_chart(rows, path, report.chart_title(rows))}")


def _caliper(args: argparse.Namespace, console: Console) -> int:
    """Every ok run of the results as a Caliper JSON profile in the --out folder."""
    out = args.out
    if out is None:
        raise InputError("--format caliper writes a folder of profiles: give it one, e.g. --out results/caliper")
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file: --format caliper writes a folder of profiles, give a folder")
    runs = _runs(args)
    if not any(r.get("status") == "ok" for r, _ in runs):
        raise InputError(f"{', '.join(args.results)}: no completed runs to export as Caliper profiles")
    count = caliper.write_folder(runs, out)
    console.print(f"caliper: {out} ({count} profiles; Thicket reads them with Thicket.from_caliper)")
    return records.exit_code(r for r, _ in runs)


def _runs(args: argparse.Namespace) -> list[tuple[dict[str, Any], str]]:
    runs: list[tuple[dict[str, Any], str]] = []
    for path in paths_mod.expand(args.results):
        runs += [
            (r, str(path)) for r in records.final(records.read(path, must_exist=True)) if schemas.kind_of(r) == "run"
        ]
    return runs


def _extrap(args: argparse.Namespace, console: Console) -> int:
    """The runs as Extra-P's text input in the --out file, and where variants trade places."""
    out = args.out
    if out is None or out.is_dir():
        raise InputError("--format extrap writes one text file: give it, e.g. --out results/cg-scaling.txt")
    records.check_writable(out, "--out", "extrap")
    if args.model and extrapfit.interpreter() is None:
        raise InputError(extrapfit.INSTALL_HINT)
    runs = [r for r, _ in _runs(args)]
    export = extrap.build(runs, args.params)
    outputs.write(out, export.text(), "extrap", "--out")
    console.print(
        f"extrap: {out} ({len(export.regions)} regions over {len(export.points)} points of "
        f"{', '.join(export.params)}); model it with: extrap --text {out}"
    )
    for line in [*export.left_out, *extrap.crossings(export), *extrap.few_points(export)]:
        console.print(f"  {line}", markup=False)
    if args.model:
        console.print("Extra-P's models (time in seconds):")
        for line in extrapfit.lines(extrapfit.run_fit(out)):
            console.print(f"  {line}", markup=False)
    return records.exit_code(runs)


def _emit(text: str, count: int, args: argparse.Namespace, console: Console) -> None:
    """An export to --out (whole or not at all) or to the screen."""
    if args.out:
        outputs.write(args.out, text, args.format, "--out")
        console.print(f"{args.format}: {args.out} ({count} rows)")
    else:
        print(text, end="")


def _redraw(recs: list[dict[str, Any]], path: Path, console: Console) -> int:
    """The figures of probe, profile and study records, drawn again from the records."""
    for drawn in redraw.redraw(recs, path):
        console.print(f"chart: {drawn}")
    return records.exit_code(r for r in recs if schemas.kind_of(r) != "profile")


# The report formats: each writer takes the parsed options and the console and returns the exit
# code. A new format is its writer and its line here (and its name in --format's help).
WRITERS: dict[str, Callable[[argparse.Namespace, Console], int]] = {
    "table": table,
    "csv": _export,
    "json": _export,
    "markdown": _export,
    "caliper": _caliper,
    "extrap": _extrap,
}
# The options that go with only some formats, checked before anything is read.
OPTIONS: dict[str, tuple[str, ...]] = {
    "out": ("csv", "json", "markdown", "caliper", "extrap"),
    "params": ("extrap",),
    "model": ("extrap",),
    "records": ("csv", "json", "markdown"),
}
