"""The placement figure: the traffic matrix between ranks in two orders (block, suggested),
the nodes' squares outlined: what stays inside a square stays on a node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pxq import figures


def plot(
    w: Any, panels: list[tuple[str, list[int], str]], per_node: int, objective: str, path: Path, title: str
) -> Path:
    """W: the rank-by-rank traffic matrix, each direction once (numpy); PANELS: (name, order of
    the ranks, panel title); PER_NODE: slots per node; OBJECTIVE: "bytes" or "messages"."""
    from matplotlib.colors import LogNorm

    plt = figures.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.4), constrained_layout=True)
    n = w.shape[0]
    top = w.max() if w.any() else 1.0
    norm = LogNorm(vmin=max(top * 1e-4, w[w > 0].min() if w.any() else 1.0), vmax=top)
    for ax, (name, order, heading) in zip(axes, panels):
        m = w[np.ix_(order, order)]
        img = ax.imshow(np.where(m > 0, m, np.nan), cmap="viridis", norm=norm, interpolation="nearest")
        for edge in range(0, n + 1, per_node):
            ax.axhline(edge - 0.5, color="tab:red", lw=0.6)
            ax.axvline(edge - 0.5, color="tab:red", lw=0.6)
        ax.set_title(heading, fontsize=9)
        ax.set_xlabel("slot (rank placed there)" if name == "suggested" else "rank = slot")
        ax.set_ylabel("slot")
    bar = fig.colorbar(img, ax=list(axes), shrink=0.8, label=f"{objective} between the two ranks")
    if objective == "bytes":
        from matplotlib.ticker import FuncFormatter, LogLocator

        bar.ax.yaxis.set_major_locator(LogLocator(base=4.0))
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: figures.short_bytes(v)))
        bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    fig.suptitle(title + "; red squares: one node each", fontsize=9)
    return figures.save(fig, path, 120, bbox_inches="tight", pad_inches=0.15)
