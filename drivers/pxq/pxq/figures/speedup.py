"""The report's chart: speedup over the flat run of the same cores per node, one bar per
configuration, the interquartile range of the repeats as error bars, a legend for the variants'
colours and for what the bars and marks mean. A bar whose figures the report flags (short,
noisy, one run, oversubscribed, started beside other work) is hatched and its flags written
under its value; the axis is fitted to the unflagged bars, and a flagged bar beyond it is cut at
the top and marked with its value."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pxq import figures


def plot(shown: list[Any], labels: list[str], nas_mode: str, path: Path, title: str) -> Path:
    """SHOWN: pxq.analysis.exports.report rows with a speedup (mode, speedup, median, times, flags);
    LABELS: one per row; NAS_MODE: the mode name of imported NAS runs."""
    plt = figures.pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    colors = {"flat": "#9e9e9e", "hybrid": "#1f77b4", "tiled": "#2ca02c"}
    if any(r.mode == nas_mode for r in shown):
        colors[nas_mode] = "#d62728"
    weak = {"short", "noisy", "single", "oversubscribed", "loaded"}
    flagged = [sorted(weak & set(r.flags)) for r in shown]
    spans = []
    for r in shown:
        q1, q3 = (statistics.quantiles(r.times, n=4, method="inclusive") if len(r.times) > 1 else (r.median,) * 3)[::2]
        spans.append((r.speedup * r.median / q3, r.speedup * r.median / q1))  # a slower quartile: a lower speedup
    trusted = [hi for (_, hi), f in zip(spans, flagged) if not f] or [hi for _, hi in spans]
    top = max(1.0, max(trusted)) * 1.3
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(shown) + 3), 4.8))
    _bars(ax, shown, spans, flagged, colors, top)
    ax.set_ylim(0, top * (1.15 if any(flagged) else 1.08))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(shown)), labels, fontsize=8)
    ax.set_xlabel("layout (nodes x ranks per node x threads), variant and tile")
    ax.set_ylabel("speedup vs flat MPI (same cores per node)")
    handles: list[Any] = [Patch(color=c, label="NAS (imported)" if m == nas_mode else m) for m, c in colors.items()]
    handles.append(Line2D([], [], color="black", marker="_", markersize=10, label="error bar: interquartile range"))
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.8, label="1.0 = as fast as flat"))
    if any(flagged):
        handles.append(
            Patch(facecolor="white", edgecolor="black", hatch="//", label="hatched: flagged (the notes say why)")
        )
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(title, fontsize=10)
    figures.thin_ticks(fig, ax, "x")
    return figures.save(fig, path)


def _bars(
    ax: Any,
    shown: list[Any],
    spans: list[tuple[float, float]],
    flagged: list[list[str]],
    colors: dict[str, str],
    top: float,
) -> None:
    """One bar per row: hatched and its flags written under its value when flagged, cut at TOP
    (and marked so) when it would run past the axis, with its interquartile range."""
    for k, (r, (lo, hi), flags) in enumerate(zip(shown, spans, flagged)):
        colour = colors.get(r.mode.split()[0].split("+")[0], "#555")
        height = min(r.speedup, top)
        ax.bar(k, height, color=colour, hatch="//" if flags else None, edgecolor="black" if flags else colour)
        if r.speedup <= top:
            ax.errorbar(k, r.speedup, yerr=[[r.speedup - lo], [min(hi, top) - r.speedup]], color="black", capsize=3)
        text = f"{r.speedup:.2f}x" + ("" if r.speedup <= top else " (cut)") + ("\n" + ", ".join(flags) if flags else "")
        ax.annotate(
            text,
            (k, min(hi, top) if r.speedup <= top else top),
            ha="center",
            va="bottom",
            fontsize=7,
            xytext=(0, 3),
            textcoords="offset points",
        )
