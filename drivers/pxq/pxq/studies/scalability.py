"""`pxq study scalability`: each proxy's speedup over its 2-rank run, packed (the ranks fill a
node's cores) and one rank per (virtual) node, beside Chai et al.'s findings."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import envinfo, figures, findings, runner
from pxq.findings import Comparison, Finding
from pxq.layout import parse_layout
from pxq.studies import Context, Outcome, exit_code, group, layout_text, measure

NAME = "scalability"
HELP = "speedup over the 2-rank run per proxy, packed vs one rank per (virtual) node"
SECTION = "scalability"
MINUTES = 1.5
APPS = False


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--apps", help="proxies (default cg,mg,ft)")
    p.add_argument("--max-ranks", type=int, help="largest rank count (default: every core)")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


def defaults(quick: bool) -> dict[str, Any]:
    return {"apps": "cg,mg,ft", "cls": "A" if quick else "B", "max_ranks": None, "repeat": 5 if quick else 7}


def counts(top: int) -> list[int]:
    """1, 2, 4, ... up to top."""
    out, n = [], 1
    while n <= top:
        out.append(n)
        n *= 2
    return out


def layout_of(n: int, how: str) -> str:
    return f"1x{n}" if how == "packed" else f"{n}x1"


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    top = opts["max_ranks"] or envinfo.cores()
    apps = [a for a in opts["apps"].split(",") if a]
    configs = []
    for app in apps:
        for n in counts(top):
            for how in ("packed", "spread") if n > 1 else ("packed",):
                configs.append(
                    ctx.spec(
                        app,
                        layout=parse_layout(layout_of(n, how)),
                        mode="flat",
                        app_args=runner.class_args(app, opts["cls"]),
                    )
                )
    recs, planned = measure(ctx, configs, opts["repeat"], "scalability")
    groups = group(recs, lambda r: (r["app"], layout_text(r)))
    base_n = 2 if top >= 2 else 1
    rows, comparison = [], []
    for app in apps:
        base = groups.get((app, layout_of(base_n, "packed")))
        for n in counts(top):
            for how in ("packed", "spread") if n > 1 else ("packed",):
                g = groups.get((app, layout_of(n, how)))
                if g is None or base is None:
                    continue
                speedup = base["median"] / g["median"]
                rows.append(
                    {
                        "app": app,
                        "ranks": n,
                        "how": how,
                        "median": g["median"],
                        "spread": g["spread"],
                        "speedup": speedup,
                        "base_ranks": base_n,
                    }
                )
                comparison.append(
                    Comparison(f"{app} {n} ranks {how}", "", f"{speedup:.2f}x", f"median {g['median']:.3f} s")
                )
    paper = findings.section(SECTION)
    found = []
    for text in paper["findings"]:
        if top < 4:
            found.append(
                Finding(
                    text,
                    "up to 16 ranks",
                    f"{top} cores",
                    "cannot be tested here",
                    "speedup over the 2-rank run needs 4 or more cores (or real nodes with --hostfile)",
                )
            )
        else:
            found.append(_judge(text, rows, top))
    title = f"Scalability: speedup over {base_n} ranks, packed vs one rank per node (class {opts['cls']})"
    return Outcome(
        title, rows or [{"app": "-"}], comparison, found, recs, [], {"base_ranks": base_n}, exit_code(recs, planned)
    )


def _judge(text: str, rows: list[dict[str, Any]], top: int) -> Finding:
    """Packed vs one-per-node speedup at the largest count: the contention-bound apps (CG, FT)
    should scale better spread; MG about the same."""
    at = {(r["app"], r["how"]): r for r in rows if r["ranks"] == top}
    gaps = {
        app: at[(app, "spread")]["speedup"] / at[(app, "packed")]["speedup"]
        for app, how in at
        if how == "packed" and (app, "spread") in at
    }
    here = ", ".join(f"{a} spread/packed {g:.2f}x" for a, g in gaps.items())
    if "scale better on the single-core" in text:
        bound = [g for a, g in gaps.items() if a in ("cg", "ft")]
        ok = bool(bound) and all(g > 1.05 for g in bound)
    elif "almost ideally" in text:
        mg = [r for r in rows if r["app"] == "mg" and r["ranks"] == top and r["how"] == "packed"]
        ok = bool(mg) and mg[0]["speedup"] >= 0.8 * top / rows[0]["base_ranks"]
        here = f"mg packed {mg[0]['speedup']:.2f}x" if mg else "-"
    else:
        ok = "mg" in gaps and abs(gaps["mg"] - 1) <= 0.1
    return Finding(text, "", here, "reproduced" if ok else "not reproduced")


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Speedup against ranks per app, packed solid and one-per-node dashed, ideal dotted."""
    plt = figures.pyplot()
    rows = [r for r in rec["rows"] if "speedup" in r]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    colours = {"cg": "tab:blue", "mg": "tab:green", "ft": "tab:red", "ring": "tab:purple"}
    for app in dict.fromkeys(r["app"] for r in rows):
        for how, style in (("packed", "o-"), ("spread", "s--")):
            pts = sorted(
                (r["ranks"], r["speedup"]) for r in rows if r["app"] == app and (r["how"] == how or r["ranks"] == 1)
            )
            if len(pts) > 1:
                ax.plot(*zip(*pts), style, color=colours.get(app, "black"), ms=4, label=f"{app} {how}")
    ranks = sorted({r["ranks"] for r in rows})
    base = rec.get("data", {}).get("base_ranks", 2)
    if ranks:
        ax.plot(ranks, [n / base for n in ranks], ":", color="grey", label="ideal")
    ax.set_xlabel("ranks")
    ax.set_ylabel(f"speedup over the {base}-rank run (medians)")
    ax.set_xticks(ranks)
    ax.legend(fontsize=7)
    ax.set_title(rec["title"], fontsize=9)
    return figures.save(fig, path)
