"""Lab 3, contention: the stride kernel alone and on every core (the student's run_copies), ns per
access by array size, the sizes placed in the caches; packed against spread where the machine
has more than one socket or shared L2."""

from __future__ import annotations

import statistics

from rich.table import Table

from pxq.analysis.verdicts import findings
from pxq.core import plugins
from pxq.core.layout import format_bytes
from pxq.machine import caches
from pxq.teaching import harness as labs

DOUBLED = 1.8  # "the per-access time doubles": at least this ratio


def largest(ctx: labs.Context) -> str:
    """The largest array: at least twice the last cache level pxq measured here (pxq.machine.caches:
    a VM may report its host's whole L3), so the last sizes are in memory; 64M at least."""
    last = caches.here()["last_level_bytes"]
    return format_bytes(caches.array_size(last, ctx.cores, caches.available_memory()).bytes)


def configs(ctx: labs.Context) -> list[tuple[str, dict]]:
    args = ["--max", largest(ctx)]
    out = [(f"every core (1x{ctx.cores})", {"layout": f"1x{ctx.cores}", "args": args})]
    shared_l2 = ctx.machine["caches"]["l2"].get("shared_by", 1) > 1
    if ctx.cores >= 2 and (ctx.machine.get("packages", 1) > 1 or shared_l2):
        out += [
            ("2 copies packed", {"layout": "1x2", "placement": "packed", "args": args}),
            ("2 copies spread", {"layout": "1x2", "placement": "spread", "args": args}),
        ]
    return out


def measure(ctx: labs.Context) -> labs.Outcome:
    chosen = configs(ctx)

    def largest_pairs(out: dict[str, list]) -> list[tuple[float, float]]:  # (every core, alone) at the largest array
        return [(r["sizes"][-1]["all_ns"], r["sizes"][-1]["alone_ns"]) for r in out[chosen[0][0]]]

    runs = ctx.interleaved(chosen, settle_on=largest_pairs)
    caches = ctx.machine["caches"]
    first = next(iter(runs))
    sizes = [s["bytes"] for s in runs[first][0]["sizes"]]
    t = Table(title=f"ns per access, stride {runs[first][0]['stride']} B: median of {ctx.repeat} run(s)")
    t.add_column("array")
    t.add_column("fits in")
    t.add_column("alone", justify="right")
    for name in runs:
        t.add_column(name, justify="right")
        t.add_column("ratio", justify="right")
    ratio_at: dict[int, list[float]] = {}
    for i, nbytes in enumerate(sizes):
        alone = [r["sizes"][i]["alone_ns"] for r in runs[first]]
        cells = [format_bytes(nbytes), labs.cache_of(nbytes, caches), f"{statistics.median(alone):.2f}"]
        for name, results in runs.items():
            every = [r["sizes"][i]["all_ns"] for r in results]
            ratio = statistics.median(every) / statistics.median(alone)
            cells += [f"{statistics.median(every):.2f}", f"{ratio:.2f}"]
            if name == first:
                ratio_at[nbytes] = [r["sizes"][i]["all_ns"] / r["sizes"][i]["alone_ns"] for r in results]
        t.add_row(*cells)
    ranks = runs[first][0]["ranks"]
    # At any array size: on a busy host (a shared lab server) a rank can wait for a core while
    # the other sweeps, so copies that could run together miss each other at some sizes; copies
    # that take turns miss at every size of every run.
    copies = max(s["copies"] for r in runs[first] for s in r["sizes"])
    starter = copies <= 1 < ranks
    note = (
        f"only {copies} of {ranks} copies ran at once: 'every core' is measured alone (the harness's "
        "sweep() saw no other copy sweep alongside rank 0's)"
        if starter
        else f"all {copies} copies ran at once"
    )
    largest = sizes[-1]
    ratio = statistics.median(ratio_at[largest])
    doubled = next((format_bytes(b) for b in sizes if statistics.median(ratio_at[b]) >= DOUBLED), None)
    notes = [
        f"the per-access time doubles from {doubled} on"
        if doubled
        else f"the per-access time never doubles up to {format_bytes(largest)} here"
    ]
    if len(chosen) == 1:
        notes.append("one socket and private L2s here: packed and spread place the copies alike")
    pub = findings.entry("memory_stride/copies").text
    effect = labs.effect_of(
        f"on every core each access to a {format_bytes(largest)} array takes {ratio:.2f}x as long as alone",
        ratio,
        findings.spread(ratio_at[largest]),
        0.2,
        "a server chip's memory system may serve two streams nearly as fast as one, and cloud "
        "hosts move times by 20-50% between runs; a laptop with one memory channel shows more",
        f"{pub} ({findings.source('memory_stride')})",
        repeats=ctx.repeat,
        pairs=largest_pairs(runs),
    )
    return labs.Outcome(t, note, starter, effect, notes, {"copies": copies, "ratio": ratio})


PLUGIN = plugins.Lab(
    folder="03-contention",
    title="Contention",
    build=plugins.LabBuild(program="lab-stride", minutes=25),
    measure=measure,
)
