"""`pxq reproduce`: every published study, one progress bar, a report folder (markdown and a
self-contained HTML page)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.cluster import emulator as cluster
from pxq.cluster import links
from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.core.paths import results_dir
from pxq.experiments import reproduce
from pxq.experiments import studykit as studies
from pxq.experiments.options import check_timeout


def add(p: argparse.ArgumentParser) -> None:
    speed = p.add_mutually_exclusive_group()
    speed.add_argument(
        "--quick",
        dest="full",
        action="store_false",
        help="laptop sizes: about 6 minutes on a 2-core VM, 2 more the first time (builds), under 15 (default)",
    )
    speed.add_argument("--full", dest="full", action="store_true", help="the papers' sizes where the machine allows")
    p.set_defaults(full=False)
    names = ", ".join(m.name for m in studies.registry())
    p.add_argument("--only", help=f"comma-separated studies (default all: {names})")
    p.add_argument(
        "--out", type=Path, help="report folder (default results/reproduce-quick or -full); reused to resume"
    )
    p.add_argument("--oversubscribe", action="store_true", help="allow more workers than cores")
    p.add_argument("--hostfile", help="run on the real nodes of this MPI hostfile")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run before it is killed")
    studies.add_budget_option(p)
    p.add_argument(
        "--network",
        dest="cluster_link",
        metavar="PROFILE",
        help="run the studies with parts across a network (" + ", ".join(reproduce.NETWORKED) + ") each on a "
        "cluster of this machine brought up for it, links shaped to PROFILE (as `pxq cluster up --link`; root "
        "only); the others as before",
    )
    p.add_argument(
        "--report-only", action="store_true", help="rewrite the report from the folder's records, run nothing"
    )


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    check_timeout(args.timeout)
    args.budget = studies.budget_of(args.budget, not args.full)  # refused before any study runs
    if args.cluster_link:
        links.parse_link(args.cluster_link)
        cluster.requirements()
    mode = "full" if args.full else "quick"
    folder = args.out or results_dir() / f"reproduce-{mode}"
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {folder} is a file: give a folder")
    if args.report_only:
        return reproduce.report_only(console, folder, mode, args.only)
    return reproduce.reproduce(console, folder, not args.full, args.only, args)


PLUGIN = plugins.Command(
    help="run every published study and write a report folder (report.md, report.html); resumable",
    order=8,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq reproduce --quick --out results/reproduce-quick",
)
