"""`pxq profile -- CMD`: any MPI program under the message profiler."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.analysis.messages import msgdist
from pxq.core import plugins
from pxq.core.paths import figure_path, results_path


def add(p: argparse.ArgumentParser) -> None:
    p.usage = "pxq profile [--results FILE] [--plot PNG] -- mpirun -np N [mpirun options] ./program [args]"
    p.description = (
        "Runs an MPI program with libpxq-msgprof preloaded in every rank (C, C++ and Fortran), "
        "then shows its messages by channel and size range and the time in each MPI call. "
        "Regions between MPI_Pcontrol(0) and MPI_Pcontrol(1) are left out."
    )
    p.epilog = "example: ./pxq profile -- mpirun -np 4 ./build/bin/pxq-cg --class S"
    p.add_argument("--results", type=Path, help="profile file (default results/msgprof.jsonl)")
    p.add_argument("--plot", type=Path, help="stacked bars per size range (default next to the results)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    results = results_path(args.results, "msgprof.jsonl")
    return msgdist.profile(console, app_args, results, figure_path(args.plot, results))


PLUGIN = plugins.Command(
    help="run any MPI program with the message profiler: pxq profile -- mpirun -np 4 ./app",
    order=11,
    hooks=plugins.CommandHooks(add, handle, app_args=True),
    example="./pxq profile -- mpirun -np 4 ./build/bin/pxq-cg --class S",
)
