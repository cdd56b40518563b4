"""`pxq lab list | start N | check N`: the teaching labs (labs/, pxq.labs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq import labs

NAME = "lab"
HELP = "the teaching labs: list them, start one, check your work (labs/README.md)"
APP_ARGS = False


def add(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    sub.add_parser("list", help="the six labs, their time and the files you edit")
    st = sub.add_parser("start", help="copy a lab's starter into a working folder")
    st.add_argument("lab", help="the lab's number (1-6) or folder name")
    st.add_argument("--dir", type=Path, help="your working folder (default labs-work/NN-name)")
    ck = sub.add_parser(
        "check",
        help="build your copy, verify it exactly, measure the effect the lab teaches",
        description="Exit codes: 0 correct (the effect shows or not: noise never fails you), 1 a wrong "
        "result, 2 bad input, 3 a crash or hang, 4 the code does not build.",
    )
    ck.add_argument("lab", help="the lab's number (1-6) or folder name")
    which = ck.add_mutually_exclusive_group()
    which.add_argument("--solution", dest="which", action="store_const", const="solution", help="check the solution")
    which.add_argument("--begin", dest="which", action="store_const", const="begin", help="check the starter")
    ck.add_argument("--dir", type=Path, help="your working folder (default labs-work/NN-name)")
    ck.add_argument("--repeat", type=int, default=3, help="interleaved repeats of each measurement (default 3)")
    ck.set_defaults(which="copy")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.action == "list":
        return labs.overview(console)
    mod = labs.get(args.lab)
    if args.action == "start":
        return labs.start(mod, args.dir or labs.default_copy(mod), console)
    code, _ = labs.check(mod, args.which, args.dir, args.repeat, console)
    return code
