"""Lab 5, go hybrid: the heat proxy as ranks (1xN) and as one rank's threads (1x1xN), interleaved:
time, the memory of all ranks together, the threads that worked and MPI's thread level."""

from __future__ import annotations

import statistics

from rich.table import Table

from pxq.core import plugins
from pxq.core.layout import format_bytes, format_volume
from pxq.teaching import harness as labs


def measure(ctx: labs.Context) -> labs.Outcome:
    flat, hybrid = f"1x{ctx.cores}", f"1x1x{ctx.cores}"
    runs = ctx.interleaved(
        [(flat, {"layout": flat}), (hybrid, {"layout": hybrid})], settle_on=labs.pairs_of(flat, hybrid, "seconds")
    )
    t = Table(title=f"the heat proxy, {runs[flat][0]['n']}^2 points: median of {ctx.repeat} run(s)")
    for col in ("layout", "ranks x threads", "threads that worked", "MPI thread level", "seconds", "memory"):
        t.add_column(col, justify="left" if col in ("layout", "MPI thread level") else "right")
    for name, results in runs.items():
        r0 = results[0]
        t.add_row(
            name,
            f"{r0['ranks']} x {r0['threads']}",
            str(r0["threads_used"]),
            r0["thread_level"],
            f"{statistics.median(r['seconds'] for r in results):.3f}",
            format_volume(statistics.median(r["memory_bytes"] for r in results)),
        )
    h0 = runs[hybrid][0]
    for name, results in runs.items():
        lesson(name, results[0])
    if not h0["thread_level_ok"]:
        raise labs.LabFailure(
            f"{h0['threads_used']} threads ran inside a rank that asked MPI for {h0['thread_level']} only: "
            "thread_level() must return MPI_THREAD_FUNNELED (LAB 1)",
            1,
        )
    starter = h0["threads_used"] < h0["threads"]
    note = (
        f"at {hybrid} only {h0['threads_used']} of {h0['threads']} threads relaxed rows: the loop is not shared yet"
        if starter
        else f"at {hybrid} all {h0['threads']} threads relaxed rows ({h0['thread_level']})"
    )
    speed, noise = labs.ratio_of([r["seconds"] for r in runs[flat]], [r["seconds"] for r in runs[hybrid]])
    memory = statistics.median(r["memory_bytes"] for r in runs[flat]) / statistics.median(
        r["memory_bytes"] for r in runs[hybrid]
    )
    notes = [
        f"{flat} holds {h0['ranks'] * ctx.cores} copies of the {format_bytes(int(h0['table_bytes']))} "
        f"conductivity table, {hybrid} one: {hybrid} uses {1 / memory:.2f}x the memory of {flat}"
    ]
    if ctx.cores < 2:
        return labs.Outcome(t, note, starter, None, [*notes, "one core here: 1x1x1 and 1x1 are the same run"])
    timed = labs.effect_of(
        f"{hybrid} runs at {speed:.2f}x the speed of {flat}",
        speed,
        noise,
        0.15,
        "one rank's threads skip the halo messages between ranks but share one memory bus as the ranks "
        "did; with one thread working, the hybrid run uses one core of two",
        repeats=ctx.repeat,
        pairs=[(a["seconds"], b["seconds"]) for a, b in zip(runs[flat], runs[hybrid])],
    )
    counted = labs.effect_of(
        f"{hybrid} needs {1 / memory:.2f}x the memory of {flat} (peak resident memory of all ranks)",
        memory,
        0.0,
        0.15,
        "the conductivity table is small next to the grid here",
        counted=True,
    )
    checks = [
        {"name": "MPI thread level fits the threads", "passed": True, "detail": h0["thread_level"]},
        {"name": "every thread relaxes rows", "passed": not starter, "detail": note},
    ]
    data = {"speed": speed, "memory": memory}
    return labs.Outcome(t, note, starter, timed, notes, data, more=[counted], checks=checks)


# The thread levels under which a thread other than MPI's main one may call MPI: one at a time
# (SERIALIZED; the exchange runs once a step, so two never overlap) or any (MULTIPLE).
ANY_ONE_THREAD = ("MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE")


def lesson(layout: str, r: dict) -> None:
    """What the harness's own functions saw the step do (exit 1 otherwise): each row relaxed once
    a step, by one thread (every thread relaxing every row gives the same numbers, at N times the
    work); the halos exchanged once a step, from MPI's main thread unless the level MPI gave lets
    another call it (FUNNELED allows no other; SERIALIZED any one at a time)."""
    lo, hi = r.get("relaxes_per_row_min"), r.get("relaxes_per_row_max")
    if lo is None or hi is None:
        raise labs.LabFailure("the harness reported no count of relaxed rows: rebuild the lab (pxq lab check 5)", 1)
    if lo != 1 or hi != 1:
        raise labs.LabFailure(
            f"at {layout} each row was relaxed {hi:g} times a step (on the busiest rank), not once: "
            "`#pragma omp parallel` without `for` makes every thread relax every row; share the rows "
            "(`#pragma omp parallel for`) so each is relaxed once (LAB 2)",
            1,
        )
    if r.get("exchanges_per_step_min") != 1 or r.get("exchanges_per_step_max") != 1:
        raise labs.LabFailure(
            f"at {layout} exchange_halos ran {r.get('exchanges_per_step_max'):g} times a step, not once: "
            "exchange the halos once a step, outside the parallel region",
            1,
        )
    if r.get("exchanges_off_main", 0) > 0 and r.get("thread_level") not in ANY_ONE_THREAD:
        raise labs.LabFailure(
            f"at {layout} exchange_halos (MPI) ran {r['exchanges_off_main']:g} times on a thread other than MPI's "
            f"main one under {r['thread_level']}: call MPI from the main thread only, outside the parallel region "
            "(or inside `#pragma omp master` followed by a barrier), or ask for MPI_THREAD_SERIALIZED, which lets "
            "any one thread at a time call MPI (`#pragma omp single`)",
            1,
        )


PLUGIN = plugins.Lab(
    folder="05-hybrid",
    title="Go hybrid",
    build=plugins.LabBuild(program="lab-heat", minutes=30),
    measure=measure,
)
