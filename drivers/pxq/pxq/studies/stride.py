"""`pxq study stride`: one copy of the stride kernel alone and one per core at once; the ratio
of their times per access by stride on the largest array, beside Simon and McGalliard's
"about 2x for strides of 256 B to 16 KiB"."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from pxq import envinfo, figures, findings, memprobe, records
from pxq.findings import Comparison, Finding
from pxq.studies import Context, Outcome, appended, count

NAME = "stride"
HELP = "the stride kernel alone vs one copy per core: the time ratio by stride beside the paper's 2x"
SECTION = "memory_stride"
MINUTES = 1.5
APPS = False
LOW, HIGH = 256, 16384  # the paper's stride range


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max", help="largest array (default 64M quick, auto full: twice the last-level cache)")
    p.add_argument("--accesses", type=int, help="accesses per point (default 1048576 quick, 4194304 full)")
    p.add_argument("--copies", type=int, help="copies at once (default: every core)")


def defaults(quick: bool) -> dict[str, Any]:
    return {"max": "64M" if quick else "auto", "accesses": 1 << 20 if quick else 1 << 22, "copies": None}


def by_stride(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Per stride, the contention ratio (time together / time alone) on the largest array."""
    out = []
    for stride in sorted({p["stride"] for p in rec["points"]}):
        pts = [p for p in rec["points"] if p["stride"] == stride]
        top = max(pts, key=lambda p: p["bytes"])
        out.append({"stride": stride, "bytes": top["bytes"], "ratio": top["contention"], "ns": top["ns"]})
    return out


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    copies = opts["copies"] or envinfo.cores()
    argv = memprobe.stride_argv(
        "4K",
        opts["max"],
        None,
        opts["accesses"],
        2,
        copies,
        "packed",
        None,
        1,
        True,
        ctx.results,
        {"command": "pxq study stride"},
    )
    before = count(ctx.results)
    code = memprobe.run_stride(ctx.console, argv, ctx.results, ctx.aux("probe", ".png"))
    rec = appended(ctx.results, before, "probe-stride")
    if rec is None:
        return Outcome("Stride", [{"stride": 0}], code=code or records.EXIT_RUN_FAILED)
    rows = by_stride(rec)
    inside = [r["ratio"] for r in rows if LOW <= r["stride"] <= HIGH]
    comparison = [
        Comparison(
            f"stride {r['stride']} B, {r['bytes'] >> 20} MiB array",
            "about 2x" if LOW <= r["stride"] <= HIGH else "smaller",
            f"{r['ratio']:.2f}x",
        )
        for r in rows
    ]
    paper = findings.section(SECTION)["findings"][1]
    if copies < 2:
        found = [Finding(paper, "about 2x", "-", "cannot be tested here", "one core: no second copy")]
    elif not inside:
        found = [Finding(paper, "about 2x", "-", "cannot be tested here", "no stride of 256 B to 16 KiB measured")]
    else:
        med = statistics.median(inside)
        verdict = "reproduced" if med >= 1.5 else "not reproduced"
        why = "" if verdict == "reproduced" else "the copies slow each other less than 1.5x: memory bandwidth to spare"
        found = [Finding(paper, "about 2x", f"median {med:.2f}x over {len(inside)} strides", verdict, why)]
    title = f"Stride: {copies} copies at once over one alone, by stride (largest array)"
    return Outcome(title, rows, comparison, found, [rec], [], {"copies": copies}, 0 if rec["status"] == "ok" else 1)


def plot(rec: dict[str, Any], path: Path) -> Path:
    plt = figures.pyplot()
    rows = rec["rows"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([r["stride"] for r in rows], [r["ratio"] for r in rows], "o-", color="tab:red", label="here")
    ax.axvspan(LOW, HIGH, color="tab:grey", alpha=0.2, label="paper: about 2x in this range")
    ax.axhline(2.0, color="grey", ls="--", lw=0.8)
    ax.axhline(1.0, color="black", lw=0.6)
    figures.bytes_axis(ax, "x", every=2)
    ax.set_xlabel("stride (bytes)")
    ax.set_ylabel("time per access, together / alone")
    ax.legend(fontsize=7)
    ax.set_title(rec["title"], fontsize=9)
    return figures.save(fig, path)
