"""`pxq probe PROBE`: collectives' variability, channels (ping-pong, rank pairs), the memory
hierarchy (stride) and bandwidth per active core. Each probe is a plugin of pxq.probes (its
options and its run beside what it measures); this command lists them and hands over."""

from __future__ import annotations

import argparse

from rich.console import Console

from pxq.core import plugins
from pxq.core.errors import InputError


def add(p: argparse.ArgumentParser) -> None:
    probes = p.add_subparsers(dest="op", required=True, metavar="PROBE")
    for found in plugins.probes():
        found.add(probes)


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if getattr(args, "problem_class", None):
        raise InputError("--class: the probes have no problem classes")
    return plugins.probe(args.op).run(args, console)


PLUGIN = plugins.Command(
    help="probes: a collective's variability (allreduce, bcast, alltoall, barrier), channels (pingpong, "
    "rankpairs), OSU-style tests (osu), the memory hierarchy (stride), bandwidth per active core (bandwidth)",
    order=6,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq probe pingpong --layout 1x2",
)
