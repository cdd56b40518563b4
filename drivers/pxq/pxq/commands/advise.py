"""`pxq advise APP`: predict the best way to run APP on a node (layout, variant, tile) from this
machine's ceilings and the work each way declares, then prove it with a settled sweep of the
predicted best against the next ones and the plain flat run; the advice record keeps the
prediction, the proof and whether it held (pxq.analysis.models.advice, pxq.experiments.advising).
See docs/ROOFLINE.md, "Advice"."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.models import advice
from pxq.analysis.verdicts import settle
from pxq.core import plugins, records, registry
from pxq.core.errors import InputError
from pxq.core.paths import results_path
from pxq.experiments import advising, options, runner, settling
from pxq.machine import ceilings as ceil
from pxq.machine import envinfo
from pxq.probes import ceilprobe


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("app", help=options.app_help())
    p.add_argument("--class", dest="cls", help="NAS problem class (S, W, A, B, C) of a NAS proxy")
    p.add_argument("--nodes", type=int, default=1, help="nodes P of the layouts (default 1)")
    p.add_argument(
        "--cores",
        type=int,
        help="cores per node the layouts fill (default: the ceilings' cores, divided among the nodes when they "
        "are virtual nodes of this machine)",
    )
    p.add_argument(
        "--ceilings",
        type=Path,
        metavar="FILE",
        help="predict for another machine: its kept ceilings (`pxq probe ceilings --out FILE` there); "
        "nothing is proved here",
    )
    p.add_argument("--budget", default="5m", help="the time the whole advice may take, e.g. 300, 5m (default 5m)")
    p.add_argument(
        "--precision", type=float, default=0.05, help="the proof's precision and equivalence margin (default 0.05)"
    )
    p.add_argument(
        "--max-blocks",
        type=int,
        default=20,
        help="the proof's most blocks, where a pair needs more to settle (default 20; the budget still binds)",
    )
    p.add_argument("--no-prove", action="store_true", help="predict only: run no proof")
    p.add_argument("--results", type=Path, help="results file (default results/advise-APP.jsonl)")


def _ceilings(args: argparse.Namespace, console: Console) -> tuple[dict[str, Any], bool]:
    """The ceilings to predict with, and whether they are this machine's."""
    if args.ceilings is None:
        return ceilprobe.here(lambda s: console.print(f"[dim]{s}[/dim]")), True
    c = ceil.read_file(args.ceilings)
    mine = ceil.load(envinfo.machine())
    here = mine is not None and mine.get("key") == c.get("key")
    return c, here


def _cores(args: argparse.Namespace, c: dict[str, Any], here: bool) -> int:
    if args.cores is not None:
        if not 1 <= args.cores <= int(c["cores"]) * max(1, args.nodes):
            raise InputError(f"--cores {args.cores}: give 1 to the {c['cores']} cores the ceilings measured")
        return args.cores
    n = int(c["cores"])
    if here and args.nodes > 1:  # virtual nodes of this machine share its cores
        if n < args.nodes:
            raise InputError(f"--nodes {args.nodes}: this machine has {n} cores, fewer than the nodes asked")
        return n // args.nodes
    return n


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    start = time.monotonic()
    options.check_app(args.app)
    runner.check_app_args(app_args)
    budget = settling.parse_budget(args.budget)
    settle.Rule(precision=args.precision, max_blocks=args.max_blocks).check()
    app_args = runner.class_args(args.app, args.cls) + app_args
    results = results_path(args.results, f"advise-{args.app}.jsonl")
    c, here = _ceilings(args, console)
    cores = _cores(args, c, here)
    share = registry.app(args.app).get("auto_share", "L2/4")
    cands = advice.candidates(args.nodes, cores, advice.tiles_for(share, c["levels"], cores, here))
    what = f"{args.app}" + (f" class {args.cls.upper()}" if args.cls else "")
    console.print(
        f"advice for {what} on {args.nodes} node(s) of {cores} core(s): {len(cands)} configurations, ceilings of "
        f"{c.get('cpu_model')} measured {c.get('date')}" + ("" if here else f" ({args.ceilings}, another machine)"),
        highlight=False,
    )
    console.print(ceil.knee_text(c), highlight=False)
    declared = advising.declare_all(args.app, cands, app_args, c, results, console)
    rows = advice.same_tile([d.row for d in declared])
    if not any("predicted_s" in r for r in rows):  # the app's own refusal: bad input, no record
        raise InputError(f"{args.app} refused every configuration: {rows[0].get('refused')}")
    for d, r in zip(declared, rows):
        d.row = r
    console.print(advice.table(rows))
    for line in [advice.separation_text(rows), advice.NOT_PREDICTED]:
        if line:
            console.print(line, highlight=False)
    rec = advising.record(args, c, here, cores, rows)
    code = 0
    if args.no_prove or not here:
        rec["outcome"] = "not proved"
        rec["why"] = "--no-prove" if args.no_prove else "the ceilings are another machine's"
        console.print(f"not proved: {rec['why']}", highlight=False)
    else:
        code = advising.prove_into(rec, args, declared, advising.remaining(start, budget), console)
    records.append(results, rec)
    console.print(f"{advice.outcome_text(rec)}; advice record appended to {results}", highlight=False)
    return code


PLUGIN = plugins.Command(
    help="predict the best layout, variant and tile for an app on this machine, then prove it",
    order=6,
    hooks=plugins.CommandHooks(add, handle, app_args=True),
    example="./pxq advise cg --class A --budget 5m",
)
