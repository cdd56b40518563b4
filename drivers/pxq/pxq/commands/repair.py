"""`pxq repair FILE`: keep a results file's good records, set damaged lines aside."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pxq.core import plugins, records
from pxq.core.escape import plain


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a results file (.jsonl)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    kept, removed = records.repair(args.file)
    if not removed:
        console.print(f"{escape(str(args.file))}: {kept} records, nothing damaged", highlight=False)
        return 0
    console.print(
        f"{escape(str(args.file))}: kept {kept} records; set aside {len(removed)} line(s) in "
        f"{escape(args.file.name)}.damaged:",
        highlight=False,
    )
    for number, why in removed[:10]:
        console.print(f"  line {number}: {escape(plain(why))}", highlight=False)
    if len(removed) > 10:
        console.print(f"  ... and {len(removed) - 10} more", highlight=False)
    return 0


PLUGIN = plugins.Command(
    help="keep a results file's good records, set damaged lines aside (FILE.damaged)",
    order=5,
    hooks=plugins.CommandHooks(add, handle, needs_build=False, reads_records=True),
    example="./pxq repair results/ring.jsonl",
)
