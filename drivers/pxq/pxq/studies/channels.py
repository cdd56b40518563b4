"""`pxq study channels`: latency and bandwidth of each channel (intra-CMP, inter-CMP,
inter-node) from the ping-pong probe, beside Chai et al.'s 0.42/0.89/2.83 us and
6684/1258/1532 MB/s."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.core import plugins, records
from pxq.core.layout import parse_layout
from pxq.experiments.studykit import Context, Outcome, appended, count
from pxq.probes import chanprobe

SECTION = "channels"
CHANNELS = ("intra_cmp", "inter_cmp", "inter_node")
TEXT = {"intra_cmp": "intra-CMP", "inter_cmp": "inter-CMP", "inter_node": "inter-node"}
SMALL = 8  # bytes: the small-message latency compared with the paper's


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", type=float, help="iteration counts x this (default 0.2 quick, 1 full)")
    p.add_argument("--max", help="largest message (default 4M)")


def _probe(ctx: Context, layout: str, opts: dict[str, Any]) -> dict[str, Any] | None:
    spec = ctx.spec("probe", layout=parse_layout(layout))
    before = count(spec.results)
    chanprobe.run_pingpong(
        ctx.console, spec, ctx.aux(f"pingpong-{layout}", ".png"), "0", opts["max"], 64, opts["scale"], False
    )
    return appended(spec.results, before, "probe-pingpong")


def _rows(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per channel found (the first layout that offered it)."""
    rows: dict[str, dict[str, Any]] = {}
    for rec in recs:
        for ch in rec.get("channels", []):
            if ch["channel"] in rows or not ch["latency"]:
                continue
            lat = {p["bytes"]: p["median_us"] for p in ch["latency"]}
            rows[ch["channel"]] = {
                "channel": ch["channel"],
                "detail": ch.get("detail", ""),
                "latency_us": [[p["bytes"], p["median_us"]] for p in ch["latency"]],
                "bandwidth_MBps": [[p["bytes"], 1000 * p["median_gbs"]] for p in ch["bandwidth"]],
                "small_us": lat.get(SMALL, lat[min(lat)]),
                "medium_us": lat.get(65536),
                "peak_MBps": max((1000 * p["median_gbs"] for p in ch["bandwidth"]), default=0.0),
            }
    return [rows[c] for c in CHANNELS if c in rows]


def _link_limits(cluster: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """Why a cluster of this machine cannot stand for a network's latency, and for its bandwidth
    (None where it can): latency needs the kernel's netem, bandwidth a shaped link."""
    if not cluster:
        return None, None
    where = f"the inter-node channel crosses cluster {cluster['name']}'s {cluster['link']['name']} link"
    latency = None
    if not any("latency" in e for e in cluster.get("emulated", [])):
        latency = f"{where}, whose latency is this machine's TCP's (no netem here), not a network's"
    bandwidth = None if cluster["link"].get("bytes_per_s") else f"{where}, unshaped: this machine's copy speed"
    return latency, bandwidth


def _findings(
    rows: list[dict[str, Any]], paper: dict[str, Any], virtual: bool, cluster: dict[str, Any] | None = None
) -> list[Finding]:
    """Each part from the channels measured: intra-CMP against each other channel at 8 B, and
    inter-CMP against inter-node peak bandwidth; a network that is loopback TCP between
    virtual nodes of one host stands in for none, and a cluster of this machine's link only for
    what it emulates (its bandwidth when shaped, its latency where netem adds it)."""
    by = {r["channel"]: r for r in rows}
    out = []
    loopback = "the inter-node channel here is TCP over loopback between virtual nodes of one host, not a network"
    no_latency, no_bandwidth = _link_limits(cluster)
    for other, name in (("inter_cmp", "vs_inter_cmp"), ("inter_node", "vs_inter_node")):
        ref = f"{SECTION}/small/{name}"
        if "intra_cmp" not in by:
            out.append(findings.untestable(ref, "no intra-CMP pair measured (needs two cores of one chip)"))
            continue
        if other not in by:
            why = "one package: no inter-CMP channel" if other == "inter_cmp" else "no inter-node pair measured"
            out.append(findings.untestable(ref, why))
            continue
        ratio = by[other]["small_us"] / by["intra_cmp"]["small_us"]
        here = f"{TEXT[other]} {ratio:.1f}x intra-CMP at {SMALL} B"
        if other == "inter_node" and (virtual or no_latency):
            out.append(findings.untestable(ref, loopback if virtual else (no_latency or loopback), here))
            continue
        out.append(findings.held(ref, here, ratio >= 1.5, "less than 1.5x"))
    ref = f"{SECTION}/large/bandwidth"
    if "inter_cmp" not in by:
        out.append(findings.untestable(ref, "one package, so intra- and inter-CMP are the same channel"))
    elif "inter_node" not in by or virtual or no_bandwidth:
        out.append(findings.untestable(ref, no_bandwidth or loopback))
    else:
        a, b = by["inter_cmp"]["peak_MBps"], by["inter_node"]["peak_MBps"]
        over = f" (over the {cluster['link']['name']} link)" if cluster else ""
        out.append(findings.held(ref, f"{a:.0f} against {b:.0f} MB/s{over}", a < b, "inter-CMP is not the slower"))
    return out


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    cores = ctx.base.cores
    layouts = [f"1x{min(cores, 4)}" if cores >= 2 else None, "2x1"]
    recs = [r for r in (_probe(ctx, lay, opts) for lay in layouts if lay) if r is not None]
    rows = _rows(recs)
    paper = findings.section(SECTION)
    virtual = any(r.get("layout", {}).get("virtual_nodes") for r in recs)
    cluster = next((r["driver"]["cluster"] for r in recs if (r.get("driver") or {}).get("cluster")), None)
    comparison = []
    for r in rows:
        c = r["channel"]
        comparison.append(
            Comparison(
                f"{TEXT[c]} latency ({SMALL} B)", f"{paper['latency_us_small'][c]} us", f"{r['small_us']:.2f} us"
            )
        )
        comparison.append(
            Comparison(
                f"{TEXT[c]} peak bandwidth",
                f"{paper['peak_bandwidth_MBps'][c]} MB/s",
                f"{r['peak_MBps']:.0f} MB/s",
                r["detail"],
            )
        )
    missing = [TEXT[c] for c in CHANNELS if c not in {r["channel"] for r in rows}]
    notes = [f"not measured here: {', '.join(missing)}"] if missing else []
    return Outcome(
        "Channels: latency and bandwidth per channel",
        rows,
        comparison,
        _findings(rows, paper, virtual, cluster),
        recs,
        notes,
        {"paper": paper},
        code=None if recs else records.EXIT_RUN_FAILED,
    )


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Latency and bandwidth by message size per channel, the paper's figures as dashed lines."""
    plt = figures.pyplot()
    colours = {"intra_cmp": "tab:green", "inter_cmp": "tab:orange", "inter_node": "tab:red"}
    fig, (ax_l, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    paper = rec.get("data", {}).get("paper", {})
    for r in rec["rows"]:
        c = r["channel"]
        sizes = [max(b, 1) for b, _ in r["latency_us"]]
        ax_l.plot(sizes, [u for _, u in r["latency_us"]], "o-", ms=3, color=colours[c], label=f"{TEXT[c]} here")
        if r["bandwidth_MBps"]:
            ax_b.plot(*zip(*r["bandwidth_MBps"]), "o-", ms=3, color=colours[c], label=f"{TEXT[c]} here")
    for c in CHANNELS:
        if paper:
            ax_l.axhline(paper["latency_us_small"][c], color=colours[c], ls="--", lw=0.8, label=f"{TEXT[c]} paper")
            ax_b.axhline(paper["peak_bandwidth_MBps"][c], color=colours[c], ls="--", lw=0.8, label=f"{TEXT[c]} paper")
    for ax, ylabel in ((ax_l, "latency (us, median)"), (ax_b, "bandwidth (MB/s, MB = 10^6 B)")):
        figures.bytes_axis(ax, "x", every=2)
        figures.log_axis(ax, "y")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
    fig.suptitle(f"{rec['title']} (dashed: {rec.get('source', 'the paper')})", fontsize=10)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"scale": 0.2 if quick else 1.0, "max": "4M"}


PLUGIN = plugins.Study(
    help="latency and bandwidth per channel (intra-CMP, inter-CMP, inter-node) beside the paper's",
    facts=plugins.StudyFacts(order=0, section=SECTION, minutes=0.1),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
