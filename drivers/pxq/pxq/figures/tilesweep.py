"""The tile sweep's figure: bandwidth versus tile size, one panel per kernel, one line per
thread count (median, with the repetitions' min-max as a band), the L1/L2/L3 sizes marked."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.core.layout import format_bytes


def plot(kernels: list[str], samples: list[Any], caches: dict[str, int], path: Path, title: str) -> Path:
    """KERNELS in panel order; SAMPLES: pxq.analysis.models.tiles samples (kernel, threads, tile, gbs);
    CACHES: the cache sizes in bytes by level name."""
    plt = figures.pyplot()
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(len(kernels), 1, figsize=(8, 2.8 * len(kernels)), squeeze=False)
    for ax, kernel in zip(axes[:, 0], kernels):
        mine = [s for s in samples if s.kernel == kernel]
        for threads in sorted({s.threads for s in mine}):
            by_tile: dict[int, list[float]] = {}
            for s in mine:
                if s.threads == threads:
                    by_tile.setdefault(s.tile, []).append(s.gbs)
            tiles = sorted(by_tile)
            med = [statistics.median(by_tile[t]) for t in tiles]
            ax.plot(tiles, med, marker="o", label=f"{threads} thread{'s' if threads > 1 else ''}")
            ax.fill_between(tiles, [min(by_tile[t]) for t in tiles], [max(by_tile[t]) for t in tiles], alpha=0.2)
        low, high = min(s.tile for s in mine), max(s.tile for s in mine)
        beyond = []
        for name, size in sorted(caches.items(), key=lambda kv: kv[1]):
            if not low / 2 <= size <= high * 2:  # a cache far outside the tiles would squeeze the data
                beyond.append(f"{name.upper()} {format_bytes(size)}")
                continue
            ax.axvline(size, color="grey", linestyle="--", linewidth=0.8)
            ax.annotate(
                f"{name.upper()} {format_bytes(size)}",
                (size, 1.0),
                xycoords=("data", "axes fraction"),
                rotation=90,
                va="top",
                ha="right",
                fontsize=7,
                color="grey",
            )
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(int(round(x))) if x >= 1 else ""))
        ax.set_title(kernel + (f" ({', '.join(beyond)}: beyond the tiles measured)" if beyond else ""), fontsize=10)
        ax.set_ylabel("GB/s")
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("tile (bytes)")
    fig.suptitle(title, fontsize=10)
    return figures.save(fig, path, dpi=110)
