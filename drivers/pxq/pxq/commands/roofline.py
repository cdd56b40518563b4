"""`pxq roofline PATH...`: every run's declared work against its layout's ceilings (measured
once per machine: bandwidth of each cache level and of memory on 1..N cores, peak flop rate),
the binding ceiling named, the predicted time beside the measured median, and a log-log
figure with the ceilings labelled by the cores sharing them and arrows from untiled to tiled
and from flat to hybrid. See docs/ROOFLINE.md."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis import drift, roofline
from pxq.core import paths, plugins, records, schemas
from pxq.core.errors import InputError
from pxq.core.escape import term
from pxq.core.layout import format_bytes
from pxq.figures import roofline as draw
from pxq.machine import caches
from pxq.machine import ceilings as ceil
from pxq.probes import ceilprobe

NEAR = 0.25  # a prediction within this of the measured median counts as near


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", metavar="PATH", help="run records (files, folders or globs)")
    p.add_argument("--plot", type=Path, help="the figure (default results/roofline.png)")
    p.add_argument(
        "--phases",
        action="store_true",
        help="also each configuration's phases: measured against predicted seconds, and what binds each",
    )
    p.add_argument("--remeasure", action="store_true", help="measure this machine's ceilings again")
    p.add_argument(
        "--no-drift",
        action="store_true",
        help="ignore the bandwidth references among PATH (the ceilings as kept, not scaled to the runs' time)",
    )


def _runs(items: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The verified runs, and the bandwidth probe records among them (the drift references)."""
    recs = records.read_files(paths.expand(items))
    runs = [r for r in recs if schemas.kind_of(r) == "run" and r.get("status") == "ok"]
    if not runs:
        raise InputError(f"{' '.join(items)}: no verified runs to place")
    if not any(r.get("work") for r in runs):
        raise InputError("these runs declare no work (recorded before pxq declared it): run them again")
    return runs, [r for r in recs if drift.is_reference(r)]


def _machine(ctx: dict[str, Any]) -> tuple[Any, ...]:
    """What a record's context says of the machine it ran on, as far as the ceilings depend on
    it: the processor and hwloc's cache sizes (not the host's name: identical nodes share
    ceilings; not the CPU count: an affinity mask or a cpuset changes what the ceilings saw, not
    the machine)."""
    k = caches.key(ctx)
    return (k["cpu_model"], tuple(k["hwloc"].values()))


def _describe(cpu_model: Any, hwloc: dict[str, Any], host: Any) -> str:
    return f"host {host}: {cpu_model}, L2 {format_bytes(int(hwloc.get('l2') or 0))}"


def refuse_other_machines(recs: list[dict[str, Any]], c: dict[str, Any]) -> None:
    """Ceilings predict only the machine they were measured on: records from another processor
    or other cache sizes are refused (InputError), never predicted against this one's."""
    key = c.get("key")
    if not key:
        return
    here = (key.get("cpu_model"), tuple((key.get("hwloc") or {}).values()))
    other = [r.get("context") or {} for r in recs if _machine(r.get("context") or {}) != here]
    if other:
        theirs = caches.key(other[0])
        raise InputError(
            f"{len(other)} record(s) ran on another machine "
            f"({_describe(theirs['cpu_model'], theirs['hwloc'], other[0].get('host', '?'))}) than the one whose "
            f"ceilings would predict them (this one, {_describe(here[0], key.get('hwloc') or {}, key.get('host'))}): "
            "run `pxq roofline` on the machine that ran them, or leave them out of PATH"
        )


def _drift(refs: list[dict[str, Any]], c: dict[str, Any], console: Console) -> drift.Factors | None:
    """The references' factors, said: per curve and size, how far from the kept ceilings and how
    far they moved while the runs were taken."""
    if not refs:
        console.print(
            "[dim]no references among the records: the ceilings are used as kept; on a shared host, "
            "`pxq probe reference` beside the runs lets pxq scale them to the runs' time (docs/ROOFLINE.md)[/dim]"
        )
        return None
    fs = drift.factors(refs, c)
    n = c["cores"]
    moved, summary = [], drift.summary(fs, n)
    for curve in ["stream", *ceil.KINDS]:
        rows = [s for s in summary if s["curve"] == curve]
        if not rows:
            continue
        parts = [
            f"{format_bytes(s['bytes'])} {s['median']:.2f}{'*' if s['within_noise'] else ''} "
            f"({s['min']:.2f} to {s['max']:.2f})"
            for s in rows
        ]
        console.print(f"drift of {curve}, {n} cores busy, x the kept ceilings: " + ", ".join(parts), highlight=False)
        moved += [
            f"{curve} {format_bytes(s['bytes'])}" for s in rows if s["quartiles"][1] > (1 + NEAR) * s["quartiles"][0]
        ]
    refs_n = sum(s["references"] for s in summary)
    console.print(f"[dim]{refs_n} reference(s): each run is predicted against the ceilings scaled to its start[/dim]")
    if any(s["within_noise"] for s in summary):
        console.print(
            "[dim]*: the kept ceiling lies within the references' quartiles (all of them), a move they cannot "
            "tell from their own noise; each run is scaled only where the references near it agree the machine "
            "moved[/dim]"
        )
    if moved:
        console.print(
            f"[yellow]the machine moved more than {NEAR:.0%} while the runs were taken[/yellow] (the references' "
            f"quartiles, {', '.join(moved)}): the predictions between references carry that uncertainty"
        )
    return fs


def _variant(p: dict[str, Any]) -> str:
    """Layout, mode, tile and the back end where it is not the default (a Kokkos run beside its
    OpenMP twin is another row)."""
    backend = f" {p['backend']}" if p.get("backend") not in (None, "openmp") else ""
    return f"{p['layout']} {p['mode']}" + (f" {format_bytes(p['tile'])}" if p["tile"] else "") + backend


def _label(p: dict[str, Any]) -> str:
    size = p["size"] if isinstance(p["size"], str) else format_bytes(p["size"])
    return f"{p['app']} {size} {_variant(p)}"


def _kinds_text(c: dict[str, Any]) -> str:
    """Each access kind's rate per core at its smallest and largest measured size, all cores busy."""
    n, parts = c["cores"], []
    for kind, spec in ceil.KINDS.items():
        curve = (c.get("kinds") or {}).get(kind)
        if curve:
            unit = "GFlop/s" if spec["unit"] == "gflops" else "GB/s"
            lo, hi = curve[0], curve[-1]
            parts.append(
                f"{kind} {ceil.at(lo['rate'], n) / n:.1f} ({format_bytes(lo['bytes'])}) to "
                f"{ceil.at(hi['rate'], n) / n:.1f} ({format_bytes(hi['bytes'])}) {unit}"
            )
    return ("access kinds per core with " + str(n) + " cores busy: " + ", ".join(parts)) if parts else ""


def _ceilings_text(c: dict[str, Any]) -> str:
    n = c["cores"]
    parts = [f"peak {ceil.at(c['peak_gflops'], 1):.1f} GFlop/s per core"]
    for (name, alone), (_, busy) in zip(ceil.roofs(c, 1), ceil.roofs(c, n)):
        parts.append(f"{name} {alone:.1f}/{busy / n:.1f}")
    return ", ".join(parts) + f" GB/s per core alone/with {n} cores busy"


def table(pts: list[dict[str, Any]]) -> Table:
    t = Table(title="predicted against measured (median) time per configuration")
    heads = ("configuration", "runs", "flop/B", "GFlop/s", "bound by", "measured s", "predicted s", "pred/meas")
    for col in (*heads, "of phys. roof"):
        t.add_column(col, justify="left" if col in ("configuration", "bound by") else "right")
    for p in pts:
        near = abs(p["ratio"] - 1) <= NEAR
        ratio = f"{p['ratio']:.2f}" if near else f"[yellow]{p['ratio']:.2f}[/yellow]"
        roof = "-" if math.isnan(p["of_roof"]) else f"{p['of_roof']:.0%}"
        if p["of_roof"] > roofline.ROOF_SLACK:
            roof = f"[yellow]{roof} (!)[/yellow]"
        t.add_row(
            term(_label(p)),
            str(p["runs"]),
            "inf" if math.isinf(p["intensity"]) else f"{p['intensity']:.3g}",
            f"{p['gflops']:.2f}",
            f"{p['binding']} ({p['binding_phase']}, {p['cores']} core(s))",
            f"{p['median']:.4f}" + (f" ±{p['spread'] / 2:.0%}" if p["runs"] > 1 else ""),
            f"{p['predicted']:.4f}",
            ratio,
            roof,
        )
    return t


def phase_table(pts: list[dict[str, Any]]) -> Table:
    """Per configuration, its phases by kind: where the prediction meets the run and where it
    misses (a phase far below 1 runs slower than any ceiling pxq measured allows)."""
    t = Table(title="per phase (the run nearest the median; the slowest rank's seconds)")
    for col in ("configuration", "phase", "measured s", "predicted s", "pred/meas", "bound by"):
        t.add_column(col, justify="left" if col in ("configuration", "phase", "bound by") else "right")
    for p in pts:
        rows = roofline.phase_groups(p)
        for i, row in enumerate(rows):
            ratio = row["predicted"] / row["measured"] if row["measured"] > 0 else math.nan
            said = f"{ratio:.2f}" if abs(ratio - 1) <= NEAR else f"[yellow]{ratio:.2f}[/yellow]"
            t.add_row(
                term(_label(p)) if i == 0 else "",
                term(row["phase"]),
                f"{row['measured']:.4f}",
                f"{row['predicted']:.4f}",
                said if row["measured"] > 0 else "-",
                term(row["binding"]),
                end_section=i == len(rows) - 1,
            )
    return t


def _order_rule(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """How the runs failed to order these pairs: paired rounds whose interval holds 1, a
    rank-sum test, overlapping ranges, or several of these."""
    rules = []
    for a, b in pairs:
        if roofline.measured_order(a, b)[1]:
            rules.append(f"their paired rounds' {1 - roofline.ORDER_P:.0%} interval holds 1")
        elif min(a["runs"], b["runs"]) >= roofline.ORDER_TEST_RUNS:
            rules.append(f"rank-sum p >= {roofline.ORDER_P}")
        else:
            rules.append("their ranges overlap")
    return ", or ".join(dict.fromkeys(rules))


def _order_text(tau: float | None, pr: dict[str, Any]) -> str:
    """How well the prediction orders one app's variants: tau-b against the order the runs
    measure, the medians' tau, the ordered pairs predicted right, and the pairs the runs leave
    unordered."""
    if tau is None:
        said = "fewer than 3 configurations: not judged"
    elif pr["tau_b"] is not None:
        said = (
            f"Kendall's tau-b {pr['tau_b']:.2f} against the order the runs measure (a pair they do not "
            f"order counts as a tie), Kendall's tau {tau:.2f} on the medians alone"
        )
    else:
        said = (
            "Kendall's tau-b not judged: the runs order no pair (they differ less than their noise), "
            f"Kendall's tau {tau:.2f} on the medians alone"
        )
    if pr.get("paired"):
        said += f"; {pr['paired']} of {pr['pairs']} pair(s) judged on paired rounds of one sweep"
    if pr["ordered"]:
        said += f"; of the {pr['ordered']} pair(s) the runs order, {pr['agree']} predicted in that order"
    if pr["unordered"]:
        names = "; ".join(f"{_variant(a)} / {_variant(b)}" for a, b in pr["unordered"])
        said += f"; not ordered by the runs ({_order_rule(pr['unordered'])}): {names}"
    return said


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    runs, refs = _runs(args.results)
    c = ceilprobe.here(lambda s: console.print(f"[dim]{s}[/dim]"), remeasure=args.remeasure)
    refuse_other_machines(runs + refs, c)
    console.print(f"ceilings ({c['cpu_model']}, measured {c['date']}): {_ceilings_text(c)}")
    kinds = _kinds_text(c)
    if kinds:
        console.print(kinds)
    console.print(ceil.knee_text(c), highlight=False)
    for problem in ceil.implausible(c):
        console.print(
            f"[yellow]implausible ceiling, not kept[/yellow] ({problem}): the machine was busy while it was "
            "measured; run again on an idle machine (the predictions below use it as measured)",
            highlight=False,
        )
    fs = None if args.no_drift else _drift(refs, c, console)
    pts = roofline.points(runs, c, fs)
    console.print(table(pts))
    if args.phases:
        console.print(phase_table(pts))
    near = sum(abs(p["ratio"] - 1) <= NEAR for p in pts)
    bound = sum(p["ratio"] <= 1 + NEAR for p in pts)
    console.print(f"{near} of {len(pts)} configuration(s) predicted within {NEAR:.0%} of the measured median")
    console.print(
        f"{bound} of {len(pts)} no faster than their roof allows (predicted/measured at most {1 + NEAR:.2f}); "
        "far below 1: the kernel does not reach its ceiling (irregular access, latency, or flops the "
        "vector units do not fill); above: fewer bytes moved than declared (the compiler fused sweeps, "
        "or data stayed in a cache the model gave to others)"
    )
    above = [_label(p) for p in pts if p["of_roof"] > roofline.ROOF_SLACK]
    console.print(
        "of phys. roof: the time the peak flop rate and the memory bandwidth (with the run's cores busy) allow "
        "the declared phases, over the time they took: how close each run came to the hardware"
        + (
            f"; above 100% (!): {', '.join(above)}: faster than memory allows, so its data stayed in a cache "
            "(a working set that fits; the compulsory bytes were not all fetched from memory)"
            if above
            else ""
        ),
        markup=False,
    )
    pairs = roofline.pairs_per_app(pts)
    for app, tau in roofline.kendall_per_app(pts).items():
        console.print(f"order of the variants predicted, {app}: {_order_text(tau, pairs[app])}")
    console.print(
        "[dim]predicted: each declared phase at its binding ceiling (compute, a cache level or memory, "
        "shared by the node's busy cores, or its access kind's: gather, update, stencil, restrict, fft), "
        "plus what was measured outside the declared phases "
        "(communication, waiting)[/dim]"
    )
    if not any(draw.drawable(p) for p in pts):  # an integer sort alone: roofs with no point on them
        console.print(
            f"figure: none drawn: no configuration of {', '.join(sorted({str(p['app']) for p in pts}))} has a place "
            "on a flop-rate roofline (no flops declared, or no bytes from memory: all in cache); the table has "
            "their predictions",
            highlight=False,
        )
        return 0
    out = args.plot or paths.results_dir() / "roofline.png"
    middle = sorted(runs, key=lambda r: r.get("context", {}).get("date", ""))[len(runs) // 2]
    drawn = drift.for_run(middle, c, fs)  # the roofs as the machine was midway through the runs
    console.print(f"figure: {draw.plot(pts, drawn, out)}")
    return 0


PLUGIN = plugins.Command(
    help="every run against its layout's ceilings: the binding one, predicted against measured time",
    order=62,
    hooks=plugins.CommandHooks(add, handle, reads_records=True),
    example="./pxq roofline results/cg.jsonl --phases",
)
