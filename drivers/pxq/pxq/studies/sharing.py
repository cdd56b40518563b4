"""`pxq study sharing`: a constant number of ranks over layouts with more ranks per node (the
paper's 16x1, 8x2 and 4x4, scaled to this machine with virtual nodes): time and time in MPI per
layout for CG, MG and FT, beside Narayanaswamy et al.'s network-sharing findings."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.analysis.verdicts.paired import judge_rows
from pxq.core import plugins, registry
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.experiments import runner
from pxq.experiments.studykit import Context, Outcome, exit_code, group, layout_text, measure
from pxq.machine import envinfo

SECTION = "network_sharing"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ranks", type=int, help="ranks in all (default: every core)")
    p.add_argument("--apps", help=f"proxies (default {','.join(registry.nas_apps())})")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


def layouts(n: int) -> list[str]:
    """n x 1, n/2 x 2, ... 1 x n: every power-of-two split of n ranks."""
    if n < 2:
        raise InputError(f"--ranks {n}: network sharing needs at least 2 ranks")
    out, q = [], 1
    while q <= n:
        if n % q == 0:
            out.append(f"{n // q}x{q}")
        q *= 2
    return out


def off_node_chance(layout: str) -> float:
    """The chance that a given peer of a rank is on another node."""
    p, q = (int(x) for x in layout.split("x"))
    n = p * q
    return (n - q) / (n - 1) if n > 1 else 0.0


THRESHOLD = 0.02  # "slower": by at least this much (the paper's smallest slowdowns are a few per cent)


def _pair_parts(pairs: list[tuple[dict[str, Any], dict[str, Any]]], refs: tuple[str, str], label: str) -> list[Finding]:
    """Time and network time slower in the second layout of every pair than in the first, each
    app judged on its paired rounds by the settled-comparison rule where they ran interleaved
    (pxq.analysis.verdicts.paired.judge_rows), else on medians and spreads; the part holds only when every
    app's does, and says which apps it rests on."""
    out = []
    for ref, key in zip(refs, ("times", "comm")):
        judged = [_judge_app(a, b, key) for a, b in pairs]
        here = ", ".join(f"{app} {ev['ratio']:.2f}x" for app, _, _, ev in judged if "ratio" in ev)
        bad = [app for app, v, _, _ in judged if v == "not reproduced"]
        unsure = [app for app, v, _, _ in judged if v == "inconclusive"]
        reasons = "; ".join(f"{app}: {why}" for app, _, why, _ in judged if why)
        if bad:
            verdict, why = "not reproduced", f"not slower {label}: {', '.join(bad)} ({reasons})"
        elif unsure:
            verdict, why = "inconclusive", f"not settled for {', '.join(unsure)} ({reasons})"
        else:
            verdict, why = "reproduced", reasons
        evidence = min((ev for *_, ev in judged), key=lambda ev: ev.get("repeats", 0), default={})
        out.append(findings.part(ref, here, verdict, why, evidence=evidence))
    return out


def _judge_app(a: dict[str, Any], b: dict[str, Any], key: str) -> tuple[str, str, str, dict[str, Any]]:
    """(app, verdict, why, evidence): B's KEY ("times" or "comm") slower than A's, on paired
    rounds where there are some, else on medians and spreads."""
    first = {"times": a.get(key) or [], "rounds": a.get("rounds") or []}
    second = {"times": b.get(key) or [], "rounds": b.get("rounds") or []}
    if first["times"] and second["times"] and min(first["times"]) > 0:
        return (a["app"], *judge_rows(second, first, True, THRESHOLD))
    median = "median" if key == "times" else "comm_median"
    noise, n = max(a["spread"], b["spread"]), min(a["runs"], b["runs"])
    ratio = b[median] / max(a[median], 1e-12)
    verdict, why = findings.judge(ratio, noise, n, True, THRESHOLD)
    return a["app"], verdict, why, {"repeats": n, "spread": noise, "ratio": ratio}


def _findings(rows: list[dict[str, Any]], virtual: bool, n: int) -> list[Finding]:
    """Every part of the network-sharing findings: measured where real nodes share a network
    card, otherwise why not; the off-node chance is arithmetic, a self-check."""
    refs = (f"{SECTION}/more_per_node/time", f"{SECTION}/more_per_node/network_time")
    one_per_node = {r["app"]: r for r in rows if r["layout"].endswith("x1")}
    shared = {r["app"]: r for r in rows if not r["layout"].endswith("x1") and r["layout"].split("x")[1] == "2"}
    pairs = [(one_per_node[a], shared[a]) for a in one_per_node if a in shared]
    card = (
        "virtual nodes share no network card: their messages go over TCP through one kernel, so two ranks per node "
        "move traffic to shared memory instead of sharing a link"
    )
    if not pairs:
        out = [findings.untestable(ref, "no Nx1 and (N/2)x2 pair ran") for ref in refs]
    elif virtual:
        here = ", ".join(f"{a['app']} {b['median'] / a['median']:.2f}x" for a, b in pairs)
        out = [findings.untestable(ref, card, here) for ref in refs]
    else:
        out = _pair_parts(pairs, refs, "with two ranks sharing a node's card")
    why16 = card if virtual else f"needs 16 ranks as 8x2 and 4x4 (this run had {n})"
    out += [findings.untestable(f"{SECTION}/vp_to_4x4/{p}", why16) for p in ("cg_ft_is", "mg")]
    out.append(
        findings.untestable(
            f"{SECTION}/processor_over_network/compare",
            "needs both costs measured: ranks sharing a chip against two chips (two packages) and ranks sharing a "
            "network card (real nodes)",
        )
    )
    chances = {lay: off_node_chance(lay) for lay in ("8x2", "4x4")}
    ok = round(100 * chances["8x2"]) == 93 and round(100 * chances["4x4"]) == 80
    out.append(
        findings.check(
            entry_text("off_node_chance"),
            ", ".join(f"{lay}: {100 * c:.0f}%" for lay, c in chances.items()),
            "passed" if ok else "failed",
            "arithmetic from the layouts (peers on other nodes over all peers), a self-check, not a measurement",
            paper="93% and 80%",
        )
    )
    return out


def entry_text(name: str) -> str:
    return findings.entry(f"{SECTION}/{name}").text


def _rows(groups: dict[Any, dict[str, Any]], apps: list[str], n: int) -> list[dict[str, Any]]:
    """A row per app and layout that ran, its time over the app's one-rank-per-node time."""
    rows = []
    for app in apps:
        base = groups.get((app, f"{n}x1"))
        for lay in layouts(n):
            g = groups.get((app, lay))
            if g is None:
                continue
            rows.append(
                {
                    "app": app,
                    "layout": lay,
                    "runs": len(g["times"]),
                    "median": g["median"],
                    "comm_median": g["comm_median"],
                    "spread": g["spread"],
                    "times": g["times"],
                    "comm": g["comm"],
                    "rounds": [list(x) if x else None for x in g["rounds"]],
                    "normalised": g["median"] / base["median"] if base else None,
                    "off_node_chance": off_node_chance(lay),
                    "verified": g["verified"],
                }
            )
    return rows


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    n = opts["ranks"] or envinfo.cores()
    apps = [a for a in opts["apps"].split(",") if a]
    configs = [
        ctx.spec(app, layout=parse_layout(lay), mode="flat", app_args=runner.class_args(app, opts["cls"]))
        for app in apps
        for lay in layouts(n)
    ]
    lays = layouts(n)
    at = {(app, lay): i for i, (app, lay) in enumerate((a, lay) for a in apps for lay in lays)}
    compared = [  # what the parts judge: one rank per node against two per node, per app
        (at[(app, f"{n}x1")], at[(app, f"{n // 2}x2")]) for app in apps if (app, f"{n // 2}x2") in at
    ]
    recs, planned = measure(
        ctx, configs, opts["repeat"], f"network sharing, {n} ranks", pairs=compared or None, threshold=THRESHOLD
    )
    groups = group(recs, lambda r: (r["app"], layout_text(r)))
    rows = _rows(groups, apps, n)
    virtual = any(r.get("layout", {}).get("virtual_nodes") for r in recs)
    comparison = [
        Comparison(
            f"{r['app']} {r['layout']}",
            "",
            f"{r['median']:.3f} s, MPI {r['comm_median']:.3f} s",
            f"{r['normalised']:.2f}x of {n}x1, spread {100 * r['spread']:.0f}%" if r["normalised"] else "",
        )
        for r in rows
    ]
    for lay, pct in (("8x2", 93), ("4x4", 80)):
        comparison.append(
            Comparison(
                f"chance a peer is off the node, {lay}", f"{pct}%", f"{100 * off_node_chance(lay):.0f}%", "arithmetic"
            )
        )
    title = f"Network sharing: {n} ranks as " + ", ".join(layouts(n)) + f" (class {opts['cls']})"
    notes = ["virtual nodes: the inter-node channel is TCP on one host"] if virtual else []
    if n > ctx.base.cores:
        notes.append("ranks oversubscribe the cores: times mean little")
    found, code = _findings(rows, virtual, n), exit_code(recs, planned)
    return Outcome(title, rows or [{"app": "-"}], comparison, found, recs, notes, {"ranks": n}, code)


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Time per layout over the one-rank-per-node time, per app; hatched: the time in MPI."""
    plt = figures.pyplot()
    from matplotlib.patches import Patch

    rows = [r for r in rec["rows"] if r.get("normalised")]
    apps = list(dict.fromkeys(r["app"] for r in rows))
    lays = list(dict.fromkeys(r["layout"] for r in rows))
    colours = dict(zip(lays, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")))
    fig, ax = plt.subplots(figsize=(2.2 * max(1, len(apps)) + 2.5, 4))
    width = 0.8 / max(1, len(lays))
    base_of = {r["app"]: r["median"] / r["normalised"] for r in rows}
    for i, app in enumerate(apps):
        for j, lay in enumerate(lays):
            r = next((x for x in rows if x["app"] == app and x["layout"] == lay), None)
            if r is None:
                continue
            x = i + (j - (len(lays) - 1) / 2) * width
            ax.bar(x, r["normalised"], width, color=colours[lay], edgecolor="black", linewidth=0.5)
            ax.bar(x, r["comm_median"] / base_of[app], width, color="none", hatch="//", edgecolor="black", linewidth=0)
    ax.axhline(1.0, color="grey", ls="--", lw=0.8)
    ax.set_xticks(range(len(apps)))
    ax.set_xticklabels(apps)
    ax.set_xlabel("application")
    ax.set_ylabel("median time / one-rank-per-node median")
    handles = [Patch(color=colours[lay], label=lay) for lay in lays]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="time in MPI"))
    ax.legend(handles=handles, fontsize=7, title="layout (nodes x ranks)", title_fontsize=7)
    ax.set_title(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {
        "ranks": None,
        "apps": ",".join(registry.nas_apps()),
        "cls": "A" if quick else "B",
        "repeat": 5 if quick else 7,
    }


PLUGIN = plugins.Study(
    help="a constant rank count over layouts with more ranks per node: time and time in MPI per layout",
    facts=plugins.StudyFacts(order=3, section=SECTION, minutes=0.8),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
