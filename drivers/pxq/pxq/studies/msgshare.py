"""`pxq study msgdist`: the share of messages and bytes on each channel for the NAS proxies (or
any MPI program's profile) on a machine model, block allocation, beside Chai et al.'s table
(NAS class B, 16 processes on 4 nodes x 2 chips x 2 cores) and the even distribution."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis import findings, msgdist
from pxq.analysis.findings import Comparison, Finding
from pxq.core import plugins, records, registry
from pxq.core.errors import InputError
from pxq.experiments import runner
from pxq.experiments.studykit import Context, Outcome, profile_app
from pxq.figures import channelbars

SECTION = "message_distribution"
CH = msgdist.CHANNELS
CLOSE = 10.0  # percentage points: a channel's share "matches" the paper's within this


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="machine model NODESxSOCKETSxCORES (default 4x2x2, the paper's)")
    p.add_argument("--apps", help=f"proxies to profile (default {','.join(registry.nas_apps())})")
    p.add_argument("--profiles", nargs="+", type=Path, help="classify these pxq profile files instead of running")


def shares(rec: dict[str, Any], model: msgdist.Model) -> dict[str, Any]:
    """Per channel, % of messages and of bytes between ranks (self apart), block allocation."""
    t = msgdist.tally(rec, msgdist.place(model, rec["ranks"], "block"), "all")
    count = {c: sum(r[c] for r in t.count) for c in msgdist.ALL_CHANNELS}
    nbytes = {c: sum(r[c] for r in t.nbytes) for c in msgdist.ALL_CHANNELS}
    n, b = sum(count[c] for c in CH) or 1, sum(nbytes[c] for c in CH) or 1
    return {
        "messages": [round(100 * count[c] / n, 1) for c in CH],
        "bytes": [round(100 * nbytes[c] / b, 1) for c in CH],
        "self_bytes_percent": round(100 * nbytes["self"] / max(1, sum(nbytes.values())), 1),
    }


def _text(v: list[float]) -> str:
    return " / ".join(f"{x:.0f}" for x in v)


PAPER_CLASS = "B"  # the class of the paper's rows


def _app_finding(app: str, here: dict[str, Any], paper: dict[str, Any], cls: str | None = None) -> list[Finding]:
    """The messages and bytes parts of the paper's row for the app (a check where the paper
    has no row for it). CLS, the class the profile ran at, is named beside the shares; at
    another class than the paper's the reason says so (shares can change with the size)."""
    key = app.upper()
    if key not in paper["messages_percent"] or f"{SECTION}/{app}" not in {e.ref for e in findings.distinct()}:
        return [
            findings.check(
                f"{app}: shares per channel (no published row)",
                _text(here["messages"]),
                "cannot be tested here",
                "no published row for it in pxq's catalogue",
            )
        ]
    out = []
    for part, mine, theirs in (
        ("messages", here["messages"], paper["messages_percent"][key]),
        ("bytes", here["bytes"], paper["bytes_percent"][key]),
    ):
        gap = max(abs(a - b) for a, b in zip(mine, theirs))
        why = f"largest gap {gap:.0f} points"
        at = f" at class {cls}" if cls else ""
        shown = f"{_text(mine)}{at} (paper {_text(theirs)}, class {PAPER_CLASS})"
        if cls and cls != PAPER_CLASS:
            why += f"; measured at class {cls}, the paper's is {PAPER_CLASS} (--full, or --class {PAPER_CLASS})"
        out.append(findings.held(f"{SECTION}/{app}/{part}", shown, gap <= CLOSE, f"{why} (> {CLOSE:.0f})", why))
    return out


def _summary(rows: list[dict[str, Any]], even: list[float]) -> list[Finding]:
    mine = [r for r in rows if r["app"] in registry.nas_apps()]
    out = [findings.untestable(f"{SECTION}/on_node/other_nas", "pxq has no BT, SP or LU proxy")]
    names = ", ".join(a.upper() for a in registry.nas_apps())
    if {r["app"] for r in mine} != set(registry.nas_apps()):
        out.append(findings.untestable(f"{SECTION}/on_node/pxq_apps", f"needs the profiles of {names}"))
        return out
    on_node = [r["messages"][0] + r["messages"][1] for r in mine]
    mean = statistics.mean(on_node)
    even_on = even[0] + even[1]
    here = f"{mean:.0f}% on the node against {even_on:.0f}% even (mean of {names})"
    why = "less than twice the even share stays on the node"
    out.append(findings.held(f"{SECTION}/on_node/pxq_apps", here, mean >= 2 * even_on, why))
    return out


def _profiles(ctx: Context, opts: dict[str, Any], model: msgdist.Model) -> tuple[list[tuple[str, dict]], list[dict]]:
    if opts.get("profiles"):
        return [(msgdist.program_name(p), p) for p in (msgdist.load(f) for f in opts["profiles"])], []
    out, recs = [], []
    for app in [a for a in opts["apps"].split(",") if a]:
        prof, rec = profile_app(ctx, app, model.slots, runner.class_args(app, opts["cls"]))
        if rec is not None:
            recs.append(rec)
        if prof is not None:
            out.append((app, prof))
    return out, recs


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    model = msgdist.parse_model(opts["model"])
    paper = findings.section(SECTION)
    got, recs = _profiles(ctx, opts, model)
    for name, prof in got:
        if prof["ranks"] > model.slots:
            raise InputError(f"{name}: {prof['ranks']} ranks do not fit model {model}: use a larger --model")
    rows = [{"app": name, "ranks": prof["ranks"], **shares(prof, model)} for name, prof in got]
    even_d = msgdist.even_distribution(msgdist.place(model, model.slots, "block"))
    even = [round(100 * even_d[c], 1) for c in CH]
    comparison = [Comparison("even distribution", _text(paper["even_distribution_percent"]), _text(even), str(model))]
    cls = None if opts.get("profiles") else opts["cls"]
    found = [f for r in rows for f in _app_finding(r["app"], r, paper, cls)]
    found += _summary(rows, even)
    for r in rows:
        if r["self_bytes_percent"]:
            comparison.append(
                Comparison(f"{r['app']}: bytes a rank sends itself", "-", f"{r['self_bytes_percent']}%", "shown apart")
            )
    cls = "" if opts.get("profiles") else f", class {opts['cls']}"
    title = f"Message distribution on model {model} (block allocation{cls}): shares per channel"
    notes = ["the profiles ran oversubscribed where ranks exceed cores: counts are exact, times are not"]
    code = None if got else records.EXIT_RUN_FAILED
    return Outcome(title, rows, comparison, found, recs, notes, {"paper": paper, "even": even}, code)


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Stacked channel shares per app, the paper's bar beside this machine's, the even one last."""
    plt = figures.pyplot()
    paper = rec.get("data", {}).get("paper", {})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, what in zip(axes, ("messages", "bytes")):
        labels, stacks = [], []
        for r in rec["rows"]:
            key = r["app"].upper()
            if key in paper.get(f"{what}_percent", {}):
                labels.append(f"{key}\npaper")
                stacks.append(paper[f"{what}_percent"][key])
            labels.append(f"{key}\nhere")
            stacks.append(r[what])
        labels.append("even")
        stacks.append(rec.get("data", {}).get("even", [0, 0, 0]))
        bottom = [0.0] * len(labels)
        for i, c in enumerate(CH):
            vals = [s[i] for s in stacks]
            ax.bar(labels, vals, bottom=bottom, color=channelbars.COLOURS[c], label=msgdist.CHANNEL_TEXT[c])
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"% of {what} between ranks")
        ax.set_xlabel("benchmark: the paper's shares beside this machine's")
        ax.tick_params(axis="x", labelsize=7)
    axes[0].legend(fontsize=7, loc="lower left")
    fig.suptitle(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"model": "4x2x2", "apps": ",".join(registry.nas_apps()), "cls": "S" if quick else "B", "profiles": None}


PLUGIN = plugins.Study(
    help="message and byte shares per channel for the NAS proxies (or any profile) beside the paper's table",
    facts=plugins.StudyFacts(order=1, section=SECTION, minutes=0.1),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
    name="msgdist",
)
