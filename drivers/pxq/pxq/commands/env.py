"""`pxq env`: what pxq sees (cores, caches, MPI, Kokkos) and the layouts it can run."""

from __future__ import annotations

import argparse

from rich.console import Console

from pxq import envinfo

NAME = "env"
HELP = "what pxq sees: cores, caches, MPI, Kokkos, layouts"
APP_ARGS = False


def add(p: argparse.ArgumentParser) -> None:
    pass


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    return envinfo.show(console)
