"""`pxq msgdist RECORD`: messages by channel and size range from a message profile."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.analysis.messages import msgdist
from pxq.core import plugins, registry
from pxq.core.errors import InputError
from pxq.core.paths import figure_path


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("record", type=Path, help="a profile written by pxq profile (the last one in the file)")
    p.add_argument("--model", help="classify on a what-if machine NODESxSOCKETSxCORES (default: as observed)")
    p.add_argument("--alloc", default="block", help="with --model: block or cyclic (default block)")
    p.add_argument("--plot", type=Path, help="stacked bars per size range (default next to the record)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.model is None and args.alloc != "block":
        raise InputError(
            f"--alloc {args.alloc} places ranks on a model machine: give --model "
            "NODESxSOCKETSxCORES too (without it the observed placement is used)"
        )
    if args.alloc not in registry.allocations():
        raise InputError(f"unknown allocation '{args.alloc}': use --alloc block or cyclic")
    return msgdist.report(console, args.record, args.model, args.alloc, figure_path(args.plot, args.record))


PLUGIN = plugins.Command(
    help="messages by channel and size range from a message profile",
    order=12,
    hooks=plugins.CommandHooks(add, handle, needs_build=False, reads_records=True),
    example="./pxq msgdist results/cg-prof.jsonl --model 4x2x2",
)
