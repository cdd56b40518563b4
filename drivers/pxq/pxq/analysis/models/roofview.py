"""What `pxq roofline` prints: the ceilings in a line, the drift of the machine against them,
the table of configurations, the phases, the summary sentences and the order of each app's
variants, worded from pxq.analysis.models.roofline's points and pair judgments. Nothing here measures or
predicts; the command only calls these in order."""

from __future__ import annotations

import math
from typing import Any

from rich.table import Table

from pxq.analysis.models import drift, ordering, roofline
from pxq.core.escape import term
from pxq.core.layout import format_bytes
from pxq.machine import ceilings as ceil

NEAR = 0.25  # a prediction within this of the measured median counts as near


def variant(p: dict[str, Any]) -> str:
    """Layout, mode, tile and the back end where it is not the default (a Kokkos run beside its
    OpenMP twin is another row). A tiled run whose tile is 0 is one --tile auto left untiled."""
    backend = f" {p['backend']}" if p.get("backend") not in (None, "openmp") else ""
    tile = (
        f" {format_bytes(p['tile'])}" if p["tile"] else " auto: off" if p["mode"] == "tiled" and p["tile"] == 0 else ""
    )
    return f"{p['layout']} {p['mode']}" + tile + backend


def label(p: dict[str, Any]) -> str:
    size = p["size"] if isinstance(p["size"], str) else format_bytes(p["size"])
    return f"{p['app']} {size} {variant(p)}"


def kinds_text(c: dict[str, Any]) -> str:
    """Each access kind's rate per core at its smallest and largest measured size, all cores busy."""
    n, parts = c["cores"], []
    for kind, spec in ceil.kinds().items():
        curve = (c.get("kinds") or {}).get(kind)
        if curve:
            unit = "GFlop/s" if spec["unit"] == "gflops" else "GB/s"
            lo, hi = curve[0], curve[-1]
            parts.append(
                f"{kind} {ceil.at(lo['rate'], n) / n:.1f} ({format_bytes(lo['bytes'])}) to "
                f"{ceil.at(hi['rate'], n) / n:.1f} ({format_bytes(hi['bytes'])}) {unit}"
            )
    return ("access kinds per core with " + str(n) + " cores busy: " + ", ".join(parts)) if parts else ""


def ceilings_text(c: dict[str, Any]) -> str:
    n = c["cores"]
    parts = [f"peak {ceil.at(c['peak_gflops'], 1):.1f} GFlop/s per core"]
    for (name, alone), (_, busy) in zip(ceil.roofs(c, 1), ceil.roofs(c, n)):
        parts.append(f"{name} {alone:.1f}/{busy / n:.1f}")
    return ", ".join(parts) + f" GB/s per core alone/with {n} cores busy"


def ceilings_lines(c: dict[str, Any]) -> list[str]:
    """The ceilings as kept, the access kinds, the knee, and each implausible ceiling (rich markup)."""
    out = [f"ceilings ({c['cpu_model']}, measured {c['date']}): {ceilings_text(c)}"]
    kinds = kinds_text(c)
    out += [kinds] if kinds else []
    out.append(ceil.knee_text(c))
    for problem in ceil.implausible(c):
        out.append(
            f"[yellow]implausible ceiling, not kept[/yellow] ({problem}): the machine was busy while it was "
            "measured; run again on an idle machine (the predictions below use it as measured)"
        )
    return out


def drift_lines(refs: list[dict[str, Any]], c: dict[str, Any]) -> tuple[list[str], drift.Factors | None]:
    """The references' factors (None without references) and what to say of them: per curve and
    size, how far from the kept ceilings and how far they moved while the runs were taken."""
    if not refs:
        return [
            "[dim]no references among the records: the ceilings are used as kept; on a shared host, "
            "`pxq probe reference` beside the runs lets pxq scale them to the runs' time (docs/ROOFLINE.md)[/dim]"
        ], None
    fs = drift.factors(refs, c)
    n = c["cores"]
    out: list[str] = []
    moved, summary = [], drift.summary(fs, n)
    for curve in ["stream", *ceil.kinds()]:
        rows = [s for s in summary if s["curve"] == curve]
        if not rows:
            continue
        parts = [
            f"{format_bytes(s['bytes'])} {s['median']:.2f}{'*' if s['within_noise'] else ''} "
            f"({s['min']:.2f} to {s['max']:.2f})"
            for s in rows
        ]
        out.append(f"drift of {curve}, {n} cores busy, x the kept ceilings: " + ", ".join(parts))
        moved += [
            f"{curve} {format_bytes(s['bytes'])}" for s in rows if s["quartiles"][1] > (1 + NEAR) * s["quartiles"][0]
        ]
    refs_n = sum(s["references"] for s in summary)
    out.append(f"[dim]{refs_n} reference(s): each run is predicted against the ceilings scaled to its start[/dim]")
    if any(s["within_noise"] for s in summary):
        out.append(
            "[dim]*: the kept ceiling lies within the references' quartiles (all of them), a move they cannot "
            "tell from their own noise; each run is scaled only where the references near it agree the machine "
            "moved[/dim]"
        )
    if moved:
        out.append(
            f"[yellow]the machine moved more than {NEAR:.0%} while the runs were taken[/yellow] (the references' "
            f"quartiles, {', '.join(moved)}): the predictions between references carry that uncertainty"
        )
    return out, fs


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
            term(label(p)),
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
                term(label(p)) if i == 0 else "",
                term(row["phase"]),
                f"{row['measured']:.4f}",
                f"{row['predicted']:.4f}",
                said if row["measured"] > 0 else "-",
                term(row["binding"]),
                end_section=i == len(rows) - 1,
            )
    return t


def summary_lines(pts: list[dict[str, Any]]) -> list[str]:
    """How many configurations were predicted near their median, how many no faster than their
    roof, and which ran above their physical roof (plain text)."""
    near = sum(abs(p["ratio"] - 1) <= NEAR for p in pts)
    bound = sum(p["ratio"] <= 1 + NEAR for p in pts)
    above = [label(p) for p in pts if p["of_roof"] > roofline.ROOF_SLACK]
    return [
        f"{near} of {len(pts)} configuration(s) predicted within {NEAR:.0%} of the measured median",
        f"{bound} of {len(pts)} no faster than their roof allows (predicted/measured at most {1 + NEAR:.2f}); "
        "far below 1: the kernel does not reach its ceiling (irregular access, latency, or flops the "
        "vector units do not fill); above: fewer bytes moved than declared (the compiler fused sweeps, "
        "or data stayed in a cache the model gave to others)",
        "of phys. roof: the time the peak flop rate and the memory bandwidth (with the run's cores busy) allow "
        "the declared phases, over the time they took: how close each run came to the hardware"
        + (
            f"; above 100% (!): {', '.join(above)}: faster than memory allows, so its data stayed in a cache "
            "(a working set that fits; the compulsory bytes were not all fetched from memory)"
            if above
            else ""
        ),
        *[f"tiles that cannot pay here, {label(p)}: {p['no_pay']}" for p in pts if p.get("no_pay")],
    ]


def _wider(a: dict[str, Any], b: dict[str, Any]) -> str:
    """ " (+-6.4%)" where the rounds tie a pair only within a wider margin than the rule's."""
    m = ordering.tie_margin(a, b)
    return f" (+-{m:.1%})" if m is not None and m > ordering.ORDER_RULE.equivalence + 1e-9 else ""


def order_rule(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """Why the runs tie these pairs: paired rounds that show them equivalent, a rank-sum test,
    overlapping ranges, or several of these."""
    rules = []
    for a, b in pairs:
        if ordering.measured_order(a, b)[1]:
            rules.append(
                f"their paired rounds show them equivalent within +-{ordering.ORDER_RULE.equivalence:.0%}"
                " or the wider margin named"
            )
        elif min(a["runs"], b["runs"]) >= ordering.ORDER_TEST_RUNS:
            rules.append(f"rank-sum p >= {ordering.ORDER_P}")
        else:
            rules.append("their ranges overlap")
    return ", or ".join(dict.fromkeys(rules))


def order_text(tau: float | None, pr: dict[str, Any]) -> str:
    """How well the prediction orders one app's variants: tau-b against the order the runs
    measure, the medians' tau, the ordered pairs predicted right, and the pairs the runs leave
    unordered."""
    if tau is None:
        said = "fewer than 3 configurations: not judged"
    elif pr["tau_b"] is not None:
        said = (
            f"Kendall's tau-b {pr['tau_b']:.2f} against the order the runs measure (a pair they tie counts "
            f"as a tie), Kendall's tau {tau:.2f} on the medians alone"
        )
    elif pr.get("alike_all"):
        said = (
            f"Kendall's tau-b not judged: the prediction puts every settled pair within +-"
            f"{ordering.ORDER_RULE.equivalence:.0%} (it does not separate these variants) while the runs order "
            f"some, Kendall's tau {tau:.2f} on the medians alone"
        )
    else:
        said = (
            "Kendall's tau-b not judged: the runs order no pair (they differ less than their noise) or settle "
            f"fewer than 3, Kendall's tau {tau:.2f} on the medians alone"
        )
    if pr.get("paired"):
        said += f"; {pr['paired']} of {pr['pairs']} pair(s) judged on paired rounds of one sweep"
    if pr["ordered"]:
        said += f"; of the {pr['ordered']} pair(s) the runs order, {pr['agree']} predicted in that order"
        if pr.get("ordered_alike"):
            said += f" and {pr['ordered_alike']} predicted alike"
    if pr["unordered"]:
        names = "; ".join(f"{variant(a)} / {variant(b)}{_wider(a, b)}" for a, b in pr["unordered"])
        said += f"; tied by the runs ({order_rule(pr['unordered'])}): {names}"
    if pr.get("predicted_alike"):
        names = "; ".join(f"{variant(a)} / {variant(b)}" for a, b in pr["predicted_alike"])
        said += (
            f"; predicted alike (within +-{ordering.ORDER_RULE.equivalence:.0%}, or closer than the spread of the "
            f"ceilings' own runs could move them): {names}"
        )
    if pr.get("unsettled"):
        names = "; ".join(f"{variant(a)} / {variant(b)}" for a, b in pr["unsettled"])
        said += (
            "; unsettled on their paired rounds (neither an order nor equivalence within "
            f"+-{ordering.ORDER_RULE.equivalence:.0%}; left out of tau-b, more blocks would settle them): {names}"
        )
    return said


def order_lines(pts: list[dict[str, Any]]) -> list[str]:
    """Per app, how well the prediction orders its variants."""
    pairs = ordering.pairs_per_app(pts)
    return [
        f"order of the variants predicted, {app}: {order_text(tau, pairs[app])}"
        for app, tau in ordering.kendall_per_app(pts).items()
    ]
