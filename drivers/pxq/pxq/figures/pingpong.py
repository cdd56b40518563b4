"""The channel probes' figures: ping-pong latency and bandwidth per channel, and the rank-pair
throughput matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq import figures
from pxq.core.layout import format_bytes

COLOURS = {"intra_cmp": "tab:green", "inter_cmp": "tab:orange", "inter_node": "tab:red"}


def pingpong(rec: dict[str, Any], path: Path) -> Path:
    """Latency and bandwidth against message size, one curve per channel found (min-max bands)."""
    plt = figures.pyplot()

    fig, (lat, bw) = plt.subplots(1, 2, figsize=(11, 4))
    for ch in rec["channels"]:
        colour = COLOURS.get(ch["channel"], "black")
        label = f"{ch['channel']} ({ch['detail']}), ranks {ch['pair'][0]}-{ch['pair'][1]}"
        pts = [p for p in ch["latency"] if p["bytes"] > 0]
        x = [p["bytes"] for p in pts]
        lat.plot(x, [p["median_us"] for p in pts], "o-", markersize=3, color=colour, label=label)
        lat.fill_between(x, [p["min_us"] for p in pts], [p["max_us"] for p in pts], color=colour, alpha=0.2)
        x = [p["bytes"] for p in ch["bandwidth"]]
        bw.plot(x, [p["median_gbs"] for p in ch["bandwidth"]], "o-", markersize=3, color=colour, label=label)
        bw.fill_between(
            x, [p["min_gbs"] for p in ch["bandwidth"]], [p["max_gbs"] for p in ch["bandwidth"]], color=colour, alpha=0.2
        )
    for ax in (lat, bw):
        figures.bytes_axis(ax, "x", every=2)
        ax.set_xlabel("message size (bytes)")
    figures.log_axis(lat, "y")
    lat.set_ylabel("one-way latency (us), median and min-max")
    bw.set_ylabel(f"bandwidth (GB/s), window of {rec['size']['window']}")
    lat.legend(fontsize=7)
    missing = "; ".join(m.split(":")[0] for m in rec.get("missing", []))
    fig.suptitle(
        f"Communication channels: ping-pong latency and bandwidth, layout {rec['driver'].get('layout', '')}"
        + (f" (not found: {missing})" if missing else ""),
        fontsize=10,
    )
    return figures.save(fig, path)


DENSE_RANKS = 64  # up to this many ranks, one cell a pair; past it ranks binned
MAX_CELLS = 128  # cells a side at most once binned


def _binned(pairs: list[tuple[int, int, float]], n: int, per: int) -> Any:
    """The mean GB/s of the timed pairs in each PER x PER block of ranks, masked where none was."""
    import numpy as np

    cells = -(-n // per)
    sums, counts = np.zeros((cells, cells)), np.zeros((cells, cells))
    if pairs:
        a = np.asarray(pairs, dtype=float)
        rows, cols = (a[:, 0] // per).astype(int), (a[:, 1] // per).astype(int)
        np.add.at(sums, (rows, cols), a[:, 2])
        np.add.at(counts, (rows, cols), 1)
    return np.ma.masked_where(counts == 0, sums / np.maximum(counts, 1))


def rankpairs(rec: dict[str, Any], pairs: list[tuple[int, int, float]], nodes: list[int], path: Path) -> Path:
    """The rank x rank throughput matrix as a heatmap: PAIRS (from, to, GB/s) of every timed pair,
    NODES the node of each rank. Up to 64 ranks one cell a pair, pairs on one node outlined, cells
    never timed blank; past it the boundaries between nodes drawn (up to 128 of them) and, past 128
    ranks, ranks binned into at most 128 cells a side (each the mean of the pairs timed in it)."""
    plt = figures.pyplot()

    n = len(nodes)
    dense = n <= DENSE_RANKS
    per = 1 if dense else -(-n // MAX_CELLS)
    m = _binned(pairs, n, per)
    side = 0.45 * n if dense else 7.0
    fig, ax = plt.subplots(figsize=(max(4.5, side + 2.5), max(4, side + 1.5)))
    span = m.shape[0] * per
    ax.set_facecolor("0.9")  # the cells never timed
    im = ax.imshow(m, cmap="viridis", extent=(-0.5, span - 0.5, span - 0.5, -0.5), interpolation="nearest")
    fig.colorbar(im, ax=ax, label="GB/s" + (f" (mean of the pairs timed in {per} x {per} ranks)" if per > 1 else ""))
    if dense:
        for i, j, v in pairs:
            if nodes[i] == nodes[j]:  # on-node pairs outlined
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=1.5))
            if n <= 12:
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=7, color="white")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
    else:
        edges = [r - 0.5 for r in range(1, n) if nodes[r] != nodes[r - 1]]
        for e in edges if len(edges) < MAX_CELLS else []:
            ax.axhline(e, color="0.35", lw=0.6)
            ax.axvline(e, color="0.35", lw=0.6)
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    timed = len(pairs)
    sample = f", a sample of {timed:,} of {n * (n - 1):,} ordered pairs" if timed < n * (n - 1) else ""
    outline = "white outline: same node" if dense else "dark lines: node boundaries"
    ax.set_title(
        f"Rank pairs: throughput of {format_bytes(rec['size']['rankpairs_bytes'])} sends, layout "
        f"{rec.get('driver', {}).get('layout', '')}{sample}\n({outline}; grey: not timed)",
        fontsize=9,
    )
    return figures.save(fig, path)
