"""`pxq demo`: the headline study, the ring flat/hybrid/tiled on every layout."""

from __future__ import annotations

import argparse

from rich.console import Console

from pxq.core import plugins
from pxq.experiments import demo
from pxq.experiments.options import check_repeat


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeat", type=int, default=3)


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    return demo.run(console, repeat=check_repeat(args.repeat))


PLUGIN = plugins.Command(
    help="the headline study: ring flat/hybrid/tiled on every layout",
    order=16,
    hooks=plugins.CommandHooks(add, handle),
)
