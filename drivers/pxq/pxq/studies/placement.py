"""`pxq study placement [APP]`: profile an app, suggest a rank order with METIS, then run block,
cyclic and the suggestion interleaved on virtual nodes, each run profiled: predicted and
measured inter-node bytes, and times, beside Narayanaswamy et al.'s block versus cyclic
findings and their advice that a better allocation cuts the network's share."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.messages import msgdist, placement, placement_view, rankorder
from pxq.analysis.verdicts import allocation, findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.core import bounds, outputs, plugins, registry
from pxq.core.errors import InputError
from pxq.core.layout import format_volume, parse_layout
from pxq.experiments import runner
from pxq.experiments.studykit import Context, Outcome, exit_code, group, measure, profile_app
from pxq.machine import envinfo

SECTION = "allocation"
ORDERS = ("block", "cyclic", "suggested")


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ranks", type=int, help="ranks (default 16 quick, 64 full; oversubscribed above the cores)")
    p.add_argument("--model", help="machine model NODESxSOCKETSxCORES (default 4x2x2 quick, 16x2x2 full)")
    p.add_argument("--objective", choices=placement.OBJECTIVES, help="bytes (default) or messages")
    p.add_argument("--repeat", type=int, help="interleaved repeats of each order (default 3 quick, 5 full)")


def _configs(ctx: Context, app: str, model: msgdist.Model, s: placement.Suggestion, args: list[str] | None):
    """Block, cyclic and the suggestion on virtual nodes shaped as the model, each profiled."""
    per_node = model.sockets * model.cores
    layout = parse_layout(f"{model.nodes}x{per_node}")
    prediction = s.prediction()
    over = layout.ranks > envinfo.cores() or ctx.base.oversubscribe
    base = {"layout": layout, "mode": "flat", "oversubscribe": over}
    if args is not None:
        base["app_args"] = args
    out = []
    for name in ORDERS:
        channels = {
            "source": f"pxq study placement: {name}",
            "model": str(model),
            "predicted": prediction["channels"][name],
        }
        order: dict[str, Any] = {"rank_order": s.order} if name == "suggested" else {"alloc": name}
        out.append(ctx.spec(app, channels=channels, **order, **base))
    return out


def _order_name(rec: dict[str, Any]) -> str:
    alloc = rec["layout"].get("alloc", "block")
    return "suggested" if alloc == "order" else alloc


def _measured(recs: list[dict[str, Any]], name: str) -> int | None:
    """The inter-node bytes the runs of one order measured (the same in every run)."""
    seen = [
        r["channels"]["observed"]["bytes"]["inter_node"]
        for r in recs
        if _order_name(r) == name and (r.get("channels") or {}).get("observed")
    ]
    return seen[0] if seen else None


def _app_rows(app: str, s: placement.Suggestion, recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's rows for one app, from that app's runs."""
    groups = group(recs, _order_name)
    rows = []
    for name in ORDERS:
        g = groups.get(name)
        rows.append(
            {
                "app": app,
                "order": name,
                "predicted_inter_node_bytes": s.candidate(name).cost["bytes"]["inter_node"],
                "measured_inter_node_bytes": _measured(recs, name),
                "median_s": g["median"] if g else None,
                "comm_median_s": g["comm_median"] if g else None,
                "spread": g["spread"] if g else None,
                "times": g["times"] if g else [],
                "verified": g["verified"] if g else False,
            }
        )
    return rows


def _timing(ctx: Context, opts: dict[str, Any], recs: list[dict[str, Any]]) -> tuple[str | None, str]:
    """Why the runs' times cannot test the paper's time claims here (None when they can), and
    where they ran."""
    why = allocation.why_untimed(recs, opts["ranks"], envinfo.cores(), bool(ctx.base.hostfile))
    return why, allocation.where_timed(recs, envinfo.cores())


def _compare(
    app: str, rows: list[dict[str, Any]], chosen: str, timing: tuple[str | None, str]
) -> tuple[list[Comparison], list[Finding]]:
    by = {r["order"]: r for r in rows}
    mine = by["suggested"]
    best = min(("block", "cyclic"), key=lambda a: by[a]["predicted_inter_node_bytes"])
    comparison = [
        Comparison(
            f"{app}: inter-node bytes, {name}",
            "",
            f"{format_volume(by[name]['measured_inter_node_bytes'] or 0)} measured",
            f"predicted {format_volume(by[name]['predicted_inter_node_bytes'])}"
            + ("" if by[name]["measured_inter_node_bytes"] == by[name]["predicted_inter_node_bytes"] else " (differs)"),
        )
        for name in ORDERS
    ]
    if mine["median_s"] and by[best]["median_s"]:
        ratio = mine["median_s"] / by[best]["median_s"]
        comparison.append(
            Comparison(
                f"{app}: time, suggested / {best}",
                "",
                f"{ratio:.2f}x",
                f"spread {100 * max(mine['spread'], by[best]['spread']):.0f}%; the suggestion is {chosen}'s order",
            )
        )
    found = []
    measured = [{"alloc": a, "bytes": {"inter_node": by[a]["measured_inter_node_bytes"] or 0}} for a in ORDERS[:2]]
    if all(by[a]["measured_inter_node_bytes"] is not None for a in ORDERS[:2]):
        found += [f for f in allocation.byte_findings(app, measured) if f.ref.endswith("/bytes")]
    found += allocation.time_findings(app, by, *timing)
    a, b = mine["measured_inter_node_bytes"], by[best]["measured_inter_node_bytes"]
    if a is not None and b is not None:
        why = (
            f"{100 * (1 - a / b):.1f}% fewer" if a < b else ("the same" if a == b else f"{100 * (a / b - 1):.1f}% more")
        )
        found.append(
            findings.check(
                "the suggested order moves no more bytes between nodes than the better of block and cyclic "
                "(the papers' advice to reorder ranks; no published figure)",
                f"{app}: suggested {format_volume(a)}, {best} {format_volume(b)}",
                "passed" if a <= b else "failed",
                f"{why}, as each run's own profile measured"
                + (f": {best} is as good as METIS finds" if a == b else ""),
            )
        )
    return comparison, found


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    model = msgdist.parse_model(opts["model"])
    allocation.check_ranks(opts["ranks"], model)
    if opts["ranks"] != model.slots:
        raise InputError(
            f"--ranks {opts['ranks']} on model {model}: the runs fill the model's {model.slots} cores; give "
            f"--ranks {model.slots} or a model with {opts['ranks']} cores"
        )
    bounds.repeat(opts["repeat"])
    apps = [ctx.app] if ctx.app else list(registry.nas_apps())
    rows: list[dict[str, Any]] = []
    comparison, found, recs, planned = [], [], [], 0
    for app in apps:
        args = None if ctx.app else runner.class_args(app, opts["cls"])
        prof, rec = profile_app(ctx, app, opts["ranks"], args)
        if rec is not None:
            recs.append(rec)
        if prof is None:
            continue
        s = placement.suggest(prof, model, opts["objective"])
        placement_view.print_suggestion(ctx.console, s, f"{app}: {opts['ranks']} ranks on model {model}")
        path = ctx.aux(f"{app}-placement", ".order")
        order = rankorder.format_order(s.order, [f"pxq study placement {app}, model {model}"], s.prediction())
        outputs.write(path, order, "order", "the study's rank order")
        ran, n = measure(ctx, _configs(ctx, app, model, s, args), opts["repeat"], f"{app}: block, cyclic, suggested")
        recs += ran
        planned += n + 1
        mine = _app_rows(app, s, ran)
        rows += mine
        c, f = _compare(app, mine, s.chosen, _timing(ctx, opts, ran))
        comparison += c
        found += f
    title = f"Placement: {', '.join(apps)} on {opts['ranks']} ranks, model {model}: block, cyclic, METIS's order"
    notes = [
        "without --hostfile the runs are on virtual nodes of this machine (TCP between them); the predicted "
        "sockets are the model's, the measured channels what each run's own profile observed",
    ]
    if opts["ranks"] > envinfo.cores() and allocation.cluster_of(recs) is None:
        notes.append("the ranks oversubscribe the cores: the byte counts are exact, the times mean little")
    return Outcome(
        title, rows or [{"app": "-"}], comparison, found, recs, notes, {"model": str(model)}, exit_code(recs, planned)
    )


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Per app, each order's inter-node bytes (measured bars, predicted ticks) and median time
    (range of repeats), both relative to block's."""
    plt = figures.pyplot()
    rows = [r for r in rec["rows"] if "order" in r]
    apps = list(dict.fromkeys(r["app"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(2.2 * max(1, len(apps)) + 6, 4.2))
    colours = {"block": "tab:blue", "cyclic": "tab:orange", "suggested": "tab:green"}
    row = {(r["app"], r["order"]): r for r in rows}
    for k, name in enumerate(ORDERS):
        xs = [i + (k - 1) * 0.27 for i in range(len(apps))]
        mine = [row[(a, name)] for a in apps]
        base = [row[(a, "block")] for a in apps]
        seen = [
            (r["measured_inter_node_bytes"] or 0) / (b["measured_inter_node_bytes"] or 1) for r, b in zip(mine, base)
        ]
        axes[0].bar(xs, seen, 0.25, color=colours[name], label=name)
        want = [r["predicted_inter_node_bytes"] / (b["predicted_inter_node_bytes"] or 1) for r, b in zip(mine, base)]
        axes[0].scatter(xs, want, marker="_", s=200, color="black", zorder=3)
        for x, r, v in zip(xs, mine, seen):
            axes[0].text(
                x, v, figures.short_bytes(r["measured_inter_node_bytes"] or 0), ha="center", va="bottom", fontsize=6
            )
        ref = [b["median_s"] or 1.0 for b in base]
        med = [(r["median_s"] or 0) / t for r, t in zip(mine, ref)]
        low = [m - min(r["times"]) / t if r["times"] else 0 for m, r, t in zip(med, mine, ref)]
        high = [max(r["times"]) / t - m if r["times"] else 0 for m, r, t in zip(med, mine, ref)]
        axes[1].bar(xs, med, 0.25, color=colours[name], label=name, yerr=[low, high], capsize=3)
    axes[0].set_ylabel("inter-node bytes / block's")
    axes[0].set_title("bars: measured in each run; black ticks: predicted", fontsize=8)
    axes[1].set_ylabel("median time / block's")
    over = any("oversubscribe" in n for n in rec.get("notes", []))
    axes[1].set_title(
        "error bars: range of the repeats"
        + ("\nranks oversubscribe the cores: times include waiting for a core, read the bytes" if over else ""),
        fontsize=8,
        color="firebrick" if over else "black",
    )
    for ax in axes:
        ax.axhline(1.0, color="grey", lw=0.6, ls="--")
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels(apps)
        ax.set_xlabel("application")
        ax.legend(fontsize=7)
    fig.suptitle(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {
        "ranks": 16 if quick else 64,
        "model": "4x2x2" if quick else "16x2x2",
        "objective": "bytes",
        "repeat": 3 if quick else 5,
        "cls": "S" if quick else "A",
    }


PLUGIN = plugins.Study(
    help="profile an app, suggest a rank order (METIS), run block, cyclic and the suggestion: bytes and times",
    facts=plugins.StudyFacts(order=8, section=SECTION, minutes=1.9, apps="optional"),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
