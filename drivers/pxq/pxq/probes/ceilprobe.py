"""Measures this machine's ceilings for the roofline (pxq.machine.ceilings keeps them):
pxq-probe-bandwidth's in-place update on arrays from 16K per core to past the last cache level,
the ring's L1-resident update as the compute-bound kernel, and pxq-probe-bandwidth --kind's
kernels for the access kinds a stream does not model (from 64K per core to past the last
level), each on 1..N cores, REPEATS times, through the launcher. Nothing is kept until every measurement is done."""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.models import drift, roofview
from pxq.core import outputs, plugins
from pxq.core.errors import InputError
from pxq.core.layout import Layout, format_bytes
from pxq.core.paths import results_path
from pxq.experiments import runner
from pxq.machine import caches, ceilings, envinfo, hostload
from pxq.machine.ceilings import (
    FLOP_BLOCK_UPDATES,
    FORMAT,
    REPEATS,
    SWEPT,
    implausible,
    kinds,
    levels,
    load,
    path,
    save,
)


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _run(spec_app: str, layout: Layout, args: list[str], mode: str, results: Path) -> dict[str, Any]:
    spec = runner.RunSpec(
        app=spec_app, layout=layout, mode=mode, tile="off", results=results, app_args=args, timeout=300
    )
    result = runner.execute(spec)
    if result.status != "ok" or result.record is None:
        last = "\n".join(result.output.strip().splitlines()[-5:])
        raise InputError(f"measuring the ceilings: {spec_app} {' '.join(args)} ended {result.status}:\n{last}")
    return result.record


def _stream_args(array: int) -> list[str]:
    """The in-place update of one array per core, swept often enough to time."""
    sweeps = max(1, math.ceil(SWEPT / (2 * array)))
    return ["--array", str(array), "--kernels", "update", "--repeat", "5", "--sweeps", str(sweeps)]


def _kind_args(kind: str, size: int) -> list[str]:
    """The kind's kernel on `size` bytes per core. The update's 4M keys take the same time at any
    size: one sweep is enough."""
    sweeps = 1 if kind == "update" else max(1, math.ceil(SWEPT / size))
    return ["--kind", kind, "--array", str(size), "--repeat", "3", "--sweeps", str(sweeps)]


def _bandwidth(array: int, n: int, tmp: Path) -> list[list[float]]:
    """Total GB/s of the in-place update of one array per core on 1..n cores, one list per repeat."""
    out = []
    for _ in range(REPEATS):
        rec = _run("probe-bandwidth", Layout(1, n, 1), _stream_args(array), "flat", tmp / "ceil.jsonl")
        out.append([row["total_gbs"] for row in rec["kernels"][0]["rows"]])
    return out


def _kind(kind: str, size: int, n: int, tmp: Path) -> list[list[float]]:
    """Total rate (GB/s or GFlop/s, as kinds() says) of the kind's kernel on 1..n cores, one list
    per repeat."""
    field = "total_gflops" if kinds()[kind]["unit"] == "gflops" else "total_gbs"
    out = []
    for _ in range(REPEATS):
        rec = _run("probe-bandwidth", Layout(1, n, 1), _kind_args(kind, size), "flat", tmp / "ceil.jsonl")
        out.append([row[field] for row in rec["kernels"][0]["rows"]])
    return out


REFERENCE_STREAM = (256 << 10, 64 << 20)  # a cache's sweep and memory's, bytes per core
REFERENCE_KINDS = (64 << 10, 4 << 20, 64 << 20)


def reference(say: Callable[[str], None], results: Path) -> list[dict[str, Any]]:
    """Re-times the ceilings' reference points beside a user's runs into `results`: the stream at
    REFERENCE_STREAM and every access kind at REFERENCE_KINDS bytes per core, as ranks on 1..N
    cores, with the ceilings' own arguments, REPEATS rounds over all of them (one timing is as
    noisy as a run; pxq.analysis.models.drift takes the median)."""
    n = envinfo.cores()
    todo = [("stream", size, _stream_args(size)) for size in REFERENCE_STREAM]
    todo += [(kind, size, _kind_args(kind, size)) for kind in kinds() for size in REFERENCE_KINDS]
    out = []
    for rep in range(REPEATS):
        for i, (what, size, args) in enumerate(todo, 1):
            say(f"reference {rep + 1}/{REPEATS}, {i}/{len(todo)}: {what} with {format_bytes(size)} per core")
            out.append(_run("probe-bandwidth", Layout(1, n, 1), args, "flat", results))
    return out


def kind_sizes(profile: dict[str, Any], n: int) -> list[int]:
    """Bytes per core for the access kinds: powers of 4 from 64K to past 4 x the last measured
    level (at least 64M), within a quarter of the memory there is to share."""
    return _powers_of_4(64 << 10, 4, 64 << 20, profile, n)


def _names(unit: str) -> str:
    return ", ".join(name for name, spec in kinds().items() if spec["unit"] == unit)


def _flops(l1: int, n: int, tmp: Path) -> list[list[float]]:
    """Total GFlop/s of the compute-bound ring on 1..n cores, one list per repeat."""
    block = max(8192, (l1 // 4) // 8 * 8)
    args = ["--block", str(block), "--passes", "64", "--flops", str(FLOP_BLOCK_UPDATES), "--iterations", "200"]
    out = []
    for _ in range(REPEATS):
        row = []
        for k in range(1, n + 1):
            rec = _run("ring", Layout(1, k, 1), args, "flat", tmp / "ceil.jsonl")
            row.append(rec["work"]["compute"]["gflops"])
        out.append(row)
    return out


def _per_cores(runs: list[list[float]]) -> list[dict[str, float]]:
    return [{"cores": k + 1, **_spread([r[k] for r in runs])} for k in range(len(runs[0]))]


def _powers_of_4(start: int, times_last: int, least: int, profile: dict[str, Any], n: int) -> list[int]:
    """Powers of 4 from `start` to the first at or past `times_last` x the last measured level
    (at least `least`), within a quarter of the memory there is to share among n cores."""
    last = int(profile.get("last_level_bytes") or 0)
    target, cap = max(times_last * last, least), caches.available_memory() // (4 * n)
    out: list[int] = []
    size = start
    while size <= cap and (not out or out[-1] < target):
        out.append(size)
        size *= 4
    return out


def sizes(profile: dict[str, Any], n: int) -> list[int]:
    """Array bytes per core to measure: powers of 4 from 16K to past 16 x the last measured
    level (at least 1G), within a quarter of the memory there is to share."""
    return _powers_of_4(16 << 10, 16, 1 << 30, profile, n)


def measure(say: Callable[[str], None]) -> dict[str, Any]:
    machine = envinfo.machine()
    profile = caches.here(say)
    n = envinfo.cores()
    lv = levels(profile)
    if not lv:
        raise InputError("no cache level is known on this machine (neither measured nor from hwloc)")
    busy = hostload.busy()  # the host's load the second before: ceilings taken beside a load are not kept
    out: dict[str, Any] = {
        "busy_before": busy,
        "format": FORMAT,
        "key": caches.key(machine),
        "cpu_model": machine.get("cpu_model", "?"),
        "cores": n,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "levels": lv,
        "curve": [],
        "method": (
            f"in-place update of one array per core (16 B per element, read + write, as the proxies' sweeps) "
            f"as ranks on 1..{n} cores, best of 5 per run, median and range of {REPEATS} runs, per array size; "
            f"peak: the ring's update, {FLOP_BLOCK_UPDATES} per element, L1-resident; access kinds: "
            f"pxq-probe-bandwidth --kind ({_names('gbs')}: declared GB/s; {_names('gflops')}: GFlop/s), "
            "best of 3 per run"
        ),
    }
    with tempfile.TemporaryDirectory(prefix="pxq-ceilings-") as t:
        tmp = Path(t)
        for size in sizes(profile, n):
            say(f"ceilings: bandwidth with {format_bytes(size)} per core on 1..{n} cores")
            out["curve"].append({"bytes": size, "gbs": _per_cores(_bandwidth(size, n, tmp))})
        say(f"ceilings: peak flop rate on 1..{n} cores")
        out["peak_gflops"] = _per_cores(_flops(lv[0]["bytes"], n, tmp))
        out["kinds"] = {}
        for kind, spec in kinds().items():
            say(f"ceilings: {kind} ({spec['what']}) from 64K per core, on 1..{n} cores")
            out["kinds"][kind] = [
                {"bytes": size, "rate": _per_cores(_kind(kind, size, n, tmp))} for size in kind_sizes(profile, n)
            ]
    return out


def here(say: Callable[[str], None], remeasure: bool = False) -> dict[str, Any]:
    """This machine's ceilings: stored, else measured now (about half a minute) and stored."""
    machine = envinfo.machine()
    data = None if remeasure else load(machine)
    if data is None:
        outputs.check(path(), "ceilings", "the kept ceilings (PXQ_CEILINGS)")  # before minutes of measuring
        say(
            "measuring this machine's ceilings once (bandwidth against bytes per core, peak flop rate, "
            "the access kinds' rates; a few minutes)"
        )
        data = measure(say)
        if implausible(data):  # not kept: the next command measures again
            return data
        where = save(data)
        say(f"ceilings kept in {where}" if where else "ceilings not kept: the cache folder cannot be written")
    return data


def _add(probes: argparse._SubParsersAction) -> None:
    pc = probes.add_parser(
        "ceilings",
        help="this machine's roofline ceilings (measured once, a few minutes, then kept): shown, and with --out "
        "copied to a file that `pxq advise --ceilings FILE` reads on another machine",
    )
    pc.add_argument("--remeasure", action="store_true", help="measure them again")
    pc.add_argument("--out", type=Path, help="also write them to this file (JSON)")
    pr = probes.add_parser(
        "reference",
        help="re-time the roofline ceilings' reference points beside your runs (the stream and the access "
        "kinds, about half a minute), so `pxq roofline` scales the ceilings to the runs' time",
    )
    pr.add_argument("--results", type=Path, help="results file (default results/roofline-reference.jsonl)")


def _run_reference(args: argparse.Namespace, console: Console) -> int:
    """The reference points, appended to the results, and how far each is from the kept ceilings."""
    results = results_path(args.results, "roofline-reference.jsonl")
    refs = reference(lambda s: console.print(f"[dim]{s}[/dim]"), results)
    kept = ceilings.load(envinfo.machine())
    if kept is None:
        console.print("no ceilings kept on this machine yet: `pxq roofline` measures them, then uses these")
    else:
        n = kept["cores"]
        rows = drift.summary(drift.factors(refs, kept), n)
        console.print(f"these references over the kept ceilings (measured {kept['date']}), median, {n} cores busy:")
        t = Table()
        t.add_column("curve")
        sizes = sorted({r["bytes"] for r in rows})
        for size in sizes:
            t.add_column(format_bytes(size), justify="right")
        for curve in dict.fromkeys(r["curve"] for r in rows):
            by = {r["bytes"]: f"{r['median']:.2f}" for r in rows if r["curve"] == curve}
            t.add_row(curve, *(by.get(size, "") for size in sizes))
        console.print(t)
    console.print(f"{len(refs)} reference(s) appended to {results}; pass it to `pxq roofline` with the runs")
    return 0


def _run_ceilings(args: argparse.Namespace, console: Console) -> int:
    """The kept ceilings (measured now when there are none), shown; with --out, copied."""
    if args.out is not None:
        outputs.check(args.out, "ceilings", "--out")  # before minutes of measuring
    c = here(lambda s: console.print(f"[dim]{s}[/dim]"), remeasure=args.remeasure)
    for line in roofview.ceilings_lines(c):
        console.print(line, highlight=False)
    if args.out is not None:
        outputs.write(args.out, outputs.dumps(c, indent=1), "ceilings", "--out")
        console.print(f"ceilings written to {args.out}: on another machine, `pxq advise APP --ceilings {args.out}`")
    return 0


def _run_op(args: argparse.Namespace, console: Console) -> int:
    return _run_ceilings(args, console) if args.op == "ceilings" else _run_reference(args, console)


PLUGIN = plugins.Probe(("ceilings", "reference"), _add, _run_op, order=5)
