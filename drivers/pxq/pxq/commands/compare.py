"""`pxq compare BASE NEW`: NEW's median time over BASE's per configuration (round by round when
the runs come from one interleaved sweep), with a confidence interval, marked significant or
not; `--reference FILE` checks medians against expected values per system. Exit 1 on a
significant regression or a reference missed (a CI gate)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.verdicts import compare, compareview
from pxq.core import paths, plugins, records, schemas
from pxq.core.errors import InputError


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "results", nargs="+", metavar="PATH", help="BASE NEW (files, folders or globs); or NEW with --reference"
    )
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument(
        "--threshold",
        type=float,
        default=0.05,
        help="smallest change that counts as a regression or improvement, relative (default 0.05: 5%%)",
    )
    p.add_argument(
        "--reference", type=Path, help="expected medians with tolerances per system (JSON; see docs/RESULTS.md)"
    )
    p.add_argument("--format", choices=("table", "json"), default="table", help="table (default) or json")


def _runs(item: str) -> list[dict[str, Any]]:
    recs = records.read_files(paths.expand([item]))
    runs = [r for r in recs if schemas.kind_of(r) == "run" and r.get("status") in ("ok", "failed") and "time" in r]
    if not runs:
        raise InputError(f"{item}: no finished runs to compare")
    return runs


def _check_args(args: argparse.Namespace) -> None:
    if not 0.5 <= args.confidence < 1:
        raise InputError(f"--confidence {args.confidence}: use a level between 0.5 and 1, e.g. 0.95")
    if not 0 <= args.threshold < 1:
        raise InputError(f"--threshold {args.threshold}: use a fraction between 0 and 1, e.g. 0.05")
    if len(args.results) not in ((1, 2) if args.reference else (2,)):
        raise InputError("give BASE and NEW (files, folders or globs), or NEW with --reference FILE")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_args(args)
    refs = compare.read_references(args.reference) if args.reference else []
    base = _runs(args.results[0]) if len(args.results) == 2 else []
    new = _runs(args.results[-1])
    names = (args.results[0], args.results[-1], args.reference)
    out = compareview.gather(base, new, refs, args.confidence, args.threshold, names)
    if args.format == "json":
        print(compareview.as_json(out))
    else:
        compareview.show(console, out, args.confidence, args.threshold, args.reference)
    return records.EXIT_VERIFICATION if out.failed else records.EXIT_OK


PLUGIN = plugins.Command(
    help="NEW over BASE per configuration with confidence intervals; exit 1 on a significant regression",
    order=3,
    hooks=plugins.CommandHooks(add, handle, needs_build=False, reads_records=True),
    example="./pxq compare results/base.jsonl results/new.jsonl",
)
