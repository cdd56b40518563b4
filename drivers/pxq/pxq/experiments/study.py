"""The contention study's plan, summary, table and figure (pxq.studies.contention runs it):
the same app and problem on q cores arranged as 1xq, (q/2)x2 and
qx1 (virtual or real nodes), with the ranks of a node packed (on cores sharing caches) or
spread (as far apart as the node allows), repeats interleaved; times normalised to the qx1
run, where no two ranks share a node's caches or memory bus. pxq.figures.contention draws it."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.verdicts import plausible, settle
from pxq.core.errors import InputError
from pxq.core.escape import term
from pxq.core.layout import Layout
from pxq.experiments import runner
from pxq.machine import counters

PLACEMENTS = ("packed", "spread")


def contention_layouts(q: int) -> list[Layout]:
    """1xq, (q/2)x2 and qx1, without repeats (for q = 2 the middle one is 1x2 again)."""
    if q < 2:
        raise InputError(f"--ranks {q}: contention needs at least 2 ranks (ranks sharing a node)")
    out = [Layout(1, q, 1)]
    if q % 2 == 0 and q // 2 not in (1, q):
        out.append(Layout(q // 2, 2, 1))
    out.append(Layout(q, 1, 1))
    seen, unique = set(), []
    for lay in out:
        if str(lay) not in seen:
            seen.add(str(lay))
            unique.append(lay)
    return unique


def plan(base: runner.RunSpec, q: int, placements: list[str]) -> list[runner.RunSpec]:
    """One configuration per layout and placement (one rank per node has nothing to place)."""
    for p in placements:
        if p not in PLACEMENTS:
            raise InputError(f"unknown placement '{p}': use {', '.join(PLACEMENTS)}")
    if not placements:
        raise InputError("--placements is empty: use packed, spread or both")
    configs = []
    for lay in contention_layouts(q):
        for p in placements if lay.ranks_per_node > 1 else placements[:1]:
            configs.append(replace(base, layout=lay, mode="flat", placement=p))
    return configs


def _sharing_text(rec: dict[str, Any]) -> str:
    pairs = rec.get("placement_summary", {}).get("rank_pairs_on_a_node", {})
    parts = [f"{n} {k.replace('same_', '').replace('other_package', 'other pkg')}" for k, n in pairs.items() if n]
    return ", ".join(parts) if parts else "none"


def _group(rec: dict[str, Any], key: tuple[str, str]) -> dict[str, Any]:
    """A new row for the layout and placement KEY, from its first record."""
    lay = rec["layout"]
    threads = [t for p in rec.get("placement", []) for t in p.get("threads", [])]
    return {
        "layout": key[0],
        "placement": key[1],
        "times": [],
        "rounds": [],
        "comm": [],
        "sharing": _sharing_text(rec),
        "verified": True,
        "warnings": rec["driver"].get("placement", {}).get("warnings", []),
        "cores": sorted({t["cpu"] for t in threads if "cpu" in t}),
        "packages": sorted({t["package"] for t in threads if "package" in t}),
        "virtual_nodes": bool(lay.get("virtual_nodes")),
        "flags": [],
    }


def summarize(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in recs:
        if rec.get("status") not in ("ok", "failed") or "time" not in rec:
            continue
        lay = rec["layout"]
        key = (f"{lay['nodes']}x{lay['ranks_per_node']}", rec["driver"].get("placement", {}).get("mode", "-"))
        g = groups.get(key) or groups.setdefault(key, _group(rec, key))
        g["times"].append(rec["time"]["total"])
        g["rounds"].append(settle.round_of(rec))
        g["comm"].append(rec["time"].get("comm", 0.0))
        g["verified"] = g["verified"] and rec["status"] == "ok"
        counted = counters.misses(rec)  # with --counters: the outermost level counted
        if counted:
            g.setdefault("misses", []).append(counted[1])
            g["miss_level"] = counted[0]
    rows = list(groups.values())
    _normalise(rows)
    flag_identical(rows)
    return rows


def _normalise(rows: list[dict[str, Any]]) -> None:
    """Each row's median and compute time, and both over the first one-rank-per-node row's."""
    ref = [r for r in rows if r["layout"].endswith("x1")]
    ref_median = statistics.median(ref[0]["times"]) if ref else None
    ref_compute = statistics.median([t - c for t, c in zip(ref[0]["times"], ref[0]["comm"])]) if ref else None
    for r in rows:
        r["median"] = statistics.median(r["times"])
        r["compute"] = statistics.median([t - c for t, c in zip(r["times"], r["comm"])])
        r["normalised"] = r["median"] / ref_median if ref_median else None
        r["compute_normalised"] = r["compute"] / ref_compute if ref_compute else None
        if r.get("misses"):
            r["misses_median"] = statistics.median(r["misses"])


def flag_identical(rows: list[dict[str, Any]]) -> None:
    """Rows of one layout on the same cores under two placement names are one configuration:
    medians further apart than their spreads flag both (plausible.identical)."""
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if a["layout"] == b["layout"] and a["cores"] and a["cores"] == b["cores"]:
                label = f"{a['layout']} {a['placement']} and {b['placement']} (both on cores {a['cores']})"
                flag = plausible.identical(label, a["times"], b["times"])
                if flag:
                    a["flags"].append(flag)
                    b["flags"].append(flag)


def print_rows(rows: list[dict[str, Any]], title: str, console: Console) -> None:
    t = Table(title=title)
    with_misses = any(r.get("misses_median") is not None for r in rows)
    for col in (
        "layout",
        "placement",
        "rank pairs on a node share",
        "runs",
        "median s",
        "spread",
        "comm %",
        "vs qx1",
        "compute s",
        "compute vs qx1",
        *(["misses"] if with_misses else []),
        "verified",
    ):
        t.add_column(col, justify="left" if col in ("layout", "placement", "rank pairs on a node share") else "right")
    for r in rows:
        spread = (max(r["times"]) - min(r["times"])) / r["median"] if r["median"] > 0 else 0.0
        comm = statistics.median(r["comm"]) / r["median"] if r["median"] > 0 else 0.0
        t.add_row(
            term(r["layout"]),
            term(r["placement"]),
            term(r["sharing"]),
            str(len(r["times"])),
            f"{r['median']:.4f}",
            f"{100 * spread:.1f}%",
            f"{100 * comm:.1f}%",
            (f"{r['normalised']:.2f}x" if r["normalised"] else "-") + (" (!)" if r.get("flags") else ""),
            f"{r['compute']:.4f}",
            f"{r['compute_normalised']:.2f}x" if r["compute_normalised"] else "-",
            *([_misses_text(r)] if with_misses else []),
            "yes" if r["verified"] else "NO",
        )
    console.print(t)
    console.print("compute: total minus the app's exposed communication, where shared caches and memory show")
    for flag in dict.fromkeys(f for r in rows for f in r.get("flags", [])):
        console.print(f"(!) implausible: {flag}", markup=False)


def _misses_text(r: dict[str, Any]) -> str:
    if r.get("misses_median") is None:
        return "-"
    return f"{r['misses_median']:.3g} {counters.label(r['miss_level'])}"
