"""`pxq study PLUGIN.name [APP]`: the published studies, one each (pxq.studies), with the paper's
figures beside this machine's and a verdict per finding."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.core.paths import results_path
from pxq.experiments import runner
from pxq.experiments import studykit as studies
from pxq.experiments.options import add_launch_options, app_help, base_spec, check_app, launch_spec
from pxq.machine import counters


def _described(doc: str) -> str:
    """A study's help description: its docstring's first paragraph after the command it names
    (what it runs, and the paper's figures it puts beside them)."""
    first = doc.split("\n\n", 1)[0]
    return " ".join(first.split(":", 1)[-1].split())


def add(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="study", required=True, metavar="STUDY")
    for mod in studies.registry():
        sp = sub.add_parser(mod.name, help=mod.help, description=_described(mod.doc))
        if mod.apps:
            sp.add_argument("app", nargs="?" if mod.apps == "optional" else None, help=app_help())
        mod.add(sp)
        speed = sp.add_mutually_exclusive_group()
        speed.add_argument("--quick", dest="full", action="store_false", help="sizes for a 2-core laptop (default)")
        speed.add_argument("--full", dest="full", action="store_true", help="the paper's sizes where possible")
        sp.add_argument("--plot", type=Path, help="the study's figure (default next to the results)")
        studies.add_budget_option(sp)
        quick, full = mod.defaults(True).get("cls"), mod.defaults(False).get("cls")
        classes = quick if quick == full else f"{quick} quick, {full} full"
        if quick is None:  # a study of one app passes --class to its runs; the others take none
            classes = "S" if mod.apps else None
        app_part = "[-APP]" if mod.apps else ""
        add_launch_options(sp, f"results/study-{mod.name}{app_part}.jsonl", classes)
        if mod.apps:  # the proxies count; the probe-only studies have no timed iterations to count
            counters.add_option(sp)
        sp.set_defaults(full=False)


def options(mod: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The study's defaults for --quick or --full, with what the command line gave over them."""
    opts = mod.defaults(not args.full)
    if getattr(args, "problem_class", None):
        if "cls" not in opts and not mod.apps:
            raise InputError(f"--class: study {mod.name} runs no NAS proxy with a problem class; drop --class")
        opts["cls"] = args.problem_class
    for key in list(opts):
        value = getattr(args, key, None)
        if value is not None:
            opts[key] = value
    return opts


def base(args: argparse.Namespace, app_args: list[str], app: str | None) -> runner.RunSpec:
    results = results_path(args.results, f"study-{args.study}{'-' + app if app else ''}.jsonl")
    if app:
        return base_spec(args, app_args, results)
    return launch_spec(args, results)


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    mod = studies.get(args.study)
    app = getattr(args, "app", None)
    if app:
        check_app(app)
    spec = base(args, app_args, app)
    budget = studies.budget_of(args.budget, not args.full)
    ctx = studies.Context(console, spec.results, spec, not args.full, app, getattr(args, "plot", None), budget)
    code, _, _ = studies.finish(ctx, mod.name, app or "-", mod.run(ctx, options(mod, args)))
    return code


PLUGIN = plugins.Command(
    help="the published studies, one command each, with the paper's figures beside this machine's",
    order=7,
    hooks=plugins.CommandHooks(add, handle, app_args=True),
    example="./pxq study tiling --budget 2m",
)
