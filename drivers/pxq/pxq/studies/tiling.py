"""`pxq study tiling`: the ring untiled and with 256 KiB tiles on every layout that fits,
beside Chai et al.'s time reductions (70% for 2 ranks on one chip, 60% for 4 on a node, 50%
on 2 and 4 nodes)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import envinfo, figures, findings
from pxq.errors import InputError
from pxq.findings import Comparison, Finding
from pxq.layout import parse_bytes, parse_layout, parse_tile
from pxq.studies import Context, Outcome, exit_code, group, layout_text, measure

NAME = "tiling"
HELP = "the ring untiled vs 256 KiB tiles on every layout that fits, beside the paper's time reductions"
SECTION = "tiling"
MINUTES = 1.5
APPS = False


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--block", help="bytes per rank (default 64M, the paper's)")
    p.add_argument("--tile", help="tile size (default 256K, the paper's)")
    p.add_argument("--iterations", type=int, help="timed iterations per run (default 4 quick, 10 full)")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


def defaults(quick: bool) -> dict[str, Any]:
    return {"block": "64M", "tile": "256K", "iterations": 4 if quick else 10, "repeat": 5 if quick else 7}


def fitting_layouts(cores: int) -> list[str]:
    """Every PxQ with 2 or more ranks and at most one rank per core, Q a power of two."""
    out = []
    for n in (2, 4, 8, 16):
        q = 1
        while q <= n and n <= cores:
            out.append(f"{n // q}x{q}")
            q *= 2
    return sorted(set(out), key=lambda s: (int(s.split("x")[0]) * int(s.split("x")[1]), s))


def paper_condition(layout: str) -> str:
    """The paper's row a layout compares with."""
    p, q = (int(x) for x in layout.split("x"))
    if p == 1:
        return "2 ranks on one chip" if q == 2 else "4 ranks on one node"
    return "8 ranks on 2 nodes" if p <= 2 else "16 ranks on 4 nodes"


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    parse_bytes(opts["block"])  # bad sizes are refused here, with the binaries' own message
    parse_tile(opts["tile"])
    if opts["iterations"] < 1:
        raise InputError(f"--iterations {opts['iterations']}: use at least 1")
    lays = fitting_layouts(envinfo.cores() if not ctx.base.hostfile else 16)
    ring = ["--block", opts["block"], "--iterations", str(opts["iterations"])]
    configs = [
        ctx.spec("ring", layout=parse_layout(lay), mode=mode, tile=tile, app_args=ring)
        for lay in lays
        for mode, tile in (("flat", None), ("tiled", opts["tile"]))
    ]
    recs, planned = measure(ctx, configs, opts["repeat"], "tiling")
    groups = group(recs, lambda r: (layout_text(r), r["variant"]["mode"]))
    paper = findings.section(SECTION)["time_reduction_percent"]
    rows, comparison, found = [], [], []
    for lay in lays:
        flat, tiled = groups.get((lay, "flat")), groups.get((lay, "tiled"))
        if not flat or not tiled:
            continue
        cut = 1 - tiled["median"] / flat["median"]
        noise = max(flat["spread"], tiled["spread"])
        cond = paper_condition(lay)
        rows.append(
            {
                "layout": lay,
                "untiled": flat["median"],
                "tiled": tiled["median"],
                "reduction": cut,
                "spread": noise,
                "paper_condition": cond,
                "paper_reduction": paper[cond] / 100,
                "untiled_times": flat["times"],
                "tiled_times": tiled["times"],
            }
        )
        comparison.append(
            Comparison(
                f"{lay}: time cut by tiles",
                f"{paper[cond]}% ({cond})",
                f"{100 * cut:.0f}%",
                f"untiled {flat['median']:.3f} s, tiled {tiled['median']:.3f} s, spread {100 * noise:.0f}%",
            )
        )
        ratio = tiled["median"] / flat["median"]
        verdict = findings.effect(ratio, noise, False, paper[cond] / 200)
        why = {
            "reproduced": f"at least half the paper's cut ({paper[cond] / 2:.0f}%)",
            "not reproduced": f"less than half the paper's cut ({paper[cond] / 2:.0f}%)",
            "inconclusive": "within the run-to-run spread",
        }[verdict]
        found.append(
            Finding(f"tiles cut the ring's time, {cond}", f"-{paper[cond]}%", f"{lay}: -{100 * cut:.0f}%", verdict, why)
        )
    title = f"Tiling: the ring, {opts['block']} per rank, untiled vs {opts['tile']} tiles"
    notes = [] if len(lays) >= 2 else ["one layout fits this machine"]
    return Outcome(
        title,
        rows or [{"layout": "-"}],
        comparison,
        found,
        recs,
        notes,
        {"tile": opts["tile"]},
        exit_code(recs, planned),
    )


def plot(rec: dict[str, Any], path: Path) -> Path:
    """The time cut by tiles per layout, with the spread, and the paper's cut beside it."""
    plt = figures.pyplot()
    rows = [r for r in rec["rows"] if "reduction" in r]
    fig, ax = plt.subplots(figsize=(1.6 * max(1, len(rows)) + 3, 4))
    xs = range(len(rows))
    here = [100 * r["reduction"] for r in rows]
    cuts = [[100 * (1 - t / u) for u, t in zip(r["untiled_times"], r["tiled_times"])] for r in rows]
    low = [max(0.0, h - min(c)) for h, c in zip(here, cuts)]
    high = [max(0.0, max(c) - h) for h, c in zip(here, cuts)]
    ax.bar(
        [x - 0.2 for x in xs],
        here,
        0.38,
        color="tab:blue",
        label="here: median, bars: range of paired repeats",
        yerr=[low, high],
        capsize=3,
    )
    ax.bar(
        [x + 0.2 for x in xs],
        [100 * r["paper_reduction"] for r in rows],
        0.38,
        color="tab:grey",
        label=rec.get("source", "paper"),
    )
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r['layout']}\n({r['paper_condition']})" for r in rows], fontsize=8)
    ax.set_xlabel("layout (nodes x ranks per node) and the paper's condition it is compared with")
    ax.set_ylabel("time cut by tiles (%): 1 - tiled / untiled")
    ax.axhline(0, color="black", lw=0.6)
    ax.legend(fontsize=7)
    ax.set_title(rec["title"], fontsize=9)
    return figures.save(fig, path)
