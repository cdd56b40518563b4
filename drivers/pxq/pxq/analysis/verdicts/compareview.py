"""What `pxq compare` concludes and says: the comparisons and reference checks of NEW against
BASE gathered in one outcome (pxq.analysis.verdicts.compare does the statistics), its JSON, and its
tables. The command only reads the files and hands over."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.verdicts import compare
from pxq.core import outputs
from pxq.core.errors import InputError
from pxq.core.escape import term

COLOURS = {"regression": "red", "improvement": "green"}


@dataclass
class Outcome:
    rows: list[compare.Comparison] = field(default_factory=list)
    only_base: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    checks: list[compare.Check] = field(default_factory=list)
    unmatched: list[int] = field(default_factory=list)
    refs: list[dict[str, Any]] = field(default_factory=list)
    differences: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A significant regression or a reference missed."""
        return any(c.verdict == "regression" for c in self.rows) or any(not c.passed for c in self.checks)


def gather(
    base: list[dict[str, Any]],
    new: list[dict[str, Any]],
    refs: list[dict[str, Any]],
    confidence: float,
    threshold: float,
    names: tuple[str, str, Path | None],
) -> Outcome:
    """NEW against BASE (when BASE has runs) and against the references (when there are some);
    NAMES (BASE, NEW, the reference file) for the refusals: nothing in common, no entry matched."""
    out = Outcome(refs=refs, differences=compare.differences(base, new))
    if base:
        out.rows, out.only_base, out.only_new = compare.compare(base, new, confidence, threshold)
        if not out.rows:
            raise InputError(
                f"{names[0]} and {names[1]} have no configuration in common "
                "(same app, problem, layout, variant and backend): nothing to compare"
            )
    if refs:
        out.checks = compare.check_references(new, refs)
        if not out.checks:
            raise InputError(f"--reference {names[2]}: no entry matches a configuration and host of {names[1]}")
        out.unmatched = compare.unmatched_references(new, refs)
    return out


def as_json(out: Outcome) -> str:
    return outputs.dumps(
        outputs.finite(
            {
                "comparisons": [c.__dict__ for c in out.rows],
                "references": [{**c.__dict__, "passed": c.passed} for c in out.checks],
                "only_base": out.only_base,
                "only_new": out.only_new,
                "unmatched_references": [{"entry": i, **out.refs[i]} for i in out.unmatched],
                "differences": [dict(zip(("field", "base", "new"), d)) for d in out.differences],
            }
        ),
        indent=1,
    )


def table(rows: list[compare.Comparison], confidence: float) -> Table:
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


def _checks_table(checks: list[compare.Check], reference: Path | None) -> Table:
    t = Table(title=f"references ({term(reference)})")
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
    return t


def show(console: Console, out: Outcome, confidence: float, threshold: float, reference: Path | None) -> None:
    """The differences of context, the comparisons with what their words mean, the configurations
    on one side only, the reference checks and the entries that matched nothing."""
    for name, was, now in out.differences:
        console.print(f"BASE and NEW differ in {name}: {was} -> {now}")
    if out.rows:
        console.print(table(out.rows, confidence))
        console.print(
            "significant: the bootstrap interval of the ratio excludes 1 and Mann-Whitney "
            f"p < {1 - confidence:.2f}, also after Holm's correction over every row compared; "
            f"a regression or improvement is also beyond {threshold:.0%}; "
            "'too few runs': fewer than 4 runs on a side (use --repeat 4 or more); "
            f"'N paired': runs of one interleaved sweep compared round by round (ratio: geometric mean of the "
            f"paired ratios, t interval, paired t-test; 'equivalent': within +-{threshold:.0%} by two "
            "one-sided tests); "
            "'not judged': a side the report flags short or noisy, with what a verdict would need"
        )
    for what, labels in (("only in BASE", out.only_base), ("only in NEW", out.only_new)):
        for label in labels:
            console.print(f"[dim]{what}: {term(label)}[/dim]")
    if out.checks:
        console.print(_checks_table(out.checks, reference))
    for i in out.unmatched:
        facts = ", ".join(f"{k}={v}" for k, v in out.refs[i].items() if k not in ("median_s", "lower", "upper"))
        console.print(f"[yellow]reference entry {i} ({facts}) matches no configuration of NEW: not checked[/yellow]")
