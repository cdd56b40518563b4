"""The roofline figure: log-log, attainable GFlop/s of one node against flops per byte from
memory; the peak and each bandwidth roof drawn for 1 core and for every core busy (labelled
with the cores sharing it); the lower flop ceilings of the access kinds whose rate is a flop
rate (a 27-point stencil's, an FFT's: dashed, every core busy, in cache and from memory); one
marker per variant, one colour per app; arrows from each untiled point to its tiled twin and
from flat to hybrid."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.core.layout import format_bytes
from pxq.machine.ceilings import at, kinds, roofs

LABEL_BOX = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}  # over lines
MARKERS = {"flat": "o", "hybrid": "s", "tiled": "^"}
KIND_COLOURS = {"stencil": "tab:olive", "restrict": "tab:pink", "interp": "tab:orange", "fft": "tab:cyan"}
ROOF_COLOURS = {"memory": "tab:red", "L1": "tab:grey", "L2": "tab:purple", "L3": "tab:brown"}


def _roofs(ax: Any, c: dict[str, Any], xs: list[float]) -> None:
    n = c["cores"]
    for cores, style in ((n, "-"), (1, ":")):
        peak = at(c["peak_gflops"], cores)
        ax.axhline(peak, color="black", linestyle=style, linewidth=0.9)
        ax.annotate(  # at the right, where no bandwidth roof's label is
            f"peak, {cores} core(s): {peak:.0f} GFlop/s",
            (xs[-1], peak),
            textcoords="offset points",
            xytext=(-2, 3),
            ha="right",
            fontsize=7,
        )
        drawn = roofs(c, cores)
        for name, bw in drawn:
            x_top = peak / bw
            line_x = [x for x in xs if x < x_top] + [x_top]
            ax.plot(line_x, [min(peak, bw * x) for x in line_x], style, color=ROOF_COLOURS.get(name, "tab:olive"))
        for names, bws in _label_groups(drawn):
            if cores == n or "memory" in names:
                said = ", ".join(f"{nm} {b:.0f}" for nm, b in zip(names, bws))
                ax.annotate(
                    f"{said} GB/s ({cores} core(s))",
                    (xs[0], min(peak, max(bws) * xs[0])),
                    textcoords="offset points",
                    xytext=(2, 3) if cores == n else (2, -10),  # one core's memory roof: below its line
                    fontsize=7,
                    color=ROOF_COLOURS.get(names[0], "tab:olive"),
                    bbox=LABEL_BOX,
                    rotation=0,
                )


LABEL_APART = 1.25  # roofs closer than this share one label (their lines all but coincide)


def _label_groups(drawn: list[tuple[str, float]]) -> list[tuple[list[str], list[float]]]:
    """The roofs' labels: roofs within LABEL_APART of a neighbour share one ("L2 349, L3 337"),
    so two lines drawn on top of each other do not get two labels on top of each other."""
    groups: list[tuple[list[str], list[float]]] = []
    for name, bw in sorted(drawn, key=lambda r: -r[1]):
        if groups and min(groups[-1][1]) / bw < LABEL_APART:
            groups[-1][0].append(name)
            groups[-1][1].append(bw)
        else:
            groups.append(([name], [bw]))
    return groups


def _kinds_drawn(pts: list[dict[str, Any]]) -> set[str]:
    """The access kinds whose ceiling bounds a phase of a drawn point ("stencil (memory)")."""
    return {name.split(" (")[0] for p in pts for ph in p["phases"].values() for name in ph["times"]} & set(kinds())


def _kind_ceilings(ax: Any, c: dict[str, Any], drawn: set[str]) -> list[tuple[float, str, str]]:
    """The ceiling of each flop-rate kind a drawn phase has, with every core busy, at its
    smallest and largest measured size per core (in cache, from memory); their labels (rate,
    text, colour) for _right_labels, placed once the axes' limits are known."""
    n = c["cores"]
    labels = []
    for kind, spec in kinds().items():
        curve = (c.get("kinds") or {}).get(kind)
        if not (curve and spec["unit"] == "gflops" and kind in drawn):
            continue
        colour = KIND_COLOURS.get(kind, "tab:olive")
        for end, style in ((0, (0, (6, 3))), (-1, (0, (2, 2)))):  # in cache, from memory
            rate = at(curve[end]["rate"], n)
            ax.axhline(rate, color=colour, linestyle=style, linewidth=0.9)
            size = format_bytes(curve[end]["bytes"])
            labels.append((rate, f"{kind}, {size} per core, {n} core(s): {rate:.0f} GFlop/s", colour))
    return labels


LABEL_POINTS = 9.0  # a 7-point label's height with its gap, in points


def _right_labels(ax: Any, labels: list[tuple[float, str, str]], x: float) -> None:
    """Labels of horizontal lines at the right edge, from the highest line down: each above its
    line unless that overlaps a label placed already, then below it, so lines a few percent
    apart (or two lines' labels on either side of a third) do not write over each other."""
    ax.get_ylim()  # autoscale now: the data-to-display transform below needs the final limits
    to_points = 72.0 / ax.figure.dpi
    taken: list[tuple[float, float]] = []
    for rate, text, colour in sorted(labels, reverse=True):
        y = ax.transData.transform((x, rate))[1] * to_points
        above, below = (y + 2.0, y + 2.0 + LABEL_POINTS), (y - 1.0 - LABEL_POINTS, y - 1.0)
        free = [span for span in (above, below) if all(span[1] <= lo or span[0] >= hi for lo, hi in taken)]
        span = free[0] if free else above
        taken.append(span)
        ax.annotate(
            text,
            (x, rate),
            textcoords="offset points",
            xytext=(-2, 3) if span is above else (-2, -9),
            ha="right",
            fontsize=7,
            color=colour,
            bbox=LABEL_BOX,
        )


def _arrows(ax: Any, pts: list[dict[str, Any]], place: dict[int, tuple[float, float]]) -> None:
    def twin(p: dict[str, Any], mode: str) -> dict[str, Any] | None:
        for q in pts:
            same = (q["app"], q["size"], q["backend"]) == (p["app"], p["size"], p["backend"])
            if same and q["mode"] == mode and q is not p:
                if mode == "tiled" and q["layout"] == p["layout"]:
                    return q
                if mode == "hybrid" and q["layout"].split("x")[0] == p["layout"].split("x")[0]:
                    return q
        return None

    for p in pts:
        if p["mode"] != "flat":
            continue
        for mode, colour in (("tiled", "tab:green"), ("hybrid", "tab:blue")):
            q = twin(p, mode)
            if q is not None and id(p) in place and id(q) in place:
                ax.annotate(
                    "",
                    place[id(q)],
                    place[id(p)],
                    arrowprops={"arrowstyle": "->", "color": colour, "linewidth": 0.8, "alpha": 0.8},
                )


def drawable(p: dict[str, Any]) -> bool:
    """Whether a point has a place on the flop-rate roofline: flops, and bytes from memory."""
    return math.isfinite(p["intensity"]) and p["gflops"] > 0


def plot(pts: list[dict[str, Any]], c: dict[str, Any], path: Path) -> Path:
    plt = figures.pyplot()
    fig, ax = plt.subplots(figsize=(10.5, 6))
    finite = [p for p in pts if drawable(p)]
    xs_data = [p["intensity"] for p in finite] or [0.1, 10.0]
    lo, hi = min(xs_data) / 4, max(xs_data) * 4
    xs = [lo * (hi / lo) ** (i / 60) for i in range(61)]
    _roofs(ax, c, xs)
    kind_labels = _kind_ceilings(ax, c, _kinds_drawn(finite))
    apps = sorted({p["app"] for p in finite})
    colours = {a: f"C{i}" for i, a in enumerate(apps)}
    place: dict[int, tuple[float, float]] = {}
    for p in finite:
        # Node GFlop/s over the declared phases: every rank's flops over the slowest rank's time.
        xy = (p["intensity"], p["gflops"])
        place[id(p)] = xy
        ax.plot(
            *xy, MARKERS.get(p["mode"], "x"), color=colours[p["app"]], markersize=7, markeredgecolor="black", zorder=4
        )  # over the labels' white ground
    _arrows(ax, finite, place)
    figures.log_axis(ax, "x")
    figures.log_axis(ax, "y")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (flops per byte from memory, as the model places each run)")
    ax.set_ylabel("attained GFlop/s (declared flops over the declared phases' time, all ranks)")
    ax.set_title(f"Roofline of {c['cpu_model']}: solid roofs with all {c['cores']} cores busy, dotted with one")
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=colours[a], label=a) for a in apps]
    handles += [
        plt.Line2D([], [], marker=m, linestyle="", color="white", markeredgecolor="black", label=mode)
        for mode, m in MARKERS.items()
    ]
    handles += [
        plt.Line2D([], [], color="tab:green", label="untiled -> tiled"),
        plt.Line2D([], [], color="tab:blue", label="flat -> hybrid"),
    ]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the labels
    left_out = sorted({p["app"] for p in pts if p not in finite})
    if left_out:
        fig.text(
            0.01,
            0.005,
            f"not drawn: {', '.join(left_out)} (no flops, or no bytes from memory: all in cache); "
            "the table of `pxq roofline` has them",
            fontsize=8,
            va="bottom",
        )
    fig.tight_layout()  # the final geometry first: the labels' spacing is reckoned in points on it
    _right_labels(ax, kind_labels, xs[-1])
    return figures.save(fig, path)
