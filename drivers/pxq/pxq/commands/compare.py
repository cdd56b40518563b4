"""`pxq compare BASE NEW`: NEW's median time over BASE's per configuration (round by round when
the runs come from one interleaved sweep), with a confidence interval, marked significant or
not; `--reference FILE` checks medians against expected values per system. Exit 1 on a
significant regression or a reference missed (a CI gate)."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis import compare
from pxq.core import outputs, paths, plugins, records, schemas
from pxq.core.errors import InputError
from pxq.core.escape import term

COLOURS = {"regression": "red", "improvement": "green"}


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


def _table(rows: list[compare.Comparison], confidence: float) -> Table:
    t = Table(title="NEW / BASE time per configuration: medians, or one sweep's paired rounds (above 1: NEW slower)")
    heads = ("configuration", "runs", "BASE s", "NEW s", "NEW/BASE", f"{confidence:.0%} CI", "p", "p (Holm)", "verdict")
    for col in heads:
        t.add_column(col, justify="left" if col in ("configuration", "verdict") else "right")
    for c in rows:
        colour = COLOURS.get(c.verdict)
        t.add_row(
            term(c.label),
            f"{c.paired} paired" if c.paired else f"{len(c.base)}/{len(c.new)}",
            f"{statistics.median(c.base):.4f}",
            f"{statistics.median(c.new):.4f}",
            f"{c.ratio:.3f}",
            "-" if c.low is None else f"{c.low:.3f}-{c.high:.3f}",
            "-" if c.p is None else f"{c.p:.3f}",
            "-" if c.p_adjusted is None else f"{c.p_adjusted:.3f}",
            f"[{colour}]{c.verdict}[/{colour}]" if colour else c.verdict,
        )
    return t


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_args(args)
    refs = compare.read_references(args.reference) if args.reference else []
    base = _runs(args.results[0]) if len(args.results) == 2 else []
    new = _runs(args.results[-1])
    rows: list[compare.Comparison] = []
    only_base: list[str] = []
    only_new: list[str] = []
    if base:
        rows, only_base, only_new = compare.compare(base, new, args.confidence, args.threshold)
        if not rows:
            raise InputError(
                f"{args.results[0]} and {args.results[1]} have no configuration in common "
                "(same app, problem, layout, variant and backend): nothing to compare"
            )
    checks = compare.check_references(new, refs) if refs else []
    if refs and not checks:
        raise InputError(
            f"--reference {args.reference}: no entry matches a configuration and host of {args.results[-1]}"
        )
    unmatched = compare.unmatched_references(new, refs) if refs else []
    if args.format == "json":
        print(
            outputs.dumps(
                outputs.finite(
                    {
                        "comparisons": [c.__dict__ for c in rows],
                        "references": [{**c.__dict__, "passed": c.passed} for c in checks],
                        "only_base": only_base,
                        "only_new": only_new,
                        "unmatched_references": [{"entry": i, **refs[i]} for i in unmatched],
                        "differences": [dict(zip(("field", "base", "new"), d)) for d in compare.differences(base, new)],
                    }
                ),
                indent=1,
            )
        )
    else:
        for field, was, now in compare.differences(base, new):
            console.print(f"BASE and NEW differ in {field}: {was} -> {now}")
        _print(console, rows, only_base, only_new, checks, args)
        for i in unmatched:
            facts = ", ".join(f"{k}={v}" for k, v in refs[i].items() if k not in ("median_s", "lower", "upper"))
            console.print(
                f"[yellow]reference entry {i} ({facts}) matches no configuration of NEW: not checked[/yellow]"
            )
    failed = any(c.verdict == "regression" for c in rows) or any(not c.passed for c in checks)
    return records.EXIT_VERIFICATION if failed else records.EXIT_OK


def _print(
    console: Console,
    rows: list[compare.Comparison],
    only_base: list[str],
    only_new: list[str],
    checks: list[compare.Check],
    args: argparse.Namespace,
) -> None:
    if rows:
        console.print(_table(rows, args.confidence))
        console.print(
            "significant: the bootstrap interval of the ratio excludes 1 and Mann-Whitney "
            f"p < {1 - args.confidence:.2f}, also after Holm's correction over every row compared; "
            f"a regression or improvement is also beyond {args.threshold:.0%}; "
            "'too few runs': fewer than 4 runs on a side (use --repeat 4 or more); "
            f"'N paired': runs of one interleaved sweep compared round by round (ratio: geometric mean of the "
            f"paired ratios, t interval, paired t-test; 'equivalent': within +-{args.threshold:.0%} by two "
            "one-sided tests); "
            "'not judged': a side the report flags short or noisy, with what a verdict would need"
        )
    for what, labels in (("only in BASE", only_base), ("only in NEW", only_new)):
        for label in labels:
            console.print(f"[dim]{what}: {term(label)}[/dim]")
    if checks:
        t = Table(title=f"references ({term(args.reference)})")
        for col in ("configuration", "host", "median s", "expected s", "tolerance", "result"):
            t.add_column(col)
        for c in checks:
            t.add_row(
                term(c.label),
                term(c.host),
                f"{c.median:.4f}",
                f"{c.expected:.4f}",
                f"{c.lower:+.0%} / {c.upper:+.0%}",
                "[green]pass[/green]" if c.passed else "[red]FAIL[/red]",
            )
        console.print(t)


PLUGIN = plugins.Command(
    help="NEW over BASE per configuration with confidence intervals; exit 1 on a significant regression",
    order=3,
    hooks=plugins.CommandHooks(add, handle, needs_build=False, reads_records=True),
    example="./pxq compare results/base.jsonl results/new.jsonl",
)
