"""`pxq tune [TARGET]`: benchmark the tiled kernels over tile sizes, write the tile profile."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.analysis.models import tiles
from pxq.core import plugins, registry
from pxq.core.paths import results_dir


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "target",
        nargs="?",
        help=f"an app ({', '.join(registry.apps())}), a kernel ({', '.join(registry.tile_kernels())}) or all (default)",
    )
    p.add_argument("--tiles", help="tile sizes, e.g. 64K,256K,1M (default 4K .. 64M in powers of two)")
    p.add_argument("--threads", help="thread counts, e.g. 1,2 (default 1 .. the cores)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions of every benchmark, interleaved at random")
    p.add_argument("--min-time", type=float, default=0.2, help="seconds each repetition runs at least")
    p.add_argument("--out", type=Path, help="Google Benchmark JSON (default results/tiles.json)")
    p.add_argument(
        "--profile",
        type=Path,
        help="the profile to write (default: $PXQ_TILE_PROFILE, "
        "$XDG_CONFIG_HOME/pxq/tiles.json or ~/.config/pxq/tiles.json)",
    )
    p.add_argument(
        "--replace-profile",
        action="store_true",
        help="start the profile afresh (a corrupt one, or one from another machine)",
    )


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    return tiles.tune(
        console,
        args.target,
        args.tiles,
        args.threads,
        args.repeat,
        args.min_time,
        args.out or results_dir() / "tiles.json",
        args.profile or tiles.profile_path(),
        args.replace_profile,
    )


PLUGIN = plugins.Command(
    help="benchmark the tiled kernels over tile sizes, write the machine tile profile",
    order=10,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq tune ring --tiles 64K,256K,1M",
)
