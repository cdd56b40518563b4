"""`pxq study scalability`: each proxy's speedup over its 2-rank run, packed (the ranks fill a
node's cores) and one rank per (virtual) node, beside Chai et al.'s findings."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.verdicts import findings, plausible
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.analysis.verdicts.paired import judge_rows
from pxq.core import plugins, registry
from pxq.core.layout import parse_layout
from pxq.experiments import runner
from pxq.experiments.studykit import (
    Context,
    Outcome,
    exit_code,
    group,
    layout_text,
    measure,
    one_machine,
)
from pxq.machine import envinfo

SECTION = "scalability"


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--apps", help=f"proxies (default {','.join(registry.nas_apps())})")
    p.add_argument("--max-ranks", type=int, help="largest rank count (default: every core)")
    p.add_argument("--repeat", type=int, help="interleaved repeats (default 5 quick, 7 full)")


def counts(top: int) -> list[int]:
    """1, 2, 4, ... up to top."""
    out, n = [], 1
    while n <= top:
        out.append(n)
        n *= 2
    return out


def layout_of(n: int, how: str) -> str:
    return f"1x{n}" if how == "packed" else f"{n}x1"


def untestable(opts: dict[str, Any]) -> str | None:
    """Why no part can be judged here, known before any run; None when they can."""
    return too_few(opts["max_ranks"] or envinfo.cores())


def too_few(top: int) -> str | None:
    """Why no part can be judged with TOP ranks; None when they can."""
    if top < 4:
        return f"speedup over the 2-rank run needs 4 or more ranks ({top} cores here; real nodes with --hostfile)"
    return None


def _configs(ctx: Context, apps: list[str], top: int, cls: str) -> list[Any]:
    """Each app flat at every rank count, packed and (above one rank) one rank per node."""
    return [
        ctx.spec(app, layout=parse_layout(layout_of(n, how)), mode="flat", app_args=runner.class_args(app, cls))
        for app in apps
        for n in counts(top)
        for how in (("packed", "spread") if n > 1 else ("packed",))
    ]


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    top = opts["max_ranks"] or envinfo.cores()
    apps = [a for a in opts["apps"].split(",") if a]
    base_n = 2 if top >= 2 else 1
    title = f"Scalability: speedup over {base_n} ranks, packed vs one rank per node (class {opts['cls']})"
    if ctx.verdicts_only and too_few(top):
        note = f"not measured: {too_few(top)}; `pxq study scalability` draws this machine's speedups without a verdict"
        ctx.console.print(note)
        return Outcome(title, [{"app": "-"}], [], _parts([], top, None), [], [note], {"base_ranks": base_n}, 0)
    configs = _configs(ctx, apps, top, opts["cls"])
    top_pairs = [  # packed against one rank per node at the largest count, per app: what the parts judge
        (k, k + 1)
        for k, spec in enumerate(configs[:-1])
        if spec.layout == parse_layout(layout_of(top, "packed"))
        and configs[k + 1].layout == parse_layout(layout_of(top, "spread"))
    ]
    recs, planned = measure(ctx, configs, opts["repeat"], "scalability", pairs=top_pairs if top >= 4 else None)
    groups = group(recs, lambda r: (r["app"], layout_text(r)))
    rows = speedups(groups, apps, top, base_n, lighter(recs))
    comparison = [
        Comparison(
            f"{r['app']} {r['ranks']} ranks {r['how']}",
            "",
            f"{r['speedup']:.2f}x" + (" (!)" if r["flags"] else ""),
            f"median {r['median']:.3f} s, spread {100 * r['spread']:.0f}%"
            + ("; implausible, see the notes" if r["flags"] else ""),
        )
        for r in rows
    ]
    found = _parts(rows, top, one_machine(recs))
    notes = [f"implausible: {f}" for r in rows for f in r["flags"]] + [r["note"] for r in rows if r.get("note")]
    data, code = {"base_ranks": base_n}, exit_code(recs, planned)
    return Outcome(title, rows or [{"app": "-"}], comparison, found, recs, notes, data, code)


LIGHTER = (
    "{label}: {speedup:.2f}x, not judged: its runs skip work the base's ranks do (IS on one rank counts its keys "
    "without the bucket sort that ranks exchanging keys need)"
)


def lighter(recs: list[dict[str, Any]]) -> frozenset[tuple[str, str]]:
    """The (app, layout) whose runs did less work than the same app on more ranks: IS on one rank
    (its record's variant.buckets false)."""
    return frozenset(
        (r["app"], layout_text(r))
        for r in recs
        if isinstance(r.get("variant"), dict) and r["variant"].get("buckets") is False
    )


def speedups(
    groups: dict[Any, dict[str, Any]],
    apps: list[str],
    top: int,
    base_n: int,
    skips: frozenset[tuple[str, str]] = frozenset(),
) -> list[dict[str, Any]]:
    """Each app's speedup and parallel efficiency per rank count and arrangement over the
    base_n-rank packed run, flagged where the cores cannot explain them; a configuration in
    `skips` (lighter()) is noted, not flagged: its work is not the base's."""
    rows = []
    for app in apps:
        base = groups.get((app, layout_of(base_n, "packed")))
        for n in counts(top):
            for how in ("packed", "spread") if n > 1 else ("packed",):
                g = groups.get((app, layout_of(n, how)))
                if g is None or base is None:
                    continue
                speedup = base["median"] / g["median"]
                label = f"{app} {n} rank(s) {how} over {base_n}"
                # A speedup above the cores' ratio (an efficiency past 115%: caches add some) is flagged.
                skipped = (app, layout_of(n, how)) in skips
                flag = None if skipped else plausible.speedup(label, speedup, n / base_n)
                flags = [flag] if flag else []
                rows.append(
                    {
                        "app": app,
                        "ranks": n,
                        "how": how,
                        "median": g["median"],
                        "spread": g["spread"],
                        "speedup": speedup,
                        "times": g["times"],
                        "rounds": [list(r) if r else None for r in g.get("rounds", [])],
                        "efficiency": speedup / (n / base_n),
                        "base_ranks": base_n,
                        "runs": len(g["times"]),
                        "flags": flags,
                        "note": LIGHTER.format(label=label, speedup=speedup) if skipped else "",
                    }
                )
    return rows


NO_PROXY = "pxq has no proxy of it"


def _parts(rows: list[dict[str, Any]], top: int, shared: str | None) -> list[Finding]:
    """Every part: packed against one rank per node at the largest count, on real nodes with 4
    or more ranks; never from a flagged row."""
    refs = {
        "ideal": ("mg", "lu"),
        "contention_bound": ("cg", "ft", "is"),
        "same": ("mg", "lu", "namd"),
    }
    why = too_few(top)
    if why is None and shared:
        why = f"{shared}: no single-core cluster to stand in for"
    at = {(r["app"], r["how"]): r for r in rows if r["ranks"] == top}
    out = []
    for name, apps in refs.items():
        for app in apps:
            ref = f"{SECTION}/{name}/{app}"
            packed, spread = at.get((app, "packed")), at.get((app, "spread"))
            if app not in registry.nas_apps():
                out.append(findings.untestable(ref, NO_PROXY))
            elif why is not None:
                out.append(findings.untestable(ref, why))
            elif packed is None or (name != "ideal" and spread is None):
                out.append(findings.untestable(ref, f"{app} left no run at {top} ranks"))
            else:
                out.append(_judge(ref, name, packed, spread, top))
    return out


def _judge(ref: str, name: str, packed: dict[str, Any], spread: dict[str, Any] | None, top: int) -> Finding:
    flags = packed["flags"] + (spread["flags"] if spread else [])
    base = packed["base_ranks"]
    if name == "ideal":
        here = f"packed {packed['speedup']:.2f}x of an ideal {top / base:.0f}x"
        return findings.held(ref, here, packed["speedup"] >= 0.8 * top / base, "below 80% of ideal", flags=flags)
    assert spread is not None
    gap = spread["speedup"] / packed["speedup"]
    noise = max(packed["spread"], spread["spread"])
    here = f"one per node / packed = {gap:.2f}x (spread {100 * noise:.0f}%)"
    if name == "contention_bound":
        if packed.get("times") and spread.get("times"):
            both = [
                {"times": g["times"], "rounds": [tuple(x) if x else None for x in g.get("rounds", [])]}
                for g in (packed, spread)
            ]
            verdict, why, evidence = judge_rows(both[0], both[1], True, 0.05)
            if evidence.get("paired"):
                p = evidence["paired"]
                here = (
                    f"one per node / packed = {p['ratio']:.2f}x [{p['lo']:.2f}-{p['hi']:.2f}] "
                    f"({p['rounds']} paired rounds)"
                )
            return findings.part(ref, here, verdict, why, flags=flags, evidence=evidence)
        verdict, why = findings.judge(gap, noise, min(packed["runs"], spread["runs"]), True, 0.05)
    else:
        return findings.held(ref, here, abs(gap - 1) <= max(0.1, noise / 2), "more than 10% apart", flags=flags)
    return findings.part(ref, here, verdict, why, flags=flags)


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
    flagged = [r for r in rows if r.get("flags")]  # implausible: marked where they are drawn
    if flagged:
        ax.scatter(
            [r["ranks"] for r in flagged],
            [r["speedup"] for r in flagged],
            s=140,
            facecolors="none",
            edgecolors="red",
            linewidths=1.5,
            zorder=5,
            label="implausible (see the notes)",
        )
        for r in flagged:
            ax.annotate(
                "!", (r["ranks"], r["speedup"]), color="red", fontsize=9, xytext=(6, 6), textcoords="offset points"
            )
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


def defaults(quick: bool) -> dict[str, Any]:
    return {
        "apps": ",".join(registry.nas_apps()),
        "cls": "A" if quick else "B",
        "max_ranks": None,
        "repeat": 5 if quick else 7,
    }


PLUGIN = plugins.Study(
    help="speedup over the 2-rank run per proxy, packed vs one rank per (virtual) node",
    facts=plugins.StudyFacts(order=6, section=SECTION, minutes=1.3),
    hooks=plugins.StudyHooks(add, defaults, run, plot, untestable),
)
