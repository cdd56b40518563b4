"""The collective probe's figure: call times in order (slowest rank per call) and their
histogram, the clusters marked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq import figures
from pxq.core.layout import format_bytes


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Call times in order (slowest rank per call) and their histogram, clusters marked."""
    plt = figures.pyplot()
    import numpy as np

    us = np.array(rec["samples"]["slowest_rank"]) * 1e6
    stats = rec["stats"]
    fig, (ts, hist) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [2, 1]})
    ts.plot(np.arange(len(us)), us, ".", markersize=2)
    for name, colour in (("median", "green"), ("p99", "red")):
        ts.axhline(
            stats[name] * 1e6, color=colour, linestyle="--", linewidth=0.8, label=f"{name} {stats[name] * 1e6:.1f} us"
        )
    figures.log_axis(ts, "y")
    ts.set_xlabel("call")
    ts.set_ylabel("us (slowest rank)")
    ts.legend(fontsize=7)
    bins = np.logspace(np.log10(us.min()), np.log10(us.max() * 1.0001), 60)
    hist.hist(us, bins=bins)
    for c in stats["clusters"]:
        hist.axvline(c["centre"] * 1e6, color="black", linewidth=0.8)
    figures.log_axis(hist, "x")
    figures.log_axis(hist, "y")
    hist.set_xlabel("call time (us)")
    hist.set_ylabel("calls")
    size = rec["size"]
    noise = rec.get("driver", {}).get("noise")
    title = (
        f"Collective variability: MPI {size['op']}"
        + (f" {format_bytes(size['bytes'])}" if size["op"] != "barrier" else "")
        + f", {size['calls']} calls, layout {rec['driver'].get('layout', '')}"
        + (f", noise {noise['mode']} on cores {noise['cores']} at {noise['intensity']}" if noise else ", no noise")
    )
    fig.suptitle(title, fontsize=10)
    return figures.save(fig, path)
