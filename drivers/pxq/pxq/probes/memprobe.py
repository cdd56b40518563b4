"""`pxq probe stride` and `pxq probe bandwidth`: the memory hierarchy and how many cores it
takes to saturate it.

- stride runs pxq-probe-stride (no MPI: one copy, or q copies on cores chosen by placement)
  and plots time per access against stride per array size, the curve over sizes with hwloc's
  caches and the detected steps marked, the contention ratio and the block variant;
- bandwidth runs pxq-probe-bandwidth twice through the launcher, as ranks (layout 1xN) and as
  threads (1x1xN), and plots total and per-core GB/s against active cores.
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.core import bounds, plugins, procs, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, format_bytes, parse_bytes
from pxq.core.paths import binary, build_hint, figure_path, results_path
from pxq.experiments import runner
from pxq.experiments.options import add_launch_options, launch_spec, parse_cpus
from pxq.figures import memory
from pxq.machine import caches, envinfo
from pxq.machine.ceilings import SWEPT

PLACEMENTS = ("packed", "spread", "custom")
KERNELS = ("copy", "scale", "add", "triad", "update")


def _last_record(path: Path, app: str) -> dict[str, Any] | None:
    recs = [r for r in records.read(path) if r.get("app") == app]
    return recs[-1] if recs else None


def stride_argv(
    min_size: str,
    max_size: str,
    stride: str | None,
    accesses: int,
    repeat: int,
    copies: int,
    placement: str,
    cpus: list[int] | None,
    per_octave: int,
    no_blocks: bool,
    results: Path,
    driver: dict[str, Any],
) -> list[str]:
    """The pxq-probe-stride command line, after checking what can be checked here."""
    if copies < 1:
        raise InputError(f"--copies {copies}: use at least 1")
    if accesses < 1:
        raise InputError(f"--accesses {accesses}: zero iterations measure nothing; use at least 1")
    bounds.repeat(repeat)
    if placement not in PLACEMENTS:
        raise InputError(f"unknown placement '{placement}': use {', '.join(PLACEMENTS)}")
    if (placement == "custom") != bool(cpus):
        raise InputError("--placement custom goes with --cores (one core per copy), and --cores with custom")
    lo = parse_bytes(min_size)
    if max_size != "auto" and parse_bytes(max_size) < lo:
        raise InputError(f"--max {max_size} is smaller than --min {min_size}")
    room = caches.available_memory()
    if max_size != "auto" and parse_bytes(max_size) * copies > room:
        raise InputError(
            f"--max {max_size} for {copies} cop{'y' if copies == 1 else 'ies'} needs more memory than this machine "
            f"has free ({format_bytes(room)}): give a smaller --max"
        )
    if stride is not None:
        s = parse_bytes(stride)
        top = parse_bytes(max_size) if max_size != "auto" else None
        if top is not None and s > top // 2:
            raise InputError(
                f"--stride {stride} is larger than half the largest array ({max_size}): "
                f"use a stride of at most {format_bytes(top // 2)} or a larger --max"
            )
    argv = [
        str(binary("probe-stride")),
        "--min",
        min_size,
        "--max",
        max_size,
        "--accesses",
        str(accesses),
        "--repeat",
        str(repeat),
        "--copies",
        str(copies),
        "--placement",
        placement,
        "--points-per-octave",
        str(per_octave),
        "--json",
        str(results),
        "--driver-info",
        json.dumps(driver),
    ]
    if stride is not None:
        argv += ["--stride", stride]
    if cpus:
        argv += ["--cpus", ",".join(str(c) for c in cpus)]
    if no_blocks:
        argv.append("--no-blocks")
    return argv


def run_stride(console: Console, argv: list[str], results: Path, plot_path: Path) -> int:
    if not Path(argv[0]).exists():
        raise InputError(f"{argv[0]} is missing: {build_hint()}")
    records.check_writable(results)
    before = len(records.read(results)) if results.exists() else 0
    proc = procs.run(argv, dict(os.environ), uuid.uuid4().hex, None, capture=False)
    if proc.returncode == 2:
        return 2
    recs = records.read(results) if results.exists() else []
    if proc.returncode != 0 or len(recs) <= before:
        console.print(f"[red]stride probe failed[/red] (exit code {proc.returncode})")
        return proc.returncode or 3
    console.print(f"record: {results}")
    console.print(f"plot: {memory.stride(recs[-1], plot_path)}")
    return 0


MAX_EFFICIENCY = 1.05  # more than perfect scaling, beyond noise: the one-core figure is suspect


def bandwidth_warnings(recs: list[dict[str, Any]]) -> list[str]:
    """Figures that cannot be taken at face value: scaling above 100% and saturation at one core."""
    out = []
    for rec in recs:
        for k in rec["kernels"]:
            best = max(k["rows"], key=lambda r: r["efficiency"])
            if best["efficiency"] > MAX_EFFICIENCY:
                out.append(
                    f"{k['kernel']} as {rec['size']['as']}: {100 * best['efficiency']:.0f}% efficiency at "
                    f"{best['cores']} cores is above perfect scaling, so the one-core figure is low (a short "
                    "run, a clock still rising, a busy core): its saturation point is unreliable; use a larger "
                    "--array or more --repeat"
                )
            if k["saturation"] == 1 and rec["size"]["workers"] > 1:
                out.append(
                    f"{k['kernel']} as {rec['size']['as']}: saturated at 1 core, so a second core added no "
                    "bandwidth: check that the cores are not hyper-threads of one core or oversubscribed "
                    "(the record's placement), and repeat"
                )
    return out


def _count(n: int, plural: str) -> str:
    """'1 thread', '2 threads': a count with its noun ('ranks', 'threads')."""
    return f"{n} {plural.removesuffix('s') if n == 1 else plural}"


def bandwidth_summary(recs: list[dict[str, Any]], console: Console) -> None:
    t = Table(title="bandwidth per active core (GB/s, total / per core)")
    t.add_column("kernel")
    t.add_column("as")
    cores = max(r["size"]["workers"] for r in recs)
    for k in range(1, cores + 1):
        t.add_column(f"{k} core{'s' if k > 1 else ''}", justify="right")
    t.add_column("saturation", justify="right")
    for name in KERNELS:
        for rec in recs:
            for kern in rec["kernels"]:
                if kern["kernel"] != name:
                    continue
                cells = [f"{r['total_gbs']:.1f} / {r['per_core_gbs']:.1f}" for r in kern["rows"]]
                cells += [""] * (cores - len(cells))
                workers = rec["size"]["workers"]
                if not kern["saturation"]:
                    sat = f"none within {workers}"
                elif kern["saturation"] < workers:
                    sat = f"{kern['saturation']} core{'s' if kern['saturation'] > 1 else ''}"
                else:
                    sat = f"starting at {workers} ({100 * kern['efficiency_at_max']:.0f}%)"
                t.add_row(name, rec["size"]["as"], *cells, sat)
    console.print(t)
    for warning in bandwidth_warnings(recs):
        console.print(f"[yellow]warning[/yellow]: {warning}")
    for rec in recs:
        triad = next((k for k in rec["kernels"] if k["kernel"] == "triad"), rec["kernels"][-1])
        best = max(r["total_gbs"] for r in triad["rows"])
        how = "flat MPI" if rec["size"]["as"] == "ranks" else "threads"
        workers = rec["size"]["workers"]
        if triad["saturation"] and triad["saturation"] < workers:
            console.print(
                f"{how}: {triad['kernel']} saturates memory bandwidth at "
                f"{_count(triad['saturation'], rec['size']['as'])} ({best:.1f} GB/s best total)"
            )
        elif triad["saturation"]:
            console.print(
                f"{how}: {triad['kernel']} is best with all {workers} {rec['size']['as']} ({best:.1f} GB/s) "
                f"at {100 * triad['efficiency_at_max']:.0f}% of perfect scaling: starting to saturate"
            )
        else:
            console.print(
                f"{how}: {triad['kernel']} still scales at {rec['size']['workers']} {rec['size']['as']} "
                f"({best:.1f} GB/s): memory bandwidth is not saturated on these cores"
            )


def run_bandwidth(
    console: Console,
    cores: int,
    array: str,
    kernels: str,
    repeat: int,
    how: str,
    results: Path,
    plot_path: Path,
    base: runner.RunSpec,
) -> int:
    if cores < 1:
        raise InputError(f"--cores {cores}: use at least 1")
    if cores > base.cores and not base.oversubscribe:
        raise InputError(f"--cores {cores}: this machine has {base.cores}; use at most {base.cores}")
    bounds.repeat(repeat)
    if array != "auto":
        parse_bytes(array)
    for k in kernels.split(","):
        if k not in KERNELS:
            raise InputError(f"unknown kernel '{k}': use {', '.join(KERNELS)}")
    modes = {
        "ranks": [("flat", Layout(1, cores, 1))],
        "threads": [("hybrid", Layout(1, 1, cores))],
        "both": [("flat", Layout(1, cores, 1)), ("hybrid", Layout(1, 1, cores))],
    }[how]
    if cores == 1:
        modes = modes[:1]
    records.check_writable(results)
    args = ["--array", array, "--kernels", kernels, "--repeat", str(repeat)]
    if array != "auto":  # a cache-sized array swept once takes microseconds: sweep it enough to time
        args += ["--sweeps", str(max(1, -(-SWEPT // (2 * parse_bytes(array)))))]
    recs = []
    for mode, layout in modes:
        spec = runner.RunSpec(
            **{
                **base.__dict__,
                "app": "probe-bandwidth",
                "layout": layout,
                "mode": mode,
                "tile": "off",
                "results": results,
                "app_args": args,
            }
        )
        console.print(f"[dim]bandwidth as {'ranks' if mode == 'flat' else 'threads'}: layout {layout}[/dim]")
        rec, code = runner.execute_probe(spec, console)
        if rec is None:
            return code
        recs.append(rec)
    bandwidth_summary(recs, console)
    if base.oversubscribe:
        console.print("note: cores are oversubscribed, so these bandwidths mean little")
    console.print(f"record: {results}")
    console.print(f"plot: {memory.bandwidth(recs, KERNELS, plot_path)}")
    return 0


def _add(probes: argparse._SubParsersAction) -> None:
    ps = probes.add_parser(
        "stride",
        help="time per read+write access over array sizes and strides (and "
        "blocks), alone or as q copies on placed cores",
    )
    ps.add_argument("--min", default="4K", help="smallest array (default 4K)")
    ps.add_argument("--max", default="auto", help="largest array (default: twice the last-level cache, >= 64M)")
    ps.add_argument("--stride", help="measure this stride only (bytes), e.g. 64")
    ps.add_argument("--accesses", type=int, default=1 << 22, help="accesses per point, at least (default 4194304)")
    ps.add_argument("--repeat", type=int, default=3, help="measurements per point, fastest counts (default 3)")
    ps.add_argument("--copies", type=int, default=1, help="copies run at once on as many cores (default 1)")
    ps.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default="packed",
        help="cores of the copies: packed (sharing caches), spread, or custom (--cores)",
    )
    ps.add_argument("--cores", dest="placement_cores", help="with --placement custom: one cpu per copy, e.g. 0,1")
    ps.add_argument(
        "--points-per-octave",
        type=int,
        choices=(1, 2),
        default=2,
        help="array sizes per doubling: 1 (powers of two) or 2 (also 1.5x; default)",
    )
    ps.add_argument("--no-blocks", action="store_true", help="skip the block-size variant")
    ps.add_argument("--results", type=Path, help="results file (default results/probe-stride.jsonl)")
    ps.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    pb = probes.add_parser(
        "bandwidth",
        help="STREAM copy/scale/add/triad on 1..N active cores, as ranks and as threads, with the saturation point",
    )
    pb.add_argument("--max-cores", type=int, help="N: measure 1..N active cores (default: every core)")
    pb.add_argument("--array", default="auto", help="bytes per array per core (default: 4 x the last-level cache)")
    pb.add_argument("--kernels", default="copy,scale,add,triad", help="comma-separated STREAM kernels")
    pb.add_argument("--repeat", type=int, default=5, help="timed passes, fastest counts (default 5)")
    pb.add_argument(
        "--as",
        dest="workers_as",
        choices=("both", "ranks", "threads"),
        default="both",
        help="cores as ranks (flat), threads (hybrid) or both (default)",
    )
    pb.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    add_launch_options(pb, "results/probe-bandwidth.jsonl", None)


def _run(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, f"probe-{args.op}.jsonl")
    plot = figure_path(args.plot, results)
    if args.op == "stride":
        argv = stride_argv(
            args.min,
            args.max,
            args.stride,
            args.accesses,
            args.repeat,
            args.copies,
            args.placement,
            parse_cpus(args.placement_cores),
            args.points_per_octave,
            args.no_blocks,
            results,
            {"command": "pxq probe stride"},
        )
        return run_stride(console, argv, results, plot)
    if args.max_cores is not None and args.max_cores < 1:
        raise InputError(f"--max-cores {args.max_cores}: measure at least 1 core (default: every core)")
    base = launch_spec(args)
    cores = args.max_cores or envinfo.cores()
    return run_bandwidth(console, cores, args.array, args.kernels, args.repeat, args.workers_as, results, plot, base)


PLUGIN = plugins.Probe(("stride", "bandwidth"), _add, _run, order=4)
