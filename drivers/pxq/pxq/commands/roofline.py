"""`pxq roofline PATH...`: every run's declared work against its layout's ceilings (measured
once per machine: bandwidth of each cache level and of memory on 1..N cores, peak flop rate),
the binding ceiling named, the predicted time beside the measured median, and a log-log
figure with the ceilings labelled by the cores sharing them and arrows from untiled to tiled
and from flat to hybrid. See docs/ROOFLINE.md."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.models import drift, roofline, roofview
from pxq.core import paths, plugins, records, schemas
from pxq.core.errors import InputError
from pxq.figures import roofline as draw
from pxq.machine import ceilings as ceil
from pxq.probes import ceilprobe


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", metavar="PATH", help="run records (files, folders or globs)")
    p.add_argument("--plot", type=Path, help="the figure (default results/roofline.png)")
    p.add_argument(
        "--phases",
        action="store_true",
        help="also each configuration's phases: measured against predicted seconds, and what binds each",
    )
    p.add_argument("--remeasure", action="store_true", help="measure this machine's ceilings again")
    p.add_argument(
        "--no-drift",
        action="store_true",
        help="ignore the bandwidth references among PATH (the ceilings as kept, not scaled to the runs' time)",
    )


def _runs(items: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The verified runs, and the bandwidth probe records among them (the drift references)."""
    recs = records.read_files(paths.expand(items), keep=roofline.held)
    runs = [r for r in recs if schemas.kind_of(r) == "run" and r.get("status") == "ok"]
    if not runs:
        raise InputError(f"{' '.join(items)}: no verified runs to place")
    if not any(r.get("work") for r in runs):
        raise InputError("these runs declare no work (recorded before pxq declared it): run them again")
    return runs, [r for r in recs if drift.is_reference(r)]


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    runs, refs = _runs(args.results)
    c = ceilprobe.here(lambda s: console.print(f"[dim]{s}[/dim]"), remeasure=args.remeasure)
    ceil.refuse_other_machines(runs + refs, c)
    for line in roofview.ceilings_lines(c):
        console.print(line, highlight=False)
    fs = None
    if not args.no_drift:
        said, fs = roofview.drift_lines(refs, c)
        for line in said:
            console.print(line, highlight=False)
    pts = roofline.points(runs, c, fs)
    console.print(roofview.table(pts))
    if args.phases:
        console.print(roofview.phase_table(pts))
    for line in roofview.summary_lines(pts):
        console.print(line, markup=False)
    for line in roofview.order_lines(pts):
        console.print(line)
    console.print(
        "[dim]predicted: each declared phase at its binding ceiling (compute, a cache level or memory, "
        "shared by the node's busy cores, or its access kind's: "
        f"{', '.join(k for k in ceil.kinds() if k not in roofline.WINDOW_ROWS)}; "
        "a gather's row starts at the window kinds' cost of one), "
        "plus what was measured outside the declared phases "
        "(communication, waiting)[/dim]"
    )
    if not any(draw.drawable(p) for p in pts):  # an integer sort alone: roofs with no point on them
        console.print(
            f"figure: none drawn: no configuration of {', '.join(sorted({str(p['app']) for p in pts}))} has a place "
            "on a flop-rate roofline (no flops declared, or no bytes from memory: all in cache); the table has "
            "their predictions",
            highlight=False,
        )
        return 0
    out = args.plot or paths.results_dir() / "roofline.png"
    middle = sorted(runs, key=lambda r: r.get("context", {}).get("date", ""))[len(runs) // 2]
    drawn = drift.for_run(middle, c, fs)  # the roofs as the machine was midway through the runs
    console.print(f"figure: {draw.plot(pts, drawn, out)}")
    return 0


PLUGIN = plugins.Command(
    help="every run against its layout's ceilings: the binding one, predicted against measured time",
    order=62,
    hooks=plugins.CommandHooks(add, handle, reads_records=True),
    example="./pxq roofline results/cg.jsonl --phases",
)
