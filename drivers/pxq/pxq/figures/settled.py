"""The settled comparisons' figure: one bar per pair, the speedup of a configuration over its
baseline (baseline time over its time) with the verdict's interval as the error bar; an
equivalent pair drawn at 1 with its proved margin as a band; an unsettled pair hatched, its bar
cut where its interval is, and marked "unsettled"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq import figures

COLOURS = {"flat": "#9e9e9e", "hybrid": "#1f77b4", "tiled": "#2ca02c"}


def plot(names: list[str], pairs: list[Any], path: Path, title: str) -> Path:
    """NAMES: the configurations; PAIRS: (base, other, verdict) with pxq.analysis.verdicts.settle verdicts."""
    plt = figures.pyplot()
    from matplotlib.patches import Patch

    shown = [(b, o, v) for b, o, v in pairs if v is not None]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(shown) + 3), 4.8))
    top = 1.0
    for k, (_, o, v) in enumerate(shown):
        mode = names[o].split()[1] if len(names[o].split()) > 1 else "flat"
        colour = COLOURS.get(mode, "#555")
        if v.ratio is None:
            ax.bar(k, 0, color="white")
            ax.annotate("not enough blocks", (k, 0.05), ha="center", fontsize=8)
            continue
        speed, lo, hi = v.speedup()
        hatch = "//" if v.kind == "unsettled" else None
        ax.bar(k, speed, color=colour, hatch=hatch, edgecolor="black" if hatch else colour)
        ax.errorbar(k, speed, yerr=[[speed - lo], [hi - speed]], fmt="none", ecolor="black", capsize=4)
        label = {
            "faster": f"{speed:.2f}x",
            "slower": f"{speed:.2f}x",
            "equivalent": f"= within {100 * (v.margin or 0):.1f}%",
            "unsettled": "unsettled",
        }[v.kind]
        if v.near:  # the order may not hold on a rerun: its interval reaches into the margin
            label += f"\nnear +-{100 * v.near:.0f}%"
        ax.annotate(label, (k, hi), textcoords="offset points", xytext=(0, 4), ha="center", fontsize=8)
        top = max(top, hi)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([f"{names[o]}\nvs {names[b]}" for b, o, _ in shown], fontsize=8)
    ax.set_ylim(0, top * 1.25)
    ax.set_ylabel("speedup over the baseline (baseline time / time)")
    ax.set_title(title, fontsize=10)
    handles = [Patch(color=c, label=m) for m, c in COLOURS.items()]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="unsettled: not data"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.text(
        0.01,
        -0.06,
        "bars: geometric mean of paired ratios; error bars: the interval the verdict was taken on (docs/RESULTS.md)",
        fontsize=7,
    )
    return figures.save(fig, path, 120, bbox_inches="tight")
