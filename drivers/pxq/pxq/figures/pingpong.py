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


def rankpairs(rec: dict[str, Any], on_node: list[list[bool]], path: Path) -> Path:
    """The rank x rank throughput matrix as a heatmap; ON_NODE[i][j]: the pair shares a node (outlined)."""
    plt = figures.pyplot()
    import numpy as np

    m = np.array(rec["matrix_gbs"], dtype=float)
    n = len(m)
    masked = np.ma.masked_where(np.eye(n, dtype=bool), m)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.45 * n + 2.5), max(4, 0.45 * n + 1.5)))
    im = ax.imshow(masked, cmap="viridis")
    fig.colorbar(im, ax=ax, label="GB/s")
    for i in range(n):
        for j in range(n):
            if i != j and on_node[i][j]:  # on-node pairs outlined
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=1.5))
            if n <= 12 and i != j:
                ax.text(j, i, f"{m[i][j]:.1f}", ha="center", va="center", fontsize=7, color="white")
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_title(
        f"Rank pairs: throughput of {format_bytes(rec['size']['rankpairs_bytes'])} sends, layout "
        f"{rec.get('driver', {}).get('layout', '')}\n(white outline: same node)",
        fontsize=9,
    )
    return figures.save(fig, path)
