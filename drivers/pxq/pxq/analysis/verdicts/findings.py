"""The published findings pxq's studies put beside this machine's (pxq/data/published.json), and
the verdicts.

published.json is a catalogue: each section (one paper's experiment) has conditions and
findings, each marked published, pxq's assumption or pxq's correction. A finding of kind
"finding" is one distinct published claim, split into the parts it claims (a time, a network
time, bytes, a distribution, a cause...); a finding of kind "arithmetic" follows from the
conditions alone and is a self-check.

A study measures parts: each `Finding` it returns names its part by `ref`
("section/finding/part") and gets one of PART_VERDICTS from what was measured. A study's own
checks (advice it follows, arithmetic, a figure the paper never gave) are `check()`s: listed
apart, never counted. `assess()` then gives each distinct finding one verdict from its parts:

- reproduced: every part measured and reproduced;
- partly tested: the parts measured were reproduced, the others could not be tested here;
- not reproduced: a part was measured and did not hold;
- inconclusive: a part is within the noise (or rests on an implausible figure);
- cannot be tested here: no part could be measured on this machine (the reason, and where
  it could be)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

DATA = Path(__file__).resolve().parents[2] / "data" / "published.json"
PART_VERDICTS = ("reproduced", "not reproduced", "inconclusive", "cannot be tested here")
VERDICTS = ("reproduced", "partly tested", "not reproduced", "inconclusive", "cannot be tested here")
CHECK_VERDICTS = ("passed", "failed", "inconclusive", "cannot be tested here")
NOT_TESTED = "not tested"  # a part no study of the run measured
MARKS = ("published", "assumption", "correction")
STYLE = {
    "reproduced": "green",
    "partly tested": "cyan",
    "not reproduced": "red",
    "inconclusive": "yellow",
    "cannot be tested here": "dim",
    "passed": "green",
    "failed": "red",
    NOT_TESTED: "dim",
}


@cache
def published() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def section(key: str) -> dict[str, Any]:
    return published()[key]


def readings(keys: tuple[str, ...] | list[str]) -> list[str]:
    """pxq's own readings in these sections' conditions (assumptions and corrections), each with
    the paper's words beside it where the catalogue quotes them, and why."""
    out = []
    for key in keys:
        for c in published().get(key, {}).get("conditions", []):
            if c.get("mark") in ("assumption", "correction"):
                paper = f' (the paper: "{c["paper"]}")' if c.get("paper") else ""
                out.append(f"pxq's {c['mark']}: {c['text']}{paper}; why: {c.get('why', '')}")
    return out


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


# ---- the catalogue ----


@dataclass(frozen=True)
class Entry:
    """One finding of published.json."""

    ref: str  # "section/finding"
    section: str
    text: str
    kind: str  # "finding" (counted) or "arithmetic" (a self-check)
    mark: str
    parts: tuple[dict[str, Any], ...]


@cache
def catalogue() -> tuple[Entry, ...]:
    out = []
    for key, sec in published().items():
        if not isinstance(sec, dict) or "findings" not in sec:
            continue
        for f in sec["findings"]:
            out.append(Entry(f"{key}/{f['id']}", key, f["text"], f["kind"], f["mark"], tuple(f["parts"])))
    return tuple(out)


def entry(ref: str) -> Entry:
    """The finding of a ref "section/finding" or "section/finding/part"."""
    key = "/".join(ref.split("/")[:2])
    for e in catalogue():
        if e.ref == key:
            return e
    raise KeyError(f"no published finding '{ref}'")


def claim(ref: str) -> dict[str, Any]:
    """The part a ref "section/finding/part" names."""
    name = ref.split("/", 2)[2]
    for p in entry(ref).parts:
        if p["id"] == name:
            return p
    raise KeyError(f"no part '{name}' in published finding '{entry(ref).ref}'")


def distinct(sections: set[str] | None = None) -> list[Entry]:
    """The distinct published findings (kind "finding") of the sections, in catalogue order."""
    return [e for e in catalogue() if e.kind == "finding" and (sections is None or e.section in sections)]


# ---- what a study returns ----


@dataclass
class Finding:
    """One measured part of a published finding (ref names it), or a study's own check (kind
    "check", ref empty): what the paper claims, what was measured here, and the verdict."""

    finding: str  # the published finding (or the check), in a sentence
    paper: str  # the part's claim, with the paper's figure
    here: str  # this machine's figure
    verdict: str  # one of PART_VERDICTS (parts) or CHECK_VERDICTS (checks)
    why: str = ""  # the reason, always given unless reproduced or passed plainly
    ref: str = ""  # "section/finding/part"
    kind: str = "part"  # "part" or "check"
    flags: list[str] = field(default_factory=list)  # implausible figures it met
    evidence: dict[str, Any] = field(default_factory=dict)  # repeats, spread, runs, the figure it rests on

    def __post_init__(self) -> None:
        allowed = CHECK_VERDICTS if self.kind == "check" else PART_VERDICTS
        if self.verdict not in allowed:
            raise ValueError(f"verdict '{self.verdict}' is not one of {allowed}")
        if self.kind == "part":
            claim(self.ref)  # a part of the catalogue, or KeyError
        if self.flags and self.verdict in ("reproduced", "not reproduced", "passed", "failed"):
            # No verdict rests on an implausible figure.
            self.why = "; ".join(
                [f"rests on an implausible figure ({'; '.join(self.flags)})", *filter(None, [self.why])]
            )
            self.verdict = "inconclusive"


def part(ref: str, here: str, verdict: str, why: str = "", **kw: Any) -> Finding:
    """A measured part of a published finding: its sentence and claim from the catalogue."""
    return Finding(entry(ref).text, claim(ref)["claim"], here, verdict, why, ref, **kw)


def held(ref: str, here: str, ok: bool, why_not: str, why_ok: str = "", **kw: Any) -> Finding:
    """A part measured against the study's rule: reproduced when `ok`, else not (why_not)."""
    return part(ref, here, "reproduced" if ok else "not reproduced", why_ok if ok else why_not, **kw)


def untestable(ref: str, why: str, here: str = "-") -> Finding:
    return part(ref, here, "cannot be tested here", why)


def check(text: str, here: str, verdict: str, why: str = "", **kw: Any) -> Finding:
    """A study's own check: advice it follows, arithmetic, a figure the paper never gave."""
    return Finding(text, kw.pop("paper", "-"), here, verdict, why, "", "check", **kw)


@dataclass
class Comparison:
    quantity: str
    paper: str
    here: str
    note: str = ""


# ---- noise ----


def spread(values: list[float]) -> float:
    """(max - min) / median of repeats: the noise a ratio must beat."""
    if len(values) < 2:
        return 0.0
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m else 0.0


def repeats_needed(noise: float, repeats: int, size: float, limit: int = 200) -> int:
    """Repeats per configuration that would resolve an effect of `size` (a fraction) when
    `repeats` runs gave a spread (range over median) of `noise`: the median ratio's standard
    error, about 1.25 sqrt(2) sigma / sqrt(n), must fall below half the effect."""
    if repeats < 2 or noise <= 0:
        return max(3, repeats + 2)
    sigma = noise / max(1.0, 2.0 * math.sqrt(2.0 * math.log(max(repeats, 2))))  # the range of n draws ~ this many sigma
    need = math.ceil((2 * 1.25 * math.sqrt(2.0) * sigma / max(abs(size), 1e-3)) ** 2)
    return min(limit, max(repeats + 1, need))


def effect(ratio: float, noise: float, expect_above: bool, threshold: float) -> str:
    """The verdict for a measured ratio the paper says is above (or below) 1 by at least
    `threshold`: within the noise is inconclusive, never a failure."""
    size = ratio - 1.0 if expect_above else 1.0 - ratio
    if abs(ratio - 1.0) <= noise / 2:
        return "inconclusive"
    return "reproduced" if size >= threshold else "not reproduced"


def judge(ratio: float, noise: float, repeats: int, expect_above: bool, threshold: float) -> tuple[str, str]:
    """effect() with its reason; within the noise: "too noisy to read" and the repeats that
    would settle it."""
    verdict = effect(ratio, noise, expect_above, threshold)
    if verdict == "inconclusive":
        want = max(threshold, abs(ratio - 1.0))
        n = repeats_needed(noise, repeats, want)
        return verdict, (
            f"too noisy to read: {ratio:.2f}x within the spread of {100 * noise:.0f}% over {repeats} repeats; "
            f"about {n} interleaved repeats would settle an effect of {100 * want:.0f}%"
        )
    return verdict, ""


# ---- the distinct findings' verdicts ----


def _part_verdict(results: list[dict[str, Any]]) -> tuple[str, str]:
    verdicts = {r["verdict"] for r in results}
    whys = "; ".join(dict.fromkeys(r["why"] for r in results if r.get("why")))
    if not results:
        return NOT_TESTED, "no study of this run measured it"
    if {"reproduced", "not reproduced"} <= verdicts:
        return "inconclusive", "the studies that measured it disagree: " + whys
    for v in ("not reproduced", "reproduced", "inconclusive", "cannot be tested here"):
        if v in verdicts:
            return v, whys
    return NOT_TESTED, whys


def combine(parts: list[str]) -> str:
    """A distinct finding's verdict from its parts' verdicts."""
    if "not reproduced" in parts:
        return "not reproduced"
    if "inconclusive" in parts:
        return "inconclusive"
    if parts and all(p == "reproduced" for p in parts):
        return "reproduced"
    if "reproduced" in parts:
        return "partly tested"
    return "cannot be tested here"


def assess(results: list[dict[str, Any]], sections: set[str] | None = None) -> list[dict[str, Any]]:
    """Every distinct published finding of the sections (all when None) with its parts'
    verdicts, the results behind each part (from any study), and its own verdict."""
    out = []
    for e in distinct(sections):
        parts = []
        for p in e.parts:
            ref = f"{e.ref}/{p['id']}"
            mine = [r for r in results if r.get("ref") == ref and r.get("kind", "part") == "part"]
            verdict, why = _part_verdict(mine)
            parts.append(
                {
                    "id": p["id"],
                    "claim": p["claim"],
                    "measure": p["measure"],
                    "mark": p["mark"],
                    "verdict": verdict,
                    "why": why,
                    "results": mine,
                }
            )
        verdict = combine([p["verdict"] for p in parts])
        out.append(
            {
                "ref": e.ref,
                "section": e.section,
                "text": e.text,
                "mark": e.mark,
                "verdict": verdict,
                "parts": parts,
                "why": _finding_why(verdict, parts),
            }
        )
    return out


def _finding_why(verdict: str, parts: list[dict[str, Any]]) -> str:
    if verdict == "partly tested":
        done = [p["id"] for p in parts if p["verdict"] == "reproduced"]
        rest = [f"{p['id']} ({p['why'] or p['verdict']})" for p in parts if p["verdict"] != "reproduced"]
        return f"reproduced: {', '.join(done)}; untested here: {'; '.join(rest)}"
    if verdict == "reproduced":
        return ""
    key = {"not reproduced": ("not reproduced",), "inconclusive": ("inconclusive",)}.get(
        verdict, ("cannot be tested here", NOT_TESTED)
    )
    return "; ".join(f"{p['id']}: {p['why'] or p['verdict']}" for p in parts if p["verdict"] in key)


def tally(assessed: list[dict[str, Any]]) -> dict[str, int]:
    """Distinct findings per verdict (every verdict named, zeros included)."""
    verdicts = [a["verdict"] for a in assessed]
    return {v: verdicts.count(v) for v in VERDICTS}


def headline(assessed: list[dict[str, Any]], checks: list[dict[str, Any]]) -> str:
    t = tally(assessed)
    text = f"{len(assessed)} distinct published findings: " + ", ".join(f"{n} {v}" for v, n in t.items())
    if checks:
        c = [x["verdict"] for x in checks]
        text += "; apart, " + ", ".join(f"{c.count(v)} {v}" for v in CHECK_VERDICTS if c.count(v))
        text += f" of {len(checks)} self-checks (never counted as reproduced)"
    return text


# ---- printing ----


def print_comparison(console: Console, title: str, rows: list[Comparison], found: list[Finding], cite: str) -> None:
    if rows:
        t = Table(title=escape(title))
        for col in ("quantity", "paper", "this machine", "note"):
            t.add_column(col, justify="left" if col in ("quantity", "note") else "right")
        for r in rows:
            t.add_row(*(escape(x) for x in (r.quantity, r.paper, r.here, r.note)))
        console.print(t)
    parts = [f for f in found if f.kind == "part"]
    if parts:
        v = Table(title=f"parts of published findings measured ({escape(cite)})")
        for col in ("finding", "part claimed", "here", "verdict", "why"):
            v.add_column(col, overflow="fold")
        for f in parts:
            v.add_row(escape(f.finding), escape(f.paper), escape(f.here), _styled(f.verdict), escape(_why(f)))
        console.print(v)
    checks = [f for f in found if f.kind == "check"]
    if checks:
        c = Table(title="the study's own checks (not published findings; never counted)")
        for col in ("check", "here", "verdict", "why"):
            c.add_column(col, overflow="fold")
        for f in checks:
            c.add_row(escape(f.finding), escape(f.here), _styled(f.verdict), escape(_why(f)))
        console.print(c)
    if parts:
        assessed = assess([asdict(f) for f in parts], {f.ref.split("/")[0] for f in parts})
        print_assessed(console, assessed)


def _why(f: Finding) -> str:
    return f.why + (f" [flagged: {'; '.join(f.flags)}]" if f.flags and "implausible" not in f.why else "")


def _styled(verdict: str) -> str:
    return f"[{STYLE.get(verdict, 'white')}]{escape(verdict)}[/]"


def print_assessed(console: Console, assessed: list[dict[str, Any]]) -> None:
    t = Table(title="distinct published findings: one verdict each, from its parts")
    for col in ("finding", "parts", "verdict", "why"):
        t.add_column(col, overflow="fold")
    for a in assessed:
        parts = ", ".join(f"{p['id']}: {p['verdict']}" for p in a["parts"])
        t.add_row(escape(a["text"]), escape(parts), _styled(a["verdict"]), escape(a["why"]))
    console.print(t)


def as_json(rows: list[Comparison], found: list[Finding]) -> dict[str, Any]:
    return {"comparison": [asdict(r) for r in rows], "findings": [asdict(f) for f in found]}
