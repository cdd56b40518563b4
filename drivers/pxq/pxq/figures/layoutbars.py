"""The contention study's figure: total and compute time per layout and placement over the
qx1 run's, with the interquartile range of the repeats; colour by placement, hatched: compute."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pxq import figures


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Total and compute time per layout and placement over the qx1 run's, with the
    interquartile range of the repeats; colour by placement, hatched: compute."""
    plt = figures.pyplot()
    from matplotlib.patches import Patch

    colours = {"packed": "tab:red", "spread": "tab:blue"}
    fig, ax = plt.subplots(figsize=(1.9 * len(rows) + 2.5, 4.2))
    ref = next((r for r in rows if r["layout"].endswith("x1")), rows[0])
    for i, r in enumerate(rows):
        one_per_node = r["layout"].endswith("x1")
        colour = "tab:grey" if one_per_node else colours.get(r["placement"], "tab:purple")
        compute = [t - c for t, c in zip(r["times"], r["comm"])]
        ref_compute = statistics.median([t - c for t, c in zip(ref["times"], ref["comm"])])
        for offset, values, base, hatch in (
            (-0.2, r["times"], statistics.median(ref["times"]), None),
            (0.2, compute, ref_compute, "//"),
        ):
            if base <= 0:
                continue
            height = statistics.median(values) / base
            lo, hi = (q / base for q in _quartiles(values))
            ax.bar(i + offset, height, width=0.38, color=colour, hatch=hatch, edgecolor="black", linewidth=0.5)
            ax.errorbar(i + offset, height, yerr=[[height - lo], [hi - height]], color="black", capsize=3)
        if r.get("flags"):
            top = max(_quartiles(r["times"])[1] / statistics.median(ref["times"]), 1.0)
            ax.annotate(
                "(!) implausible:\nsee the notes", (i, top), ha="center", va="bottom", fontsize=7, color="tab:red"
            )
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(
        [f"{r['layout']}\n{'one rank per node' if r['layout'].endswith('x1') else r['placement']}" for r in rows]
    )
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=0.8)
    ax.set_xlabel("layout (nodes x ranks per node) and placement")
    ax.set_ylabel("median time / qx1 median (bars: IQR)")
    ax.legend(
        handles=[
            Patch(facecolor="white", edgecolor="black", label="total"),
            Patch(facecolor="white", edgecolor="black", hatch="//", label="compute (total - exposed comm)"),
            *(Patch(color=c, label=name) for name, c in colours.items()),
            Patch(color="tab:grey", label="one rank per node"),
        ],
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    ax.set_title(title, fontsize=10)
    return figures.save(fig, path)
