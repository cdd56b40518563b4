"""`pxq study contention APP`: the same app and problem on q cores as 1xq, (q/2)x2 and qx1,
packed and spread, repeats interleaved, normalised to qx1; with Chai et al.'s conclusions
(1xq slower than the others, two ranks on one chip slower than across chips or nodes) and
Narayanaswamy et al.'s co-processor (other chip) vs virtual-processor (same chip) comparison."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import envinfo, findings, runner, study
from pxq.errors import InputError
from pxq.findings import Comparison, Finding
from pxq.studies import Context, Outcome, exit_code, measure

NAME = "contention"
HELP = "an app on 1xq, (q/2)x2 and qx1, packed and spread, normalised to qx1, with the paper's conclusions"
SECTION = "contention"
MINUTES = 1.5
APPS = True


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ranks", type=int, help="q: ranks in all (default: every core)")
    p.add_argument("--placements", help="packed, spread or both (default both)")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


def defaults(quick: bool) -> dict[str, Any]:
    return {"ranks": None, "placements": "packed,spread", "repeat": 5 if quick else 7, "app": "cg", "cls": "A"}


def _row(rows: list[dict[str, Any]], layout: str, placement: str | None = None) -> dict[str, Any] | None:
    for r in rows:
        if r["layout"] == layout and (placement is None or r["placement"] == placement):
            return r
    return None


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """a's median over b's, and the larger spread of the two (the noise the ratio must beat)."""
    return a["median"] / b["median"], max(findings.spread(a["times"]), findings.spread(b["times"]))


def _packages(recs: list[dict[str, Any]], placement: str) -> set[int]:
    out: set[int] = set()
    for rec in recs:
        if rec.get("driver", {}).get("placement", {}).get("mode") == placement:
            for p in rec.get("placement", []):
                out.update(t["package"] for t in p.get("threads", []))
    return out


def _findings(rows: list[dict[str, Any]], recs: list[dict[str, Any]], q: int) -> list[Finding]:
    paper = findings.section(SECTION)
    sharing = findings.section("processor_sharing")
    out = []
    packed, alone = _row(rows, f"1x{q}", "packed"), _row(rows, f"{q}x1")
    if q < 4:
        out.append(Finding(paper["four_processes"], "1x4 slowest", "-", "cannot be tested here", f"{q} ranks: needs 4"))
    if packed and alone:
        r, noise = _ratio(packed, alone)
        out.append(
            Finding(
                paper["two_processes"] if q == 2 else paper["four_processes"],
                f"1x{q} slower than {q}x1",
                f"1x{q} packed / {q}x1 = {r:.2f}x (spread {100 * noise:.0f}%)",
                findings.effect(r, noise, True, 0.05),
                "within the run-to-run spread" if findings.effect(r, noise, True, 0.05) == "inconclusive" else "",
            )
        )
    spread = _row(rows, f"1x{q}", "spread")
    claim = f"virtual-processor (same chip) up to {sharing['virtual_processor_slowdown_max_percent']}% slower"
    finding = "two ranks on one chip are slower than on two chips of a node (processor sharing)"
    if len(_packages(recs, "spread") | _packages(recs, "packed")) < 2:
        out.append(Finding(finding, claim, "-", "cannot be tested here", "one package: no second chip on the node"))
    elif packed and spread:
        r, noise = _ratio(packed, spread)
        verdict = findings.effect(r, noise, True, 0.05)
        out.append(Finding(finding, claim, f"packed / spread = {r:.2f}x", verdict))
    return out


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    app = ctx.app or opts["app"]
    if ctx.base.placement or ctx.base.placement_cpus:
        raise InputError("the contention study sets placements itself: use --placements packed,spread")
    if opts["ranks"] is not None and opts["ranks"] < 1:
        raise InputError(f"--ranks {opts['ranks']}: use at least 1 (default: every core)")
    q = opts["ranks"] or envinfo.cores()
    if q > ctx.base.cores and not ctx.base.oversubscribe:
        raise InputError(
            f"--ranks {q}: this machine has {ctx.base.cores} cores; use at most {ctx.base.cores} (or --hostfile)"
        )
    base = ctx.spec(app) if ctx.app else ctx.spec(app, app_args=runner.class_args(app, opts["cls"]))
    configs = study.plan(base, q, [p for p in opts["placements"].split(",") if p])
    recs, planned = measure(ctx, configs, opts["repeat"], f"contention study of {app}")
    rows = study.summarize([r for r in recs if r.get("status") in ("ok", "failed")])
    if not rows:
        return Outcome(f"Contention: {app}", [{"layout": "-", "placement": "-"}], recs=recs, code=3)
    title = f"Contention: {app} on {q} cores, packed and spread"
    study.print_rows(rows, title, ctx.console)
    comparison = [
        Comparison(f"{r['layout']} {r['placement']} / {q}x1", "", f"{r['normalised']:.2f}x", f"{len(r['times'])} runs")
        for r in rows
        if r["normalised"]
    ]
    notes = sorted({w for r in rows for w in r["warnings"]})
    code = exit_code(recs, planned)
    out = Outcome(title, rows, comparison, _findings(rows, recs, q), recs, notes, {"median_of": "repeats"}, code)
    return out


def plot(rec: dict[str, Any], path: Path) -> Path:
    return study.plot(rec["rows"], path, rec["title"])
