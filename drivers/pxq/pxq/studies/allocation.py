"""`pxq study allocation [APP]`: profile an app once and compare block and cyclic allocation
on a machine model, by bytes and by messages, beside Narayanaswamy et al.'s findings (CG
better block, MG better cyclic, FT about the same)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis import allocation, msgdist
from pxq.analysis.findings import Comparison
from pxq.core import plugins, records, registry
from pxq.experiments import runner
from pxq.experiments.studykit import Context, Outcome, profile_app
from pxq.machine import envinfo

SECTION = "allocation"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ranks", type=int, help="ranks to profile (default 16 quick, 64 full; oversubscribed if above the cores)"
    )
    p.add_argument("--model", help="machine model NODESxSOCKETSxCORES (default 4x2x2 quick, 16x2x2 full)")


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    model = msgdist.parse_model(opts["model"])
    allocation.check_ranks(opts["ranks"], model)
    apps = [ctx.app] if ctx.app else list(registry.nas_apps())
    rows: list[dict[str, Any]] = []
    found, recs, comparison = [], [], []
    for app in apps:
        args = None if ctx.app else runner.class_args(app, opts["cls"])  # the command line's class, else the preset's
        prof, rec = profile_app(ctx, app, opts["ranks"], args)
        if rec is not None:
            recs.append(rec)
        if prof is None:
            continue
        mine = msgdist.allocation_study(ctx.console, prof, model, opts["ranks"] > envinfo.cores())
        rows += [{"app": app, **r} for r in mine]
        found += allocation.byte_findings(app, mine)
        for what in ("bytes", "count"):
            better = msgdist.better_allocation(mine, what) or "tie"
            comparison.append(
                Comparison(f"{app}: fewer inter-node {'bytes' if what == 'bytes' else 'messages'}", "", better)
            )
    title = f"Allocation: {', '.join(apps)} on {opts['ranks']} ranks, model {model}, block vs cyclic"
    notes = ["the paper: 64 processes on 16 nodes x 4 cores, class B"]
    code = None if rows else records.EXIT_RUN_FAILED
    return Outcome(title, rows or [{"app": "-"}], comparison, found, recs, notes, {"model": str(model)}, code)


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Per app, the inter-node share of messages and bytes under block and cyclic, even dashed."""
    plt = figures.pyplot()
    rows = [{"app": rec["app"], **r} for r in rec["rows"] if "alloc" in r]  # (one-app records name it once)
    apps = list(dict.fromkeys(r["app"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(2 * max(1, len(apps)) + 6, 4))
    for ax, what, label in zip(axes, ("count", "bytes"), ("messages", "bytes")):
        for k, (alloc, colour) in enumerate((("block", "tab:blue"), ("cyclic", "tab:orange"))):
            vals = []
            for app in apps:
                r = next(x for x in rows if x["app"] == app and x["alloc"] == alloc)
                vals.append(100 * r[what]["inter_node"] / (sum(r[what].values()) or 1))
            ax.bar([i + (k - 0.5) * 0.38 for i in range(len(apps))], vals, 0.38, color=colour, label=alloc)
        if rows:
            ax.axhline(100 * rows[0]["even"]["inter_node"], color="grey", ls="--", lw=0.8, label="even")
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels(apps)
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"inter-node % of {label}")
        ax.set_xlabel("application (profiled once, classified both ways)")
        ax.legend(fontsize=7)
    fig.suptitle(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"ranks": 16 if quick else 64, "model": "4x2x2" if quick else "16x2x2", "cls": "S" if quick else "B"}


PLUGIN = plugins.Study(
    help="profile an app once, compare block and cyclic allocation on a machine model, by bytes and messages",
    facts=plugins.StudyFacts(order=7, section=SECTION, minutes=1.0, apps="optional"),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
