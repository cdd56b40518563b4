"""The published figures pxq's studies put beside this machine's (pxq/data/published.json, with
each figure's source, machine and conditions), and the verdict a study gives each finding:
reproduced, not reproduced, inconclusive (the effect is within the noise) or cannot be tested
here (and why)."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

DATA = Path(__file__).resolve().parent / "data" / "published.json"
VERDICTS = ("reproduced", "not reproduced", "inconclusive", "cannot be tested here")
STYLE = {"reproduced": "green", "not reproduced": "red", "inconclusive": "yellow", "cannot be tested here": "dim"}


@cache
def published() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def section(key: str) -> dict[str, Any]:
    return published()[key]


SHORT = {
    "chai2007": "Chai, Gao and Panda, CCGrid 2007",
    "narayanaswamy2008": "Narayanaswamy, Balaji and Feng, 2008",
    "allreduce2011": "MPI_Allreduce variability, WHTRA 2011",
    "simon2009": "Simon and McGalliard, CCPE 2009",
}


def source(key: str) -> str:
    """The short citation of a section: "Chai, Gao and Panda, CCGrid 2007"."""
    name = section(key)["source"]
    return SHORT.get(name, name)


def reference(key: str) -> str:
    """The full reference of a section, with its machine."""
    return published()["sources"][section(key)["source"]]


@dataclass
class Finding:
    finding: str  # what the paper found, in a sentence
    paper: str  # the paper's figure
    here: str  # this machine's figure
    verdict: str  # one of VERDICTS
    why: str = ""  # the reason for the verdict, always given unless reproduced plainly

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict '{self.verdict}' is not one of {VERDICTS}")


@dataclass
class Comparison:
    quantity: str
    paper: str
    here: str
    note: str = ""


def spread(values: list[float]) -> float:
    """(max - min) / median of repeats: the noise a ratio must beat."""
    if len(values) < 2:
        return 0.0
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m else 0.0


def effect(ratio: float, noise: float, expect_above: bool, threshold: float) -> str:
    """The verdict for a measured ratio the paper says is above (or below) 1 by at least
    `threshold`: within the noise is inconclusive, never a failure."""
    size = ratio - 1.0 if expect_above else 1.0 - ratio
    if abs(ratio - 1.0) <= noise / 2:
        return "inconclusive"
    return "reproduced" if size >= threshold else "not reproduced"


def print_comparison(console: Console, title: str, rows: list[Comparison], found: list[Finding], cite: str) -> None:
    if rows:
        t = Table(title=title)
        for col in ("quantity", "paper", "this machine", "note"):
            t.add_column(col, justify="left" if col in ("quantity", "note") else "right")
        for r in rows:
            t.add_row(r.quantity, r.paper, r.here, r.note)
        console.print(t)
    if found:
        v = Table(title=f"findings ({cite})")
        for col in ("finding", "paper", "here", "verdict", "why"):
            v.add_column(col, overflow="fold")
        for f in found:
            v.add_row(f.finding, f.paper, f.here, f"[{STYLE[f.verdict]}]{f.verdict}[/]", f.why)
        console.print(v)


def as_json(rows: list[Comparison], found: list[Finding]) -> dict[str, Any]:
    return {"comparison": [asdict(r) for r in rows], "findings": [asdict(f) for f in found]}
