"""The memory probes' figures: the stride probe (time per access by stride and size, the cache
steps against hwloc's sizes, contention ratios, the block variant) and the bandwidth probe
(STREAM kernels against active cores, as ranks and as threads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq import figures
from pxq.core.layout import format_bytes


def _alone_and_together(ax: Any, points: list[dict[str, Any]], key: str, copies: int, label: str) -> None:
    """A curve by size for one copy alone and, with several copies, their mean at once."""
    sizes = [p["bytes"] for p in points]
    ax.plot(sizes, [p[key] for p in points], "o-", markersize=3, label="alone")
    if copies > 1:
        together = [sum(p[f"{key}_copies"]) / len(p[f"{key}_copies"]) for p in points]
        ax.plot(sizes, together, "s--", markersize=3, label=label)


def _cache_lines(ax: Any, det: dict[str, Any], labelled: bool = False) -> None:
    """hwloc's cache sizes as dotted lines on a panel of sizes (named when `labelled`)."""
    for cache in det["caches"]:
        if cache["bytes"]:
            ax.axvline(cache["bytes"], color="red", linestyle=":", linewidth=1)
            if labelled:
                label = f" {cache['level']} (hwloc)"
                ax.text(cache["bytes"], ax.get_ylim()[1], label, color="red", fontsize=7, va="top", rotation=90)


def _plot_blocks(ax: Any, rec: dict[str, Any], copies: int) -> None:
    """The block variant's panel: GB/s by block size, alone and with every copy."""
    det = rec["detection"]
    _alone_and_together(ax, rec["blocks"], "gbs", copies, f"per copy, {copies} at once")
    _cache_lines(ax, det)
    figures.bytes_axis(ax, "x", every=2)
    ax.set_xlabel("block (bytes)")
    ax.set_ylabel("GB/s (read + write)")
    ax.set_title("block variant", fontsize=9)
    ax.legend(fontsize=7)


def _plot_contention(ax: Any, row: list[dict[str, Any]], det: dict[str, Any], copies: int) -> None:
    """Time per access with every copy running over time alone, by array size: where the
    shared caches and memory bus make the copies wait on each other."""
    sizes = [p["bytes"] for p in row]
    ax.plot(sizes, [p["contention"] for p in row], "o-", markersize=3, color="tab:red", label=f"{copies} copies")
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    _cache_lines(ax, det)
    figures.bytes_axis(ax, "x", every=2)
    ax.set_xlabel("array (bytes)")
    ax.set_ylabel("time together / time alone")
    ax.set_title(f"contention ratio at stride {det['stride']} B", fontsize=9)
    ax.legend(fontsize=7)


def stride(rec: dict[str, Any], path: Path) -> Path:
    """Time per access against stride (one line per array size), the detection stride's curve
    over sizes with hwloc's caches and the steps, contention ratios and the block variant."""
    plt = figures.pyplot()

    pts = rec["points"]
    sizes = sorted({p["bytes"] for p in pts})
    det = rec["detection"]
    copies = rec["size"]["copies"]
    panels = 2 + bool(rec["blocks"]) + (copies > 1)
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2))
    cmap = plt.get_cmap("viridis")
    ax = axes[0]
    for i, size in enumerate(sizes):
        row = sorted((p for p in pts if p["bytes"] == size), key=lambda p: p["stride"])
        ax.plot(
            [p["stride"] for p in row],
            [p["ns"] for p in row],
            "-",
            color=cmap(i / max(1, len(sizes) - 1)),
            linewidth=1,
            label=format_bytes(size) if i % max(1, len(sizes) // 8) == 0 else None,
        )
    figures.bytes_axis(ax, "x", every=2)
    figures.log_axis(ax, "y")
    ax.set_xlabel("stride (bytes)")
    ax.set_ylabel("ns per read+write access")
    ax.set_title("time per access by stride, one line per array size", fontsize=9)
    ax.legend(fontsize=6, title="array", title_fontsize=7)

    ax = axes[1]
    row = sorted((p for p in pts if p["stride"] == det["stride"]), key=lambda p: p["bytes"])
    _alone_and_together(ax, row, "ns", copies, f"{copies} copies at once")
    _cache_lines(ax, det, labelled=True)
    for step in det["steps"]:
        ax.axvspan(step["fits"], step["spills"], color="orange", alpha=0.25)
    figures.bytes_axis(ax, "x", every=2)
    ax.set_xlabel("array (bytes); shaded: detected steps")
    ax.set_ylabel(f"ns per access at stride {det['stride']} B")
    ax.set_title("cache steps against hwloc's sizes", fontsize=9)
    ax.legend(fontsize=7)

    if copies > 1:
        _plot_contention(axes[2], row, det, copies)
    if rec["blocks"]:
        _plot_blocks(axes[-1], rec, copies)
    place = rec["placement"]
    cpus = [str(c) for c in place["cpus"]] if isinstance(place["cpus"], list) else [str(place["cpus"])]
    where = f"core {cpus[0]}" if len(cpus) == 1 else "cores " + ", ".join(cpus[:-1]) + f" and {cpus[-1]}"
    fig.suptitle(
        f"Memory hierarchy and contention (stride probe): {copies} cop{'y' if copies == 1 else 'ies'} "
        f"on {where} ({place['mode']}), {rec['context'].get('cpu_model', '')}",
        fontsize=10,
    )
    return figures.save(fig, path)


def bandwidth(recs: list[dict[str, Any]], kernels: tuple[str, ...], path: Path) -> Path:
    """Total and per-core GB/s against active cores, per kernel, ranks solid and threads dashed."""
    plt = figures.pyplot()

    fig, (tot, per) = plt.subplots(1, 2, figsize=(10, 4))
    colours = dict(zip(kernels, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")))
    for rec in recs:
        style = "-o" if rec["size"]["as"] == "ranks" else "--s"
        for k in rec["kernels"]:
            cores = [r["cores"] for r in k["rows"]]
            tot.plot(
                cores,
                [r["total_gbs"] for r in k["rows"]],
                style,
                color=colours[k["kernel"]],
                markersize=4,
                label=f"{k['kernel']} ({rec['size']['as']})",
            )
            per.plot(cores, [r["per_core_gbs"] for r in k["rows"]], style, color=colours[k["kernel"]], markersize=4)
    for ax, label in ((tot, "total GB/s"), (per, "GB/s per core")):
        ax.set_xlabel("active cores")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.xaxis.get_major_locator().set_params(integer=True)
    tot.legend(fontsize=7, ncol=2)
    fig.suptitle("Memory bandwidth scaling: STREAM kernels as ranks (solid) and threads (dashed)", fontsize=10)
    return figures.save(fig, path)
