"""`pxq demo`: the headline study, the ring flat/hybrid/tiled on every layout."""

from __future__ import annotations

import argparse

from rich.console import Console

from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.experiments import demo, settling
from pxq.experiments.options import check_repeat


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--repeat",
        type=int,
        help="a fixed number of interleaved repeats instead of running until each comparison is settled",
    )
    p.add_argument("--budget", help="the time the settled comparisons may take, e.g. 150, 5m (default 150 s)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.repeat is not None and args.budget is not None:
        raise InputError("--budget goes with the settled comparisons, --repeat with a fixed count: give one")
    budget = settling.parse_budget(args.budget) if args.budget else demo.DEMO_BUDGET
    return demo.run(console, repeat=None if args.repeat is None else check_repeat(args.repeat), budget=budget)


PLUGIN = plugins.Command(
    help="the headline study: ring flat/hybrid/tiled on every layout",
    order=16,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq demo --budget 3m",
)
