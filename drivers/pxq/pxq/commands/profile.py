"""`pxq profile -- CMD`: any MPI program under the message profiler."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq import msgdist
from pxq.paths import figure_path, results_path

NAME = "profile"
HELP = "run any MPI program with the message profiler: pxq profile -- mpirun -np 4 ./app"
APP_ARGS = True


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=Path, help="profile file (default results/msgprof.jsonl)")
    p.add_argument("--plot", type=Path, help="stacked bars per size range (default next to the results)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    results = results_path(args.results, "msgprof.jsonl")
    return msgdist.profile(console, app_args, results, figure_path(args.plot, results))
