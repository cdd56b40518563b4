"""`pxq study rankpairs`: the throughput of every ordered rank pair sending one large buffer,
pairs on one node against pairs on two nodes, beside Simon and McGalliard's map of the Midnight
cluster (an on-node ridge about 30% faster; 1000-1400 MB/s at 16 cores down to 480-680 at 128)."""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.core import bounds, plugins, records
from pxq.core.errors import InputError
from pxq.core.layout import parse_bytes, parse_layout
from pxq.experiments.studykit import Context, Outcome, appended, count
from pxq.machine import envinfo
from pxq.probes import chanprobe

SECTION = "rank_pair_throughput"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", help="bytes per send (default 16M quick, 512M full; the paper's 500 MB)")
    p.add_argument("--repeat", type=int, help="sends per pair, the median kept (default 3 quick, 5 full)")


def layouts(cores: int) -> list[str]:
    """One map with on- and off-node pairs where the cores allow (2 nodes x half the cores),
    else one node's pairs and two nodes' pairs apart."""
    if cores >= 4:
        return [f"2x{cores // 2}"]
    return ["1x2", "2x1"] if cores >= 2 else []


def _probe(ctx: Context, lay: str, opts: dict[str, Any]) -> dict[str, Any] | None:
    before = count(ctx.results)
    base = replace(ctx.base, layout=parse_layout(lay), results=ctx.results)
    chanprobe.run_rankpairs(ctx.console, base, ctx.aux(f"map-{lay}", ".png"), opts["size"], opts["repeat"], False)
    return appended(ctx.results, before, "probe-rankpairs")


def split(recs: list[dict[str, Any]]) -> dict[str, list[float]]:
    """MB/s of the pairs on one node and on two nodes, over every map."""
    out: dict[str, list[float]] = {"on_node": [], "off_node": []}
    for rec in recs:
        for ch, vals in chanprobe.rankpair_channels(rec).items():
            out["off_node" if ch == "inter_node" else "on_node"] += [1000 * v for v in vals]
    return out


def channel_medians(recs: list[dict[str, Any]]) -> dict[str, float]:
    """The median MB/s of the pairs on each channel (intra-CMP, inter-CMP, inter-node), over
    every map: what pxq reproduce sets beside the ping-pong probe's bandwidth per channel."""
    out: dict[str, list[float]] = {}
    for rec in recs:
        for ch, vals in chanprobe.rankpair_channels(rec).items():
            out.setdefault(ch, []).extend(1000 * v for v in vals)
    return {ch: statistics.median(vals) for ch, vals in out.items() if vals}


def parts(pairs: dict[str, list[float]], virtual: bool, ranks: int) -> list[Finding]:
    ref = f"{SECTION}/ridge/ridge"
    on, off = pairs["on_node"], pairs["off_node"]
    out = []
    if not on or not off:
        out.append(findings.untestable(ref, "needs pairs on one node and pairs on two nodes"))
    else:
        ratio = statistics.median(on) / statistics.median(off)
        here = f"on-node {statistics.median(on):.0f} MB/s, off-node {statistics.median(off):.0f} MB/s ({ratio:.2f}x)"
        if virtual:
            why = "the off-node pairs here are TCP over loopback between virtual nodes of one host, not a network"
            out.append(findings.untestable(ref, why, here))
        else:
            noise = max(findings.spread(on), findings.spread(off))
            verdict, why = findings.judge(ratio, noise, min(len(on), len(off)), True, 0.15)
            out.append(findings.part(ref, here, verdict, why or "on-node pairs at least 15% faster"))
    out.append(findings.untestable(f"{SECTION}/scale/halves", f"needs maps at 16 and 128 cores ({ranks} ranks here)"))
    return out


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    parse_bytes(opts["size"])
    bounds.repeat(opts["repeat"])
    lays = layouts(ctx.base.cores if ctx.base.hostfile else envinfo.cores())
    if not lays:
        raise InputError("the rank-pair map needs at least 2 cores")
    recs = [r for r in (_probe(ctx, lay, opts) for lay in lays) if r is not None]
    pairs = split(recs)
    virtual = any((r.get("layout") or {}).get("virtual_nodes") for r in recs)
    band = findings.section(SECTION)["min_max_MBps_by_cores"]
    ranks = max((r["layout"]["ranks"] for r in recs), default=0)
    comparison = [Comparison("bytes per send", "500 MB", opts["size"])]
    comparison += [Comparison(f"min-max at {c} cores", f"{lo}-{hi} MB/s", "-") for c, (lo, hi) in band.items()]
    for name, vals in pairs.items():
        if vals:
            comparison.append(
                Comparison(
                    f"{name.replace('_', '-')} pairs, {ranks} ranks",
                    "about 30% faster on the node" if name == "on_node" else "-",
                    f"{min(vals):.0f}-{max(vals):.0f} MB/s (median {statistics.median(vals):.0f})",
                    "TCP over loopback (virtual nodes)" if name == "off_node" and virtual else "",
                )
            )
    rows = [
        {"pairs": name, "mbps": vals, "median": statistics.median(vals) if vals else None}
        for name, vals in pairs.items()
    ]
    title = f"Rank pairs: {opts['size']} sends between every pair, on {', '.join(lays)}"
    notes = ["virtual nodes: the off-node pairs talk TCP over loopback"] if virtual else []
    return Outcome(
        title,
        rows,
        comparison,
        parts(pairs, virtual, ranks),
        recs,
        notes,
        {"band": band, "layouts": lays, "channels_MBps": channel_medians(recs)},
        None if len(recs) == len(lays) else records.EXIT_RUN_FAILED,
    )


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Each pair's MB/s, on-node and off-node, beside the published min-max band per core count."""
    plt = figures.pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    rows = [r for r in rec["rows"] if r.get("mbps")]
    virtual = any("virtual" in n for n in rec.get("notes", []))
    for i, r in enumerate(rows):
        ax.scatter([i] * len(r["mbps"]), r["mbps"], s=14, color="tab:blue" if r["pairs"] == "on_node" else "tab:red")
        ax.plot([i - 0.25, i + 0.25], [r["median"]] * 2, color="black", lw=1.5)
    band = dict(sorted(rec.get("data", {}).get("band", {}).items(), key=lambda kv: int(kv[0])))
    for k, (lo, hi) in enumerate(band.values()):
        x = len(rows) + k
        ax.bar(x, hi - lo, 0.5, bottom=lo, color="tab:grey", alpha=0.6)
    ax.set_xticks(range(len(rows) + len(band)))
    ax.set_xticklabels(
        [
            f"{r['pairs'].replace('_', '-')}\n(here{', loopback TCP' if r['pairs'] == 'off_node' and virtual else ''})"
            for r in rows
        ]
        + [f"{c} cores\n(paper)" for c in band],
        fontsize=8,
    )
    figures.log_axis(ax, "y")
    lows = [v for r in rows for v in r["mbps"]] + [lo for lo, _ in band.values()]
    highs = [v for r in rows for v in r["mbps"]] + [hi for _, hi in band.values()]
    if lows:
        ax.set_ylim(min(lows) / 1.4, max(highs) * 1.4)
    ax.set_ylabel("throughput per pair (MB/s, MB = 10^6 B)")
    ax.set_xlabel("pairs measured here (dots: each ordered pair; bar: median) and the published min-max band")
    ax.set_title(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"size": "16M" if quick else "512M", "repeat": 3 if quick else 5}


PLUGIN = plugins.Study(
    help="every rank pair's throughput, on-node against off-node pairs, beside the published map's ridge and band",
    facts=plugins.StudyFacts(order=11, section=SECTION, minutes=0.1),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
