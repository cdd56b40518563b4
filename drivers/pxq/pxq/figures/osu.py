"""The OSU-style probe's figures: one run's latency or bandwidth against message size, or pxq's
run beside an imported OSU run of the same test and layout with their ratio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq import figures


def _figure(row: dict[str, Any]) -> float | None:
    value = row.get("mb_per_s", row.get("latency_us"))
    return float(value) if value is not None else None


def compared(by_source: dict[str, dict[str, Any]], test: str, layout: str | None, path: Path) -> Path:
    """One test on one layout measured by pxq and by others (BY_SOURCE: who measured, the
    record): both lines and, below them, pxq's figure over each other's at every size both
    measured."""
    plt = figures.pyplot()
    fig, (ax, rax) = plt.subplots(2, 1, figsize=(7, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    mine = {r["bytes"]: _figure(r) for r in by_source["pxq"]["osu"]["rows"] if r["bytes"] > 0}
    bandwidth = "mb_per_s" in by_source["pxq"]["osu"]["rows"][0]
    for name, rec in by_source.items():
        rows = [r for r in rec["osu"]["rows"] if r["bytes"] > 0]
        ax.plot([r["bytes"] for r in rows], [_figure(r) for r in rows], "o-", markersize=3, label=name)
        if name == "pxq":
            continue
        ratios = [(r["bytes"], m / o) for r in rows if (m := mine.get(r["bytes"])) and (o := _figure(r))]
        rax.plot([b for b, _ in ratios], [q for _, q in ratios], "o-", markersize=3, label=f"pxq / {name}")
    rax.axhspan(0.9, 1.1, color="tab:green", alpha=0.12, label="within 10%")
    rax.axhline(1.0, color="grey", linewidth=0.8)
    rax.set_ylabel("pxq bandwidth / OSU's" if bandwidth else "pxq latency / OSU's")
    rax.legend(fontsize=7)
    figures.log_axis(ax, "y")
    ax.set_ylabel("bandwidth (MB/s, MB = 10^6 bytes)" if bandwidth else "latency (us)")
    ax.legend(fontsize=7)
    figures.bytes_axis(rax, "x", every=2)
    rax.set_xlabel("message size (bytes)")
    fig.suptitle(f"{test}, layout {layout}: pxq's OSU-style probe and OSU's own", fontsize=10)
    return figures.save(fig, path)


def one(rec: dict[str, Any], path: Path) -> Path:
    """Latency (us, log) or bandwidth (MB/s) against message size; for collectives the band
    between the fastest and the slowest rank."""
    plt = figures.pyplot()
    osu = rec["osu"]
    test, rows = osu["test"], [r for r in osu["rows"] if r["bytes"] > 0 or osu["test"] == "barrier"]
    fig, ax = plt.subplots(figsize=(7, 4))
    layout = rec["driver"].get("layout", "")
    if test == "barrier":
        r = rows[0]
        ax.bar(["avg", "min rank", "max rank"], [r["latency_us"], r["min_us"], r["max_us"]], color="tab:blue")
        ax.set_xlabel("over the ranks")
        ax.set_ylabel("barrier latency (us)")
    else:
        x = [r["bytes"] for r in rows]
        if "mb_per_s" in rows[0]:
            ax.plot(x, [r["mb_per_s"] for r in rows], "o-", markersize=3, label=test)
            figures.log_axis(ax, "y")  # small and large messages are orders of magnitude apart
            ax.set_ylabel("bandwidth (MB/s, MB = 10^6 bytes)")
        else:
            ax.plot(x, [r["latency_us"] for r in rows], "o-", markersize=3, label=f"{test}, average over ranks")
            if "min_us" in rows[0]:
                ax.fill_between(
                    x, [r["min_us"] for r in rows], [r["max_us"] for r in rows], alpha=0.2, label="min-max rank"
                )
            figures.log_axis(ax, "y")
            ax.set_ylabel("latency (us)")
        figures.bytes_axis(ax, "x", every=2)
        ax.set_xlabel("message size (bytes)")
        ax.legend(fontsize=7)
    fig.suptitle(f"OSU-style {test}, layout {layout} ({rec['context']['mpi_library']})", fontsize=10)
    return figures.save(fig, path)
