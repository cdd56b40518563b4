"""`pxq study variability`: the distribution of back-to-back allreduce calls, quiet and beside a
background load: median, p95, the slowest 5%'s share of the total time and the clusters of
call times, beside the published Opteron figures (median 363 us, slowest 5% = 93% of the time)."""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.core import plugins, records
from pxq.core.layout import parse_layout
from pxq.experiments.studykit import Context, Outcome, appended, count
from pxq.machine import envinfo, hostload
from pxq.probes import collprobe

SECTION = "collective_variability"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--calls", type=int, help="timed calls (default 2000, the paper's)")
    p.add_argument("--size", help="bytes per rank (default 16K, the paper's)")
    p.add_argument("--noise", choices=collprobe.NOISE_MODES, help="the background load (default memory)")


LOADED = hostload.BUSY  # the cores busier than this share the second before a run: the host is not quiet
GAP = 1.5  # the probe's cluster gap ratio (pxq-probe-collective --cluster-gap)


def _probe(ctx: Context, opts: dict[str, Any], noise: str | None) -> dict[str, Any] | None:
    before = count(ctx.results)
    layout = parse_layout(f"1x{max(2, envinfo.cores())}")
    name = f"allreduce-{noise or 'quiet'}"
    collprobe.run(
        ctx.console,
        "allreduce",
        layout,
        opts["calls"],
        opts["size"],
        50,
        noise,
        None,
        1.0,
        ctx.results,
        ctx.aux(name, ".png"),
        ctx.base,
    )
    return appended(ctx.results, before, "probe-collective")


def _row(rec: dict[str, Any], label: str, load: float | None = None) -> dict[str, Any]:
    st = rec["stats"]
    return {
        "condition": label,
        "load_before": load,
        "median_us": 1e6 * st["median"],
        "p95_us": 1e6 * st["p95"],
        "max_us": 1e6 * st["max"],
        "tail_share": st["tail_share"],
        "clusters": [[1e6 * c["centre"], c["count"]] for c in st["clusters"]],
        "samples_us": [1e6 * t for t in rec["samples"]["slowest_rank"]],
    }


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    paper = findings.section(SECTION)
    got = []
    for label, noise in (("quiet", None), (f"{opts['noise']} load", opts["noise"])):
        load = hostload.busy()  # before the probe: its own ranks are not yet running
        got.append((label, _probe(ctx, opts, noise), load))
    recs = [r for _, r, _ in got if r is not None]
    rows = [_row(r, label, load) for label, r, load in got if r is not None]
    comparison = [
        Comparison(
            "calls x bytes per rank",
            "2000 x 16 KB, 32 ranks",
            f"{opts['calls']} x {opts['size']}, {recs[0]['layout']['ranks'] if recs else '-'} ranks",
        )
    ]
    for r in rows:
        comparison += [
            Comparison(f"{r['condition']}: median", f"{paper['median_us']} us", f"{r['median_us']:.1f} us"),
            Comparison(f"{r['condition']}: p95", "< 500 us (95% of calls)", f"{r['p95_us']:.1f} us"),
            Comparison(
                f"{r['condition']}: slowest 5% share of time",
                f"{paper['slowest_5_percent_share_of_total_time_percent']}%",
                f"{100 * r['tail_share']:.0f}%",
            ),
            Comparison(f"{r['condition']}: clusters", "distinct levels", str(len(r["clusters"]))),
        ]
    for r in rows:
        if r["load_before"] is not None:
            comparison.append(
                Comparison(f"{r['condition']}: cores busy the second before", "-", f"{100 * r['load_before']:.0f}%")
            )
    found = _parts(rows)
    title = f"Variability: {opts['calls']} back-to-back allreduce calls of {opts['size']}, quiet and beside a load"
    return Outcome(
        title,
        rows or [{"condition": "-"}],
        comparison,
        found,
        recs,
        [],
        {},
        None if len(recs) == 2 else records.EXIT_RUN_FAILED,
    )


def distinct_levels(clusters: list[list[float]], calls: int) -> list[list[float]]:
    """Clusters that are levels: at least 0.5% of the calls (10 of 2000) each, their centres
    at least 1.5x apart."""
    big = sorted((c for c in clusters if c[1] >= max(2, 0.005 * calls)), key=lambda c: c[0])
    out: list[list[float]] = []
    for c in big:
        if not out or c[0] >= 1.5 * out[-1][0]:
            out.append(c)
    return out


def clusters_of(samples: list[float], gap: float = GAP) -> list[list[float]]:
    """[centre, count] of the call times split where a call takes over GAP times the one before
    (sorted): the probe's own clustering, for a part of its samples."""
    values = sorted(v for v in samples if v > 0)
    out: list[list[float]] = []
    start = 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] > gap * values[i - 1]:
            out.append([statistics.median(values[start:i]), float(i - start)])
            start = i
    return out


def tail_share_of(samples: list[float], fraction: float = 0.05) -> float:
    values = sorted(samples)
    k = max(1, math.ceil(fraction * len(values)))
    total = sum(values)
    return sum(values[-k:]) / total if total > 0 else 0.0


def halves(samples: list[float]) -> tuple[list[float], list[float]]:
    """The first and the second half of the calls, in the order they ran."""
    return samples[: len(samples) // 2], samples[len(samples) // 2 :]


def _steady(
    part: str, here: str, held: bool, per_half: list[bool], halves_say: str, loaded: str | None, why_not: str
) -> Finding:
    """A part judged on the quiet run: inconclusive on a loaded host, or when a half of the calls
    would give the other verdict; else reproduced when it HELD."""
    ref = f"{SECTION}/{part}"
    if loaded:
        return findings.part(ref, here, "inconclusive", loaded)
    if any(h != held for h in per_half):
        return findings.part(
            ref, here, "inconclusive", f"{halves_say}: the verdict would flip within the run's own variation"
        )
    return findings.held(ref, here, held, why_not)


def _parts(rows: list[dict[str, Any]]) -> list[Finding]:
    """The tail and the levels from the quiet run (the paper injected no load); the loaded run
    is pxq's own check; the link-load cause needs links pxq can load.

    A verdict must hold on each half of the calls as on the whole, or it is inconclusive (it
    would flip within the run's own variation); and the "quiet" run is quiet only when the
    host's cores were at most LOADED busy in the second before it, else both parts are
    inconclusive and say the load."""
    quiet = next((r for r in rows if r["condition"] == "quiet"), None)
    out = []
    if quiet is None:
        out.append(findings.untestable(f"{SECTION}/tail/tail", "the quiet run failed"))
        out.append(findings.untestable(f"{SECTION}/levels/levels", "the quiet run failed"))
    else:
        load = quiet.get("load_before")
        loaded = (
            f"the host was not quiet: its cores were {100 * load:.0f}% busy in the second before the run"
            if load is not None and load > LOADED
            else None
        )
        samples = quiet["samples_us"]
        share = f"quiet: the slowest 5% take {100 * quiet['tail_share']:.0f}% of the time"
        parts_share = [tail_share_of(h) for h in halves(samples)]
        halves_say = f"the halves of the calls disagree ({100 * parts_share[0]:.0f}% and {100 * parts_share[1]:.0f}%)"
        why = "the slowest 5% take less than half of the time"
        held = quiet["tail_share"] >= 0.5
        out.append(_steady("tail/tail", share, held, [x >= 0.5 for x in parts_share], halves_say, loaded, why))
        levels = distinct_levels(quiet["clusters"], len(samples))
        text = ", ".join(f"{c[0]:.0f} us ({c[1]:.0f} calls)" for c in levels)
        per_half = [len(distinct_levels(clusters_of(h), len(h))) for h in halves(samples)]
        halves_say = f"the halves of the calls show {per_half[0]} and {per_half[1]} level(s)"
        why = "one level of call times (clusters of 0.5% of the calls or more, 1.5x apart)"
        here = f"quiet: {len(levels)} level(s): {text}"
        out.append(
            _steady("levels/levels", here, len(levels) >= 2, [n >= 2 for n in per_half], halves_say, loaded, why)
        )
    for r in rows:
        if r["condition"] != "quiet":
            heavy = r["tail_share"] >= 0.5
            out.append(
                findings.check(
                    f"a heavy tail beside an injected {r['condition']} (pxq's own condition; the paper injected none)",
                    f"the slowest 5% take {100 * r['tail_share']:.0f}% of the time",
                    "passed" if heavy else "failed",
                )
            )
    packages = envinfo.packages()
    why = (
        "one package here: no inter-socket links to load"
        if packages < 2
        else "pxq cannot load a chosen inter-socket link yet: run pxq probe allreduce with --noise memory "
        "--noise-cores on the sockets a link joins, and compare the levels"
    )
    out.append(findings.untestable(f"{SECTION}/levels/links", why))
    return out


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Call times in order and their distribution, quiet and loaded, the paper's median dashed."""
    plt = figures.pyplot()
    import numpy as np

    rows = [r for r in rec["rows"] if "samples_us" in r]
    fig, (ax_t, ax_h) = plt.subplots(1, 2, figsize=(11, 4))
    every = [t for r in rows for t in r["samples_us"] if t > 0]
    bins = np.geomspace(min(every), max(every) * 1.01, 60) if every else 60  # even widths on the log axis
    for r, colour in zip(rows, ("tab:blue", "tab:red")):
        ax_t.plot(r["samples_us"], ".", ms=2, color=colour, label=r["condition"])
        ax_h.hist(
            r["samples_us"],
            bins=bins,
            color=colour,
            alpha=0.6,
            label=f"{r['condition']}: median {r['median_us']:.0f} us",
        )
    paper = findings.section(SECTION)["median_us"]
    ax_t.axhline(paper, color="grey", ls="--", lw=0.8, label=f"paper median {paper} us")
    figures.log_axis(ax_t, "y")
    ax_t.set_xlabel("call")
    ax_t.set_ylabel("time of the slowest rank (us)")
    figures.log_axis(ax_h, "x")
    ax_h.set_xlabel("call time (us)")
    ax_h.set_ylabel("calls (log)")
    figures.log_axis(ax_h, "y")
    ax_t.legend(fontsize=7)
    ax_h.legend(fontsize=7)
    fig.suptitle(rec["title"], fontsize=9)
    fig.tight_layout()
    figures.thin_ticks(fig, ax_h, "x")
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"calls": 2000, "size": "16K", "noise": "memory"}


PLUGIN = plugins.Study(
    help="allreduce call times quiet and beside a background load: median, p95, tail share, clusters",
    facts=plugins.StudyFacts(order=9, section=SECTION, minutes=0.1),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
)
