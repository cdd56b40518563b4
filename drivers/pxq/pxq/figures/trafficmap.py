"""The placement figure: the traffic matrix between ranks in two orders (block, suggested),
the nodes' squares outlined: what stays inside a square stays on a node. Past 1,024 ranks
neighbouring slots share a pixel, so the figure stays the same size at any rank count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from pxq import figures

PIXELS = 1024  # ranks a side drawn one by one; past it, blocks of ranks share a pixel (their sum)
OUTLINED_NODES = 128  # nodes outlined; more would hide the traffic behind their lines


def _binned(w: Any, order: list[int], n: int) -> tuple[np.ndarray, int]:
    """W (sparse, or dense) with its ranks in ORDER, as a dense image of at most PIXELS a side:
    ranks beside each other in the order summed into one pixel. Returns it and ranks a pixel."""
    c = sparse.coo_matrix(w)
    where = np.empty(n, dtype=np.int64)
    where[np.asarray(order)] = np.arange(n)  # the slot of each rank
    per = -(-n // PIXELS)
    side = -(-n // per)
    img = np.zeros((side, side))
    np.add.at(img, (where[c.row] // per, where[c.col] // per), c.data)
    return img, per


def plot(
    w: Any, panels: list[tuple[str, list[int], str]], per_node: int, objective: str, path: Path, title: str
) -> Path:
    """W: the rank-by-rank traffic matrix, each direction once (scipy sparse or numpy); PANELS:
    (name, order of the ranks, panel title); PER_NODE: slots per node; OBJECTIVE: "bytes" or
    "messages". Past PIXELS ranks, neighbouring slots share a pixel (said in the title); the
    nodes are outlined while a node is a pixel wide and there are at most OUTLINED_NODES."""
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import MaxNLocator

    plt = figures.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.4), constrained_layout=True)
    n = w.shape[0]
    images = [_binned(w, order, n) for _, order, _ in panels]
    top = max(float(img.max()) for img, _ in images) or 1.0
    least = min((float(img[img > 0].min()) for img, _ in images if img.any()), default=1.0)
    norm = LogNorm(vmin=max(top * 1e-4, least), vmax=top)
    outline = per_node >= images[0][1] and n <= OUTLINED_NODES * per_node  # a node a pixel wide at least
    for ax, (name, _order, heading), (m, per) in zip(axes, panels, images):
        span = m.shape[0] * per - 0.5  # the axes count slots, whatever a pixel holds
        img = ax.imshow(
            np.where(m > 0, m, np.nan),
            cmap="viridis",
            norm=norm,
            interpolation="nearest",
            extent=(-0.5, span, span, -0.5),
        )
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if outline:
            for edge in range(0, n + 1, per_node):
                ax.axhline(edge - 0.5, color="tab:red", lw=0.6)
                ax.axvline(edge - 0.5, color="tab:red", lw=0.6)
        ax.set_title(heading + (f" ({per} slots a pixel)" if per > 1 else ""), fontsize=9)
        ax.set_xlabel("slot (rank placed there)" if name == "suggested" else "rank = slot")
        ax.set_ylabel("slot")
    bar = fig.colorbar(img, ax=list(axes), shrink=0.8, label=f"{objective} between the two ranks")
    if objective == "bytes":
        from matplotlib.ticker import FuncFormatter, LogLocator

        bar.ax.yaxis.set_major_locator(LogLocator(base=4.0))
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: figures.short_bytes(v)))
        bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    outlined = "red squares: one node each" if outline else "too many nodes to outline"
    fig.suptitle(f"{title}; {outlined}", fontsize=9)
    return figures.save(fig, path, 120, bbox_inches="tight", pad_inches=0.15)
