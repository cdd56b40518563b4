"""`pxq study contention APP`: the same app and problem on q cores as 1xq, (q/2)x2 and qx1,
packed and spread, repeats interleaved, normalised to qx1; with Chai et al.'s conclusions
(1xq slower than the others, two ranks on one chip slower than across chips or nodes) and
Narayanaswamy et al.'s co-processor (other chip) vs virtual-processor (same chip) comparison."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.analysis.verdicts.paired import judge_rows
from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.experiments import runner, study
from pxq.experiments.studykit import Context, Outcome, exit_code, measure
from pxq.figures import layoutbars
from pxq.launch import launchers
from pxq.machine import ceilings, envinfo

SECTION = "contention"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ranks", type=int, help="q: ranks in all (default: every core)")
    p.add_argument("--placements", help="packed, spread or both (default both)")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


def _row(rows: list[dict[str, Any]], layout: str, placement: str | None = None) -> dict[str, Any] | None:
    for r in rows:
        if r["layout"] == layout and (placement is None or r["placement"] == placement):
            return r
    return None


def _compare(ref: str, a: dict[str, Any] | None, b: dict[str, Any] | None, label: str, why_not: str | None) -> Finding:
    """One time part: a slower than b (a over b's median above 1 beyond the noise)."""
    if why_not is not None:
        return findings.untestable(ref, why_not)
    if a is None or b is None:
        return findings.untestable(ref, f"{label}: a configuration left no run")
    verdict, why, evidence = judge_rows(a, b, True, 0.05)
    ratio = a["median"] / b["median"]
    noise = max(findings.spread(a["times"]), findings.spread(b["times"]))
    n = evidence["repeats"]
    flags = list(dict.fromkeys(a.get("flags", []) + b.get("flags", [])))
    paired = evidence.get("paired")
    shown = f"{label} = {ratio:.2f}x (spread {100 * noise:.0f}%, {n} repeats)"
    if paired:
        shown = f"{label} = {paired['ratio']:.2f}x [{paired['lo']:.2f}-{paired['hi']:.2f}] ({n} paired rounds)"
    return findings.part(
        ref,
        shown,
        verdict,
        why or ("at least 5% slower" if verdict == "reproduced" else "less than 5% slower"),
        flags=flags,
        evidence={"spread": noise, **evidence, "ratio": paired["ratio"] if paired else ratio},
    )


def _comparable(f: Finding) -> Finding:
    """A measured "comparable" claim: reproduced within 5% or the spread, not "slower"."""
    if f.verdict in ("reproduced", "not reproduced"):
        ratio = f.evidence["ratio"]
        f.verdict = "reproduced" if abs(ratio - 1) <= max(0.05, f.evidence["spread"] / 2) else "not reproduced"
        f.why = "within 5% or the spread" if f.verdict == "reproduced" else "more than 5% apart"
    return f


def _findings(rows: list[dict[str, Any]], q: int) -> list[Finding]:
    """Every part of the contention and processor-sharing findings, each from the layouts and
    placements that test it, or why this machine cannot."""
    packages = {p for r in rows for p in r.get("packages", [])}
    virtual = any(r.get("virtual_nodes") for r in rows)
    one_pkg = "one package: no second chip on the node" if len(packages) < 2 else None
    shared = (
        "the virtual nodes share this machine's one chip, its caches and memory bus, so more nodes relieve nothing"
        if virtual and len(packages) < 2
        else None
    )
    packed, alone, spread = _row(rows, f"1x{q}", "packed"), _row(rows, f"{q}x1"), _row(rows, f"1x{q}", "spread")
    out = []
    four = f"{q} ranks: the finding needs 4 (one per core)" if q != 4 else shared
    out.append(_compare(f"{SECTION}/four/slower", packed, alone, f"1x{q} packed / {q}x1", four))
    mid = _row(rows, f"{q // 2}x2", "packed")
    out.append(_comparable(_compare(f"{SECTION}/four/comparable", mid, alone, f"{q // 2}x2 / {q}x1", four)))
    two = f"{q} ranks: the finding is about 2" if q != 2 else None
    out.append(_compare(f"{SECTION}/two/vs_chips", packed, spread, "1x2 packed / spread", two or one_pkg))
    out.append(_compare(f"{SECTION}/two/vs_nodes", packed, alone, "1x2 packed / 2x1", two or shared))
    out.append(
        findings.untestable(f"{SECTION}/two/comparable", two or one_pkg or shared or "needs two chips and two nodes")
        if (two or one_pkg or shared)
        else _compare(f"{SECTION}/two/comparable", spread, alone, "1x2 spread / 2x1", None)
    )
    out.append(_compare("processor_sharing/virtual_processor/time", packed, spread, f"1x{q} packed / spread", one_pkg))
    counted = "needs per-rank hardware counters of ranks sharing a chip against ranks on two chips"
    for name in ("misses", "stalls"):
        out.append(findings.untestable(f"processor_sharing/virtual_processor/{name}", one_pkg or counted))
    return out


def _ranks(ctx: Context, opts: dict[str, Any]) -> int:
    """The ranks the study runs, its placements and ranks checked against this machine."""
    if ctx.base.placement or ctx.base.placement_cpus:
        raise InputError("the contention study sets placements itself: use --placements packed,spread")
    if opts["ranks"] is not None and opts["ranks"] < 1:
        raise InputError(f"--ranks {opts['ranks']}: use at least 1 (default: every core)")
    q = opts["ranks"] or envinfo.cores()
    if q > ctx.base.cores and not ctx.base.oversubscribe:
        raise InputError(
            f"--ranks {q}: this machine has {ctx.base.cores} cores; use at most {ctx.base.cores} (or --hostfile)"
        )
    return q


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    app = ctx.app or opts["app"]
    q = _ranks(ctx, opts)
    base = ctx.spec(app) if ctx.app else ctx.spec(app, app_args=runner.class_args(app, opts["cls"]))
    configs = study.plan(base, q, [p for p in opts["placements"].split(",") if p])
    recs, planned = measure(
        ctx, configs, opts["repeat"], f"contention study of {app}", pairs=compared(configs, q, testable(ctx, q))
    )
    rows = study.summarize([r for r in recs if r.get("status") in ("ok", "failed")])
    if not rows:
        return Outcome(f"Contention: {app}", [{"layout": "-", "placement": "-"}], recs=recs, code=3)
    title = f"Contention: {app} on {q} cores, packed and spread"
    study.print_rows(rows, title, ctx.console)
    comparison = [
        Comparison(
            f"{r['layout']} {r['placement']} / {q}x1",
            "",
            f"{r['normalised']:.2f}x",
            f"{len(r['times'])} runs" + ("; flagged implausible (see the notes)" if r.get("flags") else ""),
        )
        for r in rows
        if r["normalised"]
    ]
    notes = sorted({w for r in rows for w in r["warnings"]})
    notes += [f"implausible: {f}" for f in dict.fromkeys(f for r in rows for f in r.get("flags", []))]
    notes.append(memory_roof_note(ceilings.load(envinfo.machine()), q))
    code = exit_code(recs, planned)
    out = Outcome(title, rows, comparison, _findings(rows, q), recs, notes, {"median_of": "repeats"}, code)
    return out


def testable(ctx: Context, q: int) -> set[str]:
    """Which comparisons this machine can test, as _findings will judge them (its packages and
    whether more nodes are virtual ones of this machine), so that a budget settles only those."""
    one_pkg = envinfo.packages() < 2
    shared = one_pkg and not ctx.base.hostfile and not launchers.real_nodes(ctx.base.launcher)
    out = set()
    if q == 4 and not shared:
        out |= {"four"}
    if not one_pkg:
        out |= {"chips"}
    if q == 2 and not shared:
        out |= {"nodes"} | ({"spread_nodes"} if not one_pkg else set())
    return out


def compared(configs: list[runner.RunSpec], q: int, tested: set[str] | None = None) -> list[tuple[int, int]]:
    """The pairs of configurations (indices) whose times the findings compare: 1xq packed and
    (q/2)x2 against qx1, 1xq packed against spread, 1xq spread against qx1; only those of the
    comparisons TESTED names (testable(); None: all)."""

    def at(layout: str, placement: str | None) -> int | None:
        for k, spec in enumerate(configs):
            nodes, per = spec.layout.nodes, spec.layout.ranks_per_node
            if f"{nodes}x{per}" == layout and (placement is None or spec.placement == placement):
                return k
        return None

    want = [
        ("four", f"1x{q}", "packed", f"{q}x1", None),
        ("four", f"{q // 2}x2", "packed", f"{q}x1", None),
        ("nodes", f"1x{q}", "packed", f"{q}x1", None),
        ("chips", f"1x{q}", "packed", f"1x{q}", "spread"),
        ("spread_nodes", f"1x{q}", "spread", f"{q}x1", None),
    ]
    out = []
    for what, la, pa, lb, pb in want:
        if tested is not None and what not in tested:
            continue
        a, b = at(la, pa), at(lb, pb)
        if a is not None and b is not None and a != b and (a, b) not in out:
            out.append((a, b))
    return out


def memory_roof_note(c: dict[str, Any] | None, q: int) -> str:
    """The shared memory roof these layouts divide: the memory bandwidth this machine's cores get
    together with 1..q of them streaming at once (pxq roofline's measured ceilings, median and
    range), and what each gets of it."""
    if c is None:
        return "the shared memory roof: ./pxq roofline measures this machine's ceilings once (docs/ROOFLINE.md)"
    mem = c["curve"][-1]["gbs"]
    alone = ceilings.at(mem, 1)
    parts = []
    for k in range(1, min(q, len(mem)) + 1):
        row = mem[k - 1]
        total = row["median"]
        parts.append(
            f"{k} core(s) {total:.1f} ({row['min']:.1f}-{row['max']:.1f}) in total, "
            f"{total / k:.1f} each ({total / k / alone:.0%} of one alone)"
        )
    return (
        f"the shared memory roof ({c['cpu_model']}, pxq roofline's ceilings, GB/s): {'; '.join(parts)}. "
        "Ranks of one node divide it; virtual nodes of one machine divide the same bus"
    )


def plot(rec: dict[str, Any], path: Path) -> Path:
    return layoutbars.plot(rec["rows"], path, rec["title"])


def defaults(quick: bool) -> dict[str, Any]:
    return {"ranks": None, "placements": "packed,spread", "repeat": 5 if quick else 7, "app": "cg", "cls": "A"}


PLUGIN = plugins.Study(
    help="an app on 1xq, (q/2)x2 and qx1, packed and spread, normalised to qx1, with the paper's conclusions",
    facts=plugins.StudyFacts(order=2, section=SECTION, minutes=0.2, apps=True, judged=(SECTION, "processor_sharing")),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
