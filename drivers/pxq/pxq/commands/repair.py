"""`pxq repair FILE`: keep a results file's good records, set damaged lines aside."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq import records

NAME = "repair"
HELP = "keep a results file's good records, set damaged lines aside (FILE.damaged)"
APP_ARGS = False
NEEDS_BUILD = False  # reads records only: ./pxq starts it without checking the build


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a results file (.jsonl)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    kept, removed = records.repair(args.file)
    if not removed:
        console.print(f"{args.file}: {kept} records, nothing damaged")
    else:
        console.print(
            f"{args.file}: kept {kept} records; set aside {len(removed)} damaged line(s) "
            f"({', '.join(map(str, removed[:10]))}{' ...' if len(removed) > 10 else ''}) "
            f"in {args.file.name}.damaged"
        )
    return 0
