"""Lab 4, tile the ring: the student's tiled loop against the harness's untiled one, interleaved,
and a sweep of tile sizes explained by the caches."""

from __future__ import annotations

import statistics
from dataclasses import replace

from rich.table import Table

from pxq.analysis.verdicts import findings, plausible
from pxq.core import plugins
from pxq.core.layout import format_bytes
from pxq.machine import ceilings
from pxq.teaching import harness as labs
from pxq.teaching import prediction

# The sweep: tiles that divide the 32 MiB block and tiles that do not (48K, 3M), so a loop that
# drops the shorter last tile fails verification.
TILES = ("32K", "48K", "256K", "3M", "8M")
# Predicted before the runs (prediction.toml): pxq's own ring doing the lab program's work (its
# 32 MiB block, 8 passes, 4 timed iterations), untiled and at the lab's 256K tile.
PREDICT = prediction.Plan("ring", ("--block", "32M", "--passes", "8", "--iterations", "4"), {"tiled": "256K"}, 32 << 20)


def measure(ctx: labs.Context) -> labs.Outcome:
    layout = f"1x{ctx.cores}"
    untiled = "untiled (the harness's loop)"
    runs = ctx.interleaved(
        [(untiled, {"layout": layout, "args": ["--reference"]}), ("yours", {"layout": layout})],
        settle_on=labs.pairs_of(untiled, "yours", "compute_s"),
    )
    base = [r["compute_s"] for r in runs["untiled (the harness's loop)"]]
    mine = [r["compute_s"] for r in runs["yours"]]
    caches = ctx.machine["caches"]
    sweep = {tile: ctx.run(layout, ["--tile", tile]) for tile in TILES}
    t = Table(title=f"the ring at {layout}: compute time of {runs['yours'][0]['passes']} passes, median of repeats")
    for col in ("loop", "tile", "fits in", "compute s", "GB/s per rank", "largest update"):
        t.add_column(col, justify="left" if col in ("loop", "fits in") else "right")
    for name, results in runs.items():
        s = statistics.median(r["compute_s"] for r in results)
        r0 = results[0]
        tiled = name == "yours"
        t.add_row(
            name,
            format_bytes(r0["tile_bytes"]) if tiled else "-",
            labs.cache_of(r0["tile_bytes"] if tiled else r0["block_bytes"], caches),
            f"{s:.3f}",
            f"{_rate(r0, s):.1f}",
            format_bytes(r0["largest_span_bytes"]),
        )
    for tile, r in sweep.items():
        t.add_row(
            "yours, tile sweep",
            tile,
            labs.cache_of(r["tile_bytes"], caches),
            f"{r['compute_s']:.3f}",
            f"{_rate(r, r['compute_s']):.1f}",
            format_bytes(r["largest_span_bytes"]),
        )
    span, block = runs["yours"][0]["largest_span_bytes"], runs["yours"][0]["block_bytes"]
    starter = span >= block
    if not starter:
        follows_the_tile({"yours": runs["yours"][0], **sweep})
    tiles = _of_tile(span, runs["yours"][0]["tile_bytes"])
    note = (
        f"an update() call covers the whole {format_bytes(block)} block: the loop is not tiled yet (every "
        "pass, the first included, must run tile by tile)"
        if starter
        else f"each update() call covers at most {format_bytes(span)} ({tiles}): the loop is tiled"
    )
    ratio, noise = labs.ratio_of(base, mine)
    pub = findings.section("tiling")["time_reduction_percent"]["2 ranks on one chip"]
    effect = labs.effect_of(
        (
            f"your loop is {ratio:.2f}x faster than the untiled one"
            if ratio >= 1
            else f"your loop is {1 / ratio:.2f}x slower than the untiled one"
        )
        + f" (compute time, tile {format_bytes(runs['yours'][0]['tile_bytes'])})",
        ratio,
        noise,
        0.15,
        "tiling pays when the block is far larger than the last-level cache and passes 2..K then hit "
        "in cache; a huge L3 (or few passes) leaves little to save, and on a shared host another "
        "tenant's load moves times by 20-50%",
        f"untiled to 256 KB tiles cut the time by {pub}% for 2 ranks on one chip ({findings.source('tiling')}), "
        f"a ratio of {1 / (1 - pub / 100):.1f}x",
        repeats=ctx.repeat,
        pairs=list(zip(base, mine)),
    )
    same = plausible.identical("your loop and the harness's, both untiled", base, mine) if starter else None
    if same:  # the same loop twice: their gap is this machine's noise, never an effect
        effect = replace(effect, verdict="inconclusive", settle=f"implausible as an effect: {same}")
    notes = [best_tile(sweep, caches, starter), ceiling_note(ceilings.load(ctx.machine), runs, ctx.cores)]
    checks = [
        {"name": "verified with tiles that divide the block and tiles that do not (48K, 3M)", "passed": True},
        {"name": "each update() covers one tile, not the whole block", "passed": not starter, "detail": note},
    ]
    best = None if starter else min(sweep, key=lambda k: sweep[k]["compute_s"])
    data = {"span": span, "block": block, "best_tile": best}
    out = labs.Outcome(t, note, starter, effect, notes, data, checks=checks)
    out.prediction = predicted(ctx, runs, starter)
    return out


def predicted(ctx: labs.Context, runs: dict[str, list[dict]], starter: bool) -> dict:
    """The copy's prediction graded against pxq advise, with the lab's medians beside the timed
    answers: the harness's untiled loop, and the student's loop where it tiles at 256K."""
    block = prediction.graded(PREDICT, ctx.predicted, ceilings.load(ctx.machine), ctx.cores, ctx.console, ctx.first)
    measured = {"untiled.seconds": statistics.median(r["compute_s"] for r in runs["untiled (the harness's loop)"])}
    if not starter and runs["yours"][0]["tile_bytes"] == 256 << 10:
        measured["tiled.seconds"] = statistics.median(r["compute_s"] for r in runs["yours"])
    return prediction.with_measured(block, measured)


def follows_the_tile(runs: dict[str, dict]) -> None:
    """The lesson, from what update() touched (the harness records the largest span of a call and
    the most data touched between two updates of the same data): no call covers more than the
    tile asked for, a tile comes back within about a tile (all passes over it in a row, not pass
    by pass over the block) and not within much less (a smaller tile of its own), and the span
    follows the tile asked (a loop with a tile size of its own covers the same span whatever
    --tile says). Exit 1 otherwise."""
    for name, r in runs.items():
        asked = min(r["tile_bytes"], r["block_bytes"])
        if r["largest_span_bytes"] > asked:
            raise labs.LabFailure(
                f"with --tile {format_bytes(r['tile_bytes'])} ({name}) an update() call covered "
                f"{format_bytes(r['largest_span_bytes'])}, {r['largest_span_bytes'] / asked:.0f}x the tile asked for: "
                "each call must cover one tile (tile_elems), so that all passes run over it while it is in cache",
                1,
            )
    for name, r in runs.items():
        asked, reuse = min(r["tile_bytes"], r["block_bytes"]), r.get("largest_reuse_bytes")
        if reuse is not None and reuse > 2 * asked and r["tile_bytes"] < r["block_bytes"]:
            raise labs.LabFailure(
                f"with --tile {format_bytes(r['tile_bytes'])} ({name}) your loop touched {format_bytes(reuse)} between "
                "two passes over the same data: each pass runs over every tile before the next pass, so no tile is "
                "still in cache when it comes back; run all the passes over one tile, then move to the next",
                1,
            )
        if reuse and reuse < 0.75 * asked:  # a loop over the tile asked comes back to its data after a tile
            raise labs.LabFailure(
                f"with --tile {format_bytes(r['tile_bytes'])} ({name}) your loop came back to the same data after "
                f"only {format_bytes(reuse)}, 1/{asked / reuse:.0f} of the tile asked for: it tiles with a size of its "
                "own; each tile must be the tile it is given (tile_elems), so that the sweep of tile sizes measures "
                "the tiles it names",
                1,
            )
    sizes = sorted(
        {(r["tile_bytes"], r["largest_span_bytes"]) for r in runs.values() if r["tile_bytes"] < r["block_bytes"]}
    )
    spans = {span for _, span in sizes}
    if len(sizes) > 1 and len(spans) == 1:
        tiles = ", ".join(format_bytes(t) for t, _ in sizes)
        raise labs.LabFailure(
            f"every update() call covered {format_bytes(spans.pop())} whatever tile was asked for ({tiles}): the loop "
            "must use the tile it is given (tile_elems), not a size of its own",
            1,
        )


def best_tile(sweep: dict[str, dict], caches: dict, starter: bool) -> str:
    """The sweep's best tile, named only when the loop is tiled and it beats the next by more
    than a single run's noise (10%)."""
    here = "caches here: " + ", ".join(
        f"{k.upper()} {format_bytes(v['bytes'])}" for k, v in caches.items() if isinstance(v, dict)
    )
    if starter:
        return f"the tile sweep means nothing yet: the loop ignores the tile; {here}"
    ranked = sorted(sweep, key=lambda k: sweep[k]["compute_s"])
    best, second = ranked[0], ranked[1]
    gap = sweep[second]["compute_s"] / sweep[best]["compute_s"] - 1
    if gap < 0.10:
        return (
            f"best tiles of the sweep: {best} and {second} within {100 * gap:.0f}% (one run each: "
            f"no clear winner); {here}"
        )
    return f"best tile of the sweep: {best} ({labs.cache_of(sweep[best]['tile_bytes'], caches)}-sized); {here}"


def ceiling_note(c: dict | None, runs: dict[str, list[dict]], cores: int) -> str:
    """Which roof each loop runs under, from this machine's measured ceilings: the level that
    holds what one pass sweeps (the block untiled, a tile tiled) with `cores` ranks sharing the
    machine, the bandwidth per core a sweep of that size gets, and the share of it each loop
    attained."""
    if c is None:
        return (
            "which roof each loop runs under: ./pxq roofline measures this machine's ceilings once (docs/ROOFLINE.md)"
        )
    parts, levels = [], []
    for name, results in runs.items():
        r0 = results[0]
        # What one pass sweeps is what each update() touched (the harness counts it), not the tile asked for.
        swept = min(r0["largest_span_bytes"] or r0["block_bytes"], r0["block_bytes"])
        level = ceilings.level_of(c, swept, cores)
        roof = ceilings.bandwidth(c, swept, cores) / cores
        rate = _rate(r0, statistics.median(r["compute_s"] for r in results))
        # The roof is what the measured curve gives a sweep of this size (between two measured
        # sizes, interpolated): not the level's plateau, so it is named by the size swept.
        parts.append(
            f"{name.split(' ')[0]} {rate:.1f} GB/s per rank, {rate / roof:.0%} of the "
            f"{format_bytes(int(swept))} sweep's {roof:.1f} ({level})"
        )
        levels.append(level)
    moved = (
        f"the tiles moved the ring from the {levels[0]} roof to the {levels[1]} roof"
        if levels[0] != levels[1]
        else f"both loops sweep from {levels[0]}: the tiles did not change the roof"
    )
    return f"ceilings ({c['cpu_model']}, {cores} core(s) busy, GB/s per core): {'; '.join(parts)}: {moved}"


def _of_tile(span: int, tile: int) -> str:
    """The span an update() covered, in tiles: "one tile", or the share of one it is."""
    if tile <= 0:
        return "no tile asked for"
    if span == tile:
        return "one tile"
    return f"{span / tile:.2g} of a {format_bytes(tile)} tile"


def _rate(r: dict, seconds: float) -> float:
    """GB/s per rank: each pass reads and writes every byte of the block."""
    return 2.0 * r["block_bytes"] * r["passes"] * r["iterations"] / seconds / 1e9


PLUGIN = plugins.Lab(
    folder="04-tile-ring",
    title="Tile the ring",
    build=plugins.LabBuild(program="lab-ring", minutes=30, answer_ignores=("--tile=", "--reference")),
    measure=measure,
    predict=PREDICT,
)
