"""`pxq study allocation [APP]`: profile an app once and compare block and cyclic allocation
on a machine model, by bytes and by messages, beside Narayanaswamy et al.'s findings (CG
better block, MG better cyclic, FT about the same). On a cluster of this machine that is up
(`pxq cluster up`, or `--network PROFILE`) it also times both, interleaved and repeated, on the
cluster's nodes at Px2 (P: the model's nodes, at most the cluster's), where the nodes' shaped
links are what the allocation changes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.messages import msgdist
from pxq.analysis.verdicts import allocation
from pxq.analysis.verdicts.findings import Comparison
from pxq.core import bounds, plugins, records, registry
from pxq.core.layout import parse_layout
from pxq.experiments import runner
from pxq.experiments.studykit import Context, Outcome, exit_code, group, measure, profile_app
from pxq.launch import netns
from pxq.machine import envinfo

SECTION = "allocation"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ranks", type=int, help="ranks to profile (default 16 quick, 64 full; oversubscribed if above the cores)"
    )
    p.add_argument("--model", help="machine model NODESxSOCKETSxCORES (default 4x2x2 quick, 16x2x2 full)")
    p.add_argument("--repeat", type=int, help="on a cluster: interleaved timed repeats (default 3 quick, 5 full)")


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    model = msgdist.parse_model(opts["model"])
    allocation.check_ranks(opts["ranks"], model)
    bounds.repeat(opts["repeat"])  # refused before the profile, not after it
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
    out = Outcome(title, rows or [{"app": "-"}], comparison, found, recs, notes, {"model": str(model)}, code)
    cluster = netns.current()
    if cluster is not None and rows:
        _timed(ctx, opts, min(cluster.nodes, model.nodes), list(dict.fromkeys(r["app"] for r in rows)), out)
    return out


def _timed(ctx: Context, opts: dict[str, Any], nodes: int, apps: list[str], out: Outcome) -> None:
    """Block and cyclic timed on P of the cluster's nodes (as many as the model has, at most) at
    Px2, the fewest ranks per node at which they differ, interleaved and repeated; their time
    findings replace the untestable ones."""
    layout = parse_layout(f"{nodes}x2")
    over = layout.ranks > envinfo.cores() or ctx.base.oversubscribe
    configs = [
        ctx.spec(app, layout=layout, mode="flat", alloc=alloc, oversubscribe=over, **_class_args(ctx, app, opts))
        for app in apps
        for alloc in ("block", "cyclic")
    ]
    ran, planned = measure(ctx, configs, opts["repeat"], f"block and cyclic timed at {layout}")
    out.recs += ran
    where = allocation.where_timed(ran, envinfo.cores())
    crowded = (
        f"{layout.ranks} ranks shared this machine's {envinfo.cores()} cores: their times mix core sharing into "
        "what the allocation changes, so no time claim is judged (real nodes, or a cluster with a core per rank)"
        if layout.ranks > envinfo.cores()
        else None
    )
    why_not = allocation.why_untimed(ran, layout.ranks, envinfo.cores(), False)
    for app in apps:
        groups = group([r for r in ran if r.get("app") == app], lambda r: r["layout"].get("alloc", "block"))
        by = {}
        for alloc in ("block", "cyclic"):
            g = groups.get(alloc) or {"times": [], "rounds": [], "median": None, "comm_median": None, "spread": 0.0}
            by[alloc] = {
                "times": g["times"],
                "rounds": g["rounds"],
                "median_s": g["median"],
                "comm_median_s": g["comm_median"],
                "spread": g["spread"],
            }
            row = {k: v for k, v in by[alloc].items() if k != "rounds"}
            out.rows.append({"app": app, "timed": alloc, "layout": str(layout), **row})
        if by["block"]["median_s"] and by["cyclic"]["median_s"]:
            ratio = by["block"]["median_s"] / by["cyclic"]["median_s"]
            spread = max(by["block"]["spread"], by["cyclic"]["spread"])
            out.comparison.append(
                Comparison(f"{app}: time at {layout}, block / cyclic", "", f"{ratio:.2f}x", f"spread {spread:.0%}")
            )
        timed = allocation.time_findings(app, by, why_not, where, crowded)
        refs = {f.ref for f in timed}
        out.found = [f for f in out.found if f.ref not in refs] + timed
    out.title += f"; timed at {layout} on the cluster"
    out.code = out.code or exit_code(ran, planned)


def _class_args(ctx: Context, app: str, opts: dict[str, Any]) -> dict[str, Any]:
    """The command line's arguments for a named app, else the preset's class."""
    return {} if ctx.app else {"app_args": runner.class_args(app, opts["cls"])}


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Per app, the inter-node share of messages and bytes under block and cyclic, even dashed."""
    plt = figures.pyplot()
    rows = [{"app": rec["app"], **r} for r in rec["rows"] if "alloc" in r]  # (one-app records name it once)
    apps = list(dict.fromkeys(r["app"] for r in rows))
    timed = [{"app": rec["app"], **r} for r in rec["rows"] if "timed" in r and r.get("median_s")]
    panels = 3 if timed else 2
    fig, axes = plt.subplots(1, panels, figsize=(2 * max(1, len(apps)) + 3 * panels, 4))
    if timed:
        _plot_times(axes[2], timed)
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


def _plot_times(ax: Any, rows: list[dict[str, Any]]) -> None:
    """Per app, block's and cyclic's median time over block's, the range of repeats as a bar."""
    apps = list(dict.fromkeys(r["app"] for r in rows))
    for k, (alloc, colour) in enumerate((("block", "tab:blue"), ("cyclic", "tab:orange"))):
        for i, app in enumerate(apps):
            r = next((x for x in rows if x["app"] == app and x["timed"] == alloc), None)
            base = next((x for x in rows if x["app"] == app and x["timed"] == "block"), None)
            if r is None or base is None:
                continue
            x, ref = i + (k - 0.5) * 0.38, base["median_s"]
            mid, lo, hi = r["median_s"] / ref, min(r["times"]) / ref, max(r["times"]) / ref
            ax.bar(x, mid, 0.38, color=colour, label=alloc if i == 0 else None)
            ax.errorbar(x, mid, yerr=[[mid - lo], [hi - mid]], color="k")
    ax.axhline(1.0, color="grey", ls="--", lw=0.8)
    ax.set_xticks(range(len(apps)))
    ax.set_xticklabels(apps)
    ax.set_ylabel(f"time over block's (median, range), {rows[0]['layout']}")
    ax.set_xlabel("timed on the cluster")
    ax.legend(fontsize=7)


def defaults(quick: bool) -> dict[str, Any]:
    return {
        "ranks": 16 if quick else 64,
        "model": "4x2x2" if quick else "16x2x2",
        "cls": "S" if quick else "B",
        "repeat": 3 if quick else 5,
    }


PLUGIN = plugins.Study(
    help="profile an app once, compare block and cyclic allocation on a machine model, by bytes and messages",
    facts=plugins.StudyFacts(order=7, section=SECTION, minutes=0.1, apps="optional"),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
