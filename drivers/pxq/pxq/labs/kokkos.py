"""Lab 6, port a kernel to Kokkos: the student's step() on Kokkos's Serial and OpenMP backends,
checked bit for bit against plain loops; the kernels it launches counted by Kokkos's tool
callbacks."""

from __future__ import annotations

import statistics

from rich.table import Table

from pxq.core import plugins
from pxq.teaching import harness as labs


def measure(ctx: labs.Context) -> labs.Outcome:
    layout = f"1x1x{ctx.cores}"
    runs = ctx.interleaved(
        [("both backends", {"layout": layout})],
        settle_on=lambda out: [(r["serial_s"], r["openmp_s"]) for r in out["both backends"]],
    )["both backends"]
    serial = [r["serial_s"] for r in runs]
    omp = [r["openmp_s"] for r in runs]
    r0 = runs[0]
    t = Table(title=f"smooth: {r0['n']} points, {r0['steps']} steps, median of {len(runs)} run(s)")
    for col in ("backend", "threads", "seconds", "kernels launched"):
        t.add_column(col, justify="left" if col == "backend" else "right")
    t.add_row("Kokkos::Serial", "1", f"{statistics.median(serial):.3f}", str(r0["serial_kernels"]))
    t.add_row("Kokkos::OpenMP", str(r0["threads"]), f"{statistics.median(omp):.3f}", str(r0["openmp_kernels"]))
    kernels = r0["openmp_kernels"]
    starter = kernels == 0
    if not starter:
        ported(r0)
    note = (
        "step() launches no Kokkos kernel: it still runs plain loops, on one thread in either backend"
        if starter
        else f"step() launches {kernels // r0['steps']} Kokkos kernel(s) per step"
    )
    ratio, noise = labs.ratio_of(serial, omp)
    if ctx.cores < 2:
        return labs.Outcome(t, note, starter, None, ["one core here: the OpenMP backend cannot run faster"])
    effect = labs.effect_of(
        f"the OpenMP backend with {r0['threads']} threads is {ratio:.2f}x as fast as Serial",
        ratio,
        noise,
        0.2,
        "this kernel reads and writes memory with little arithmetic, so two cores that share one "
        "memory bus gain less than 2x; a busy host steals cycles from the second thread",
        repeats=ctx.repeat,
        pairs=list(zip(serial, omp)),
    )
    return labs.Outcome(t, note, starter, effect, data={"kernels": kernels})


def ported(r: dict) -> None:
    """The lesson, from Kokkos's own tool callbacks (exit 1 otherwise): every kernel runs in the
    execution space step() is given (Space), and the largest change is computed in a Kokkos kernel,
    not a plain loop beside it: a reduction every step (a single fused parallel_reduce that writes
    y counts as both), or a second kernel every step (a parallel_for taking an atomic maximum); and
    in the harness's guarded step no host code of step() touched x or y between its kernels (an
    empty kernel launched beside a plain loop is still a plain loop), nor Views it made itself (a
    copy of x or y in a host mirror looped over), nor did one of its kernels sweep x or y on one
    thread of several (a one-iteration kernel looping over the points)."""
    for backend, expected in (("openmp", "Kokkos::OpenMP"), ("serial", "Kokkos::Serial")):
        elsewhere = r.get(f"{backend}_kernels_elsewhere")
        if elsewhere is None:
            raise labs.LabFailure("the harness reported no execution spaces: rebuild the lab (pxq lab check 6)", 1)
        if elsewhere:
            raise labs.LabFailure(
                f"{elsewhere:g} of the kernels launched while the harness asked for {expected} ran in another "
                "execution space: give each kernel a Kokkos::RangePolicy<Space>, the Space step() is called with",
                1,
            )
    if r.get("openmp_reductions", 0) < r["steps"] and r.get("openmp_kernels", 0) < 2 * r["steps"]:
        raise labs.LabFailure(
            f"{r.get('openmp_reductions', 0):g} Kokkos reductions in {r['steps']} steps: the largest change is "
            "still a plain loop on one thread; make it a Kokkos::parallel_reduce with a Kokkos::Max<double> (LAB 2)",
            1,
        )
    serial_kernels = r.get("openmp_serial_kernels")
    if serial_kernels and r.get("threads", 1) > 1:
        raise labs.LabFailure(
            f"{serial_kernels:g} kernel(s) of the harness's guarded OpenMP step swept x or y on one thread of "
            f"{r['threads']:g}: a kernel whose body loops over the points itself (a RangePolicy of one iteration) "
            "is a plain loop inside a kernel; give each kernel the points' range, "
            "Kokkos::RangePolicy<Space>(1, n - 1), one point an iteration (LAB 1)",
            1,
        )
    for key, what, why in GUARDED:
        counts = {b: r.get(f"{b}_{key}") for b in ("openmp", "serial")}
        if None in counts.values():
            raise labs.LabFailure("the harness reported no guarded step: rebuild the lab (pxq lab check 6)", 1)
        for backend, count in counts.items():
            if count:
                raise labs.LabFailure(
                    f"step()'s own code read or wrote {what} outside its Kokkos kernels (the harness's guarded "
                    f"{'OpenMP' if backend == 'openmp' else 'Serial'} step, whose Views only kernels and deep "
                    f"copies may touch, caught it {count:g} time(s)): {why}, the largest change a "
                    "Kokkos::parallel_reduce with a Kokkos::Max<double> (LAB 2)",
                    1,
                )


# What the guarded step counts (the record's {backend}_{key}), what was touched, and why it is wrong.
GUARDED = (
    (
        "touched_outside",
        "x or y",
        "a plain loop beside the kernels, which on a GPU could not reach the device's memory; put every "
        "loop over x and y in a kernel",
    ),
    (
        "owned_touched_outside",
        "a View step() made itself",
        "a copy of x or y (a host mirror) looped over on the host is a plain loop, and on a GPU a round trip "
        "through the host every step; put every loop in a kernel over x and y",
    ),
)


PLUGIN = plugins.Lab(
    folder="06-kokkos",
    title="Port a kernel to Kokkos",
    build=plugins.LabBuild(program="lab-smooth", minutes=30, kokkos=True),
    measure=measure,
)
