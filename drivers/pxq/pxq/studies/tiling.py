"""`pxq study tiling`: the ring untiled and with 256 KiB tiles on every layout that fits,
beside Chai et al.'s time reductions (70% for 2 ranks on one chip, 60% for 4 on a node, 50%
on 2 and 4 nodes)."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.models import roofline
from pxq.analysis.verdicts import findings, plausible
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.analysis.verdicts.paired import judge_rows
from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.core.layout import format_bytes, format_volume, parse_bytes, parse_layout, parse_tile
from pxq.experiments.studykit import (
    Context,
    Outcome,
    cache_profile,
    exit_code,
    group,
    layout_text,
    measure,
    one_machine,
    time_cut,
)
from pxq.machine import caches, ceilings, envinfo

SECTION = "tiling"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--block",
        help="bytes per rank (default auto: the paper's 64M, grown to twice the measured last cache level when that "
        "holds it)",
    )
    p.add_argument("--tile", help="tile size (default 256K, the paper's)")
    p.add_argument("--iterations", type=int, help="timed iterations per run (default 8 quick, 10 full)")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


CONDITIONS = {
    "2 ranks on one chip": "1x2",
    "4 ranks on one node": "1x4",
    "8 ranks on 2 nodes": "2x4",
    "16 ranks on 4 nodes": "4x4",
}


def choose_block(given: str, last_level: int, ranks: int, memory: int) -> tuple[int, str, bool]:
    """The ring's bytes per rank: the paper's 64 MiB, grown past the measured last level when
    the cache holds it ("auto"), or the size given. Returns the size, the reason, and whether
    the untiled blocks still fit the last level (then tiles have nothing to cut)."""
    if given != "auto":
        size = parse_bytes(given)
        inside = caches.fits(size, last_level, ranks)
        why = f"{format_volume(size)} per rank as given; {ranks} ranks hold {format_volume(size * ranks)}"
        return size, why + (f", inside the measured last level ({format_volume(last_level)})" if inside else ""), inside
    ws = caches.ring_block(last_level, ranks, memory)
    return ws.bytes, ws.why, caches.fits(ws.bytes, last_level, ranks)


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


def _row(
    lay: str,
    flat: dict[str, Any],
    tiled: dict[str, Any],
    mine: list[dict[str, Any]],
    paper: dict[str, Any],
    peak_gbs: float | None,
) -> dict[str, Any]:
    """One layout's untiled and tiled runs (MINE: its records) against the paper's cut."""
    cond = paper_condition(lay)
    return {
        "layout": lay,
        "untiled": flat["median"],
        "tiled": tiled["median"],
        "reduction": 1 - tiled["median"] / flat["median"],
        "spread": max(flat["spread"], tiled["spread"]),
        "paper_condition": cond,
        "paper_reduction": paper[cond] / 100,
        "untiled_times": flat["times"],
        "tiled_times": tiled["times"],
        "untiled_rounds": [list(r) if r else None for r in flat["rounds"]],
        "tiled_rounds": [list(r) if r else None for r in tiled["rounds"]],
        "virtual": any(r["layout"].get("virtual_nodes") for r in mine),
        "one_machine": one_machine(mine),
        "flags": bandwidth_flags(mine, lay, peak_gbs),
    }


def _comparison(row: dict[str, Any], flat: dict[str, Any], tiled: dict[str, Any], paper: dict[str, Any]) -> Comparison:
    cond, lay = row["paper_condition"], row["layout"]
    return Comparison(
        f"{lay}: time cut by tiles",
        f"{paper[cond]}% ({cond}{'' if CONDITIONS[cond] == lay else ', the nearest condition'})",
        f"{100 * row['reduction']:.0f}%",
        f"untiled {flat['median']:.3f} s, tiled {tiled['median']:.3f} s, spread {100 * row['spread']:.0f}%"
        + ("; flagged implausible (see the notes)" if row["flags"] else ""),
    )


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    if opts["block"] != "auto":
        parse_bytes(opts["block"])  # bad sizes are refused here, with the binaries' own message
    parse_tile(opts["tile"])
    if opts["iterations"] < 1:
        raise InputError(f"--iterations {opts['iterations']}: use at least 1")
    lays = fitting_layouts(envinfo.cores() if not ctx.base.hostfile else 16)
    prof = cache_profile(ctx)
    most = max(parse_layout(lay).ranks for lay in lays)
    block, size_why, inside = choose_block(opts["block"], prof["last_level_bytes"], most, caches.available_memory())
    ctx.console.print(f"block: {size_why}", markup=False)
    ring = ["--block", format_bytes(block), "--iterations", str(opts["iterations"])]
    configs = [
        ctx.spec("ring", layout=parse_layout(lay), mode=mode, tile=tile, app_args=ring)
        for lay in lays
        for mode, tile in (("flat", None), ("tiled", opts["tile"]))
    ]
    pairs = [(2 * k, 2 * k + 1) for k in range(len(lays))]  # each layout's tiled run against its untiled one
    paper = findings.section(SECTION)["time_reduction_percent"]
    least = min(paper[paper_condition(lay)] for lay in lays) / 200  # half the paper's smallest cut
    recs, planned = measure(ctx, configs, opts["repeat"], "tiling", pairs=pairs, threshold=least)
    groups = group(recs, lambda r: (layout_text(r), r["variant"]["mode"]))
    rows, comparison = [], []
    for lay in lays:
        flat, tiled = groups.get((lay, "flat")), groups.get((lay, "tiled"))
        if flat and tiled:
            row = _row(lay, flat, tiled, [r for r in recs if layout_text(r) == lay], paper, prof.get("peak_gbs"))
            rows.append(row)
            comparison.append(_comparison(row, flat, tiled, paper))
    found = _parts(rows, prof["last_level_bytes"], block, inside, size_why)
    title = f"Tiling: the ring, {format_volume(block)} per rank, untiled vs {opts['tile']} tiles"
    notes = [f"working set: {size_why}", f"caches: {prof['note']}"]
    notes += [f"implausible: {f}" for r in rows for f in r["flags"]]
    notes += ceiling_notes(recs)
    notes += [] if len(lays) >= 2 else ["one layout fits this machine"]
    return Outcome(
        title,
        rows or [{"layout": "-"}],
        comparison,
        found,
        recs,
        notes,
        {"tile": opts["tile"], "block_bytes": block, "last_level_bytes": prof["last_level_bytes"]},
        exit_code(recs, planned),
    )


def ceiling_notes(recs: list[dict[str, Any]]) -> list[str]:
    """Which ceiling binds the untiled and the tiled ring per layout, from this machine's
    stored ceilings (pxq roofline measures them once); a pointer when none are stored."""
    c = ceilings.load(envinfo.machine())
    if c is None:
        return ["which ceiling binds each variant: `pxq roofline` on these records (it measures this machine once)"]
    pts = {(p["layout"], p["mode"]): p for p in roofline.points(recs, c)}
    out = []
    for (lay, mode), flat in sorted(pts.items()):
        tiled = pts.get((lay, "tiled"))
        if mode != "flat" or tiled is None:
            continue
        out.append(
            f"ceilings, {lay}: untiled bound by {flat['binding']}, tiled by {tiled['binding']} "
            f"({flat['cores']} core(s) busy); predicted cut {1 - tiled['predicted'] / flat['predicted']:.0%}, "
            f"measured {1 - tiled['median'] / flat['median']:.0%} (pxq roofline; docs/ROOFLINE.md)"
        )
    return out


def bandwidth_flags(recs: list[dict[str, Any]], lay: str, peak: float | None) -> list[str]:
    """The ring's effective GB/s above what the layout's cores can move at the measured in-cache
    peak of one core (pxq.machine.caches' block variant) is a timing error, not a result."""
    if not peak:
        return []
    out = []
    for mode in ("flat", "tiled"):
        gbs = [
            r["metrics"]["effective_gbs"]
            for r in recs
            if layout_text(r) == lay
            and r.get("variant", {}).get("mode") == mode
            and (r.get("metrics") or {}).get("effective_gbs")
        ]
        if gbs:
            ranks = parse_layout(lay).ranks
            flag = plausible.bandwidth(f"{lay} {mode} ring", statistics.median(gbs), peak * ranks)
            if flag:
                out.append(flag + f" ({ranks} core(s) at {peak:.0f} GB/s each)")
    return out


def _parts(rows: list[dict[str, Any]], last_level: int, block: int, inside: bool, size_why: str) -> list[Finding]:
    """One part per condition of the paper: measured on the layout of its shape (nodes x ranks
    per node), else why not."""
    paper = findings.section(SECTION)["time_reduction_percent"]
    by = {r["layout"]: r for r in rows}
    out = []
    for cond, lay in CONDITIONS.items():
        ref = f"{SECTION}/ring/{cond}"
        r = by.get(lay)
        if r is None:
            p, q = lay.split("x")
            where = "one node" if p == "1" else f"{p} nodes (--hostfile or a Slurm allocation)"
            out.append(findings.untestable(ref, f"needs {int(p) * int(q)} ranks as {lay} on {where}"))
            continue
        here = f"{lay}: {time_cut(100 * r['reduction'])} (spread {100 * r['spread']:.0f}%)"
        if inside:
            why = f"the untiled blocks fit the measured last level ({format_volume(last_level)}): {size_why}"
            out.append(findings.untestable(ref, why, here))
            continue
        if r.get("virtual") or r.get("one_machine"):
            why = r.get("one_machine") or "virtual nodes of one host share its chip and memory bus"
            out.append(findings.untestable(ref, why, here))
            continue
        tiled = {"times": r["tiled_times"], "rounds": [tuple(x) if x else None for x in r.get("tiled_rounds", [])]}
        flat = {"times": r["untiled_times"], "rounds": [tuple(x) if x else None for x in r.get("untiled_rounds", [])]}
        verdict, why, evidence = judge_rows(tiled, flat, False, paper[cond] / 200)
        n = evidence["repeats"]
        paired = evidence.get("paired")
        if paired:
            cut, lo, hi = (100 * (1 - paired[k]) for k in ("ratio", "hi", "lo"))
            here = f"{lay}: {time_cut(cut)} [{lo:.0f}% to {hi:.0f}%] ({n} paired rounds)"
        if verdict == "reproduced":
            why = f"at least half the paper's cut ({paper[cond] / 2:.0f}%)" + (f"; {why}" if why else "")
        elif verdict == "not reproduced":
            why = (
                f"{why + '; ' if why else ''}"
                f"less than half the paper's cut ({paper[cond] / 2:.0f}%), with untiled blocks of "
                f"{format_volume(block)} per rank, {block * int(lay.split('x')[1]) / max(1, last_level):.1f}x the "
                f"measured last level ({format_volume(last_level)}) per node"
            )
        out.append(
            findings.part(
                ref, here, verdict, why, flags=r.get("flags", []), evidence={**evidence, "spread": r["spread"]}
            )
        )
    return out


def _tick(row: dict[str, Any]) -> str:
    """A layout and the paper's condition beside it: its own, or the nearest (no verdict)."""
    cond = row["paper_condition"]
    if CONDITIONS.get(cond) == row["layout"]:
        return f"{row['layout']}\n({cond})"
    return f"{row['layout']}\n(nearest: {cond};\nshown, no verdict)"


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
    ax.set_xticklabels([_tick(r) for r in rows], fontsize=8)
    ax.set_xlabel("layout (nodes x ranks per node) and the paper's condition it is compared with")
    ax.set_ylabel("time cut by tiles (%): 1 - tiled / untiled")
    ax.axhline(0, color="black", lw=0.6)
    ax.legend(fontsize=7)
    ax.set_title(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"block": "auto", "tile": "256K", "iterations": 8 if quick else 10, "repeat": 5 if quick else 7}


PLUGIN = plugins.Study(
    help="the ring untiled vs 256 KiB tiles on every layout that fits, beside the paper's time reductions",
    facts=plugins.StudyFacts(order=4, section=SECTION, minutes=0.9),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
