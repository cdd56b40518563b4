"""Figures: one matplotlib set-up (no display needed), one way to write a figure, and the axes
every pxq figure shares: byte sizes as 16K and 1M, counts and times as plain numbers. One module
per figure, each taking plain data: the report's chart (`speedup`), the settled comparisons
(`settled`), the roofline (`roofline`), the tile sweep (`tilesweep`), the message profile
(`channelbars`), the placement matrix (`trafficmap`), the contention study (`layoutbars`), and
the probes' (`pingpong`, `osu`, `memory`, `collective`)."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

from pxq.core import outputs


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def short_bytes(value: float) -> str:
    """16K, 1M, 2G; 512 for small sizes; fractions of a byte (axis padding) as nothing."""
    if value < 1:
        return ""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value >= size:
            n = value / size
            return f"{n:.0f}{unit}" if n == int(n) else f"{n:.1f}{unit}"
    return f"{value:.0f}"


def plain(value: float) -> str:
    """A tick on a log axis of counts or times: 0.01, 1, 100, 1000 (not 10^3)."""
    if value <= 0:
        return ""
    return f"{value:.{max(0, -math.floor(math.log10(value)))}f}" if value < 1 else f"{value:g}"


def bytes_axis(ax: Any, which: str = "x", every: int = 1) -> None:
    """A log-2 axis of byte sizes with a tick every `every` powers of 2, labelled 16K, 1M."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=2)
    axis.set_major_locator(LogLocator(base=2.0**every, numticks=40))
    axis.set_major_formatter(FuncFormatter(lambda v, _: short_bytes(v)))
    axis.set_minor_formatter(NullFormatter())


def log_axis(ax: Any, which: str = "y") -> None:
    """A log-10 axis with plain tick labels."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0), numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: plain(v)))
    axis.set_minor_formatter(NullFormatter())


def thin_ticks(fig: Any, ax: Any, which: str = "x") -> None:
    """Keeps every k-th tick label, the smallest k for which none overlaps its neighbour."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in (ax.get_xticklabels() if which == "x" else ax.get_yticklabels()) if t.get_text()]
    for k in range(1, len(labels) + 1):
        kept = labels[::k]
        boxes = [t.get_window_extent(renderer) for t in kept]
        if all(not a.overlaps(b) for a, b in zip(boxes, boxes[1:])):
            for i, t in enumerate(labels):
                t.set_visible(i % k == 0)
            return


def save(fig: Any, path: Path, dpi: int = 120, **options: Any) -> Path:
    """Lays out, writes (creating the folder; whole, and only over a figure: pxq.core.outputs)
    and closes a figure."""
    if not options:
        fig.tight_layout()
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        kind = outputs.figure_kind(path)
        buf = io.BytesIO()
        fig.savefig(buf, dpi=dpi, format=kind, **options)
        outputs.write(path, buf.getvalue(), kind, "--plot")
    finally:
        pyplot().close(fig)
    return path
