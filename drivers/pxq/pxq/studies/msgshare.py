"""`pxq study msgdist`: the share of messages and bytes on each channel for the NAS proxies (or
any MPI program's profile) on a machine model, block allocation, beside Chai et al.'s table
(NAS class B, 16 processes on 4 nodes x 2 chips x 2 cores) and the even distribution."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from pxq import figures
from pxq.analysis.messages import msgdist
from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.core import plugins, records, registry
from pxq.core.errors import InputError
from pxq.experiments import runner
from pxq.experiments.studykit import Context, Outcome, profile_app
from pxq.figures import channelbars

SECTION = "message_distribution"
CH = msgdist.CHANNELS
CLOSE = 10.0  # percentage points: a channel's share "matches" the paper's within this


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="machine model NODESxSOCKETSxCORES (default 4x2x2, the paper's)")
    p.add_argument("--apps", help=f"proxies to profile (default {','.join(registry.nas_apps())})")
    p.add_argument("--profiles", nargs="+", type=Path, help="classify these pxq profile files instead of running")


def shares(rec: dict[str, Any], model: msgdist.Model) -> dict[str, Any]:
    """Per channel, % of messages and of bytes between ranks (self apart), block allocation."""
    t = msgdist.tally(rec, msgdist.place(model, rec["ranks"], "block"), "all")
    count = {c: sum(r[c] for r in t.count) for c in msgdist.ALL_CHANNELS}
    nbytes = {c: sum(r[c] for r in t.nbytes) for c in msgdist.ALL_CHANNELS}
    n, b = sum(count[c] for c in CH) or 1, sum(nbytes[c] for c in CH) or 1
    return {
        "messages": [round(100 * count[c] / n, 1) for c in CH],
        "bytes": [round(100 * nbytes[c] / b, 1) for c in CH],
        "self_bytes_percent": round(100 * nbytes["self"] / max(1, sum(nbytes.values())), 1),
    }


def _text(v: list[float]) -> str:
    return " / ".join(f"{x:.0f}" for x in v)


PAPER_CLASS = "B"  # the class of the paper's rows


def _app_finding(app: str, here: dict[str, Any], paper: dict[str, Any], cls: str | None = None) -> list[Finding]:
    """The messages and bytes parts of the paper's row for the app (a check where the paper
    has no row for it). CLS, the class the profile ran at, is named beside the shares; at
    another class than the paper's the reason says so (shares can change with the size)."""
    key = app.upper()
    if key not in paper["messages_percent"] or f"{SECTION}/{app}" not in {e.ref for e in findings.distinct()}:
        return [
            findings.check(
                f"{app}: shares per channel (no published row)",
                _text(here["messages"]),
                "cannot be tested here",
                "no published row for it in pxq's catalogue",
            )
        ]
    out = []
    for part, mine, theirs in (
        ("messages", here["messages"], paper["messages_percent"][key]),
        ("bytes", here["bytes"], paper["bytes_percent"][key]),
    ):
        gap = max(abs(a - b) for a, b in zip(mine, theirs))
        why = f"largest gap {gap:.0f} points"
        at = f" at class {cls}" if cls else ""
        shown = f"{_text(mine)}{at} (paper {_text(theirs)}, class {PAPER_CLASS})"
        if cls and cls != PAPER_CLASS:
            why += f"; measured at class {cls}, the paper's is {PAPER_CLASS} (--full, or --class {PAPER_CLASS})"
        out.append(findings.held(f"{SECTION}/{app}/{part}", shown, gap <= CLOSE, f"{why} (> {CLOSE:.0f})", why))
    return out


def _summary(rows: list[dict[str, Any]], even: list[float]) -> list[Finding]:
    mine = [r for r in rows if r["app"] in registry.nas_apps()]
    out = [findings.untestable(f"{SECTION}/on_node/other_nas", "pxq has no BT, SP or LU proxy")]
    names = ", ".join(a.upper() for a in registry.nas_apps())
    if {r["app"] for r in mine} != set(registry.nas_apps()):
        out.append(findings.untestable(f"{SECTION}/on_node/pxq_apps", f"needs the profiles of {names}"))
        return out
    on_node = [r["messages"][0] + r["messages"][1] for r in mine]
    mean = statistics.mean(on_node)
    even_on = even[0] + even[1]
    here = f"{mean:.0f}% on the node against {even_on:.0f}% even (mean of {names})"
    why = "less than twice the even share stays on the node"
    out.append(findings.held(f"{SECTION}/on_node/pxq_apps", here, mean >= 2 * even_on, why))
    return out


# The size dimension (the paper's NAMD and HPL figures): judged on profiles of those programs,
# named by the profiled program ("namd2", "xhpl"), given with --profiles, at the paper's rank
# counts on nodes of 2 chips x 2 cores. (program, ranks) -> the parts such a profile tests.
NAMD_RANGE, HPL_MESSAGES, HPL_BYTES = "4K-64K", "256B-4K", ">256K"
NAMD_CHANNELS, HPL_16X4 = (10.0, 30.0, 60.0), (15.0, 42.0, 43.0)
SIZE_SETUPS = {
    ("namd", 16): ("namd_range", "namd_channels"),
    ("hpl", 16): ("hpl_range", "hpl_on_node"),
    ("hpl", 64): ("hpl_16x4",),
}
PROGRAMS = {"namd": "NAMD", "hpl": "HPL"}


def by_size(rec: dict[str, Any], model: msgdist.Model) -> dict[str, Any]:
    """Per size range: % of the messages and of the bytes between ranks, and the channels' shares
    of that range's messages (block allocation)."""
    t = msgdist.tally(rec, msgdist.place(model, rec["ranks"], "block"), "all")
    n = sum(t.count[i][c] for i in range(len(t.count)) for c in CH) or 1
    b = sum(t.nbytes[i][c] for i in range(len(t.nbytes)) for c in CH) or 1
    out = {}
    for i, name in enumerate(msgdist.ranges()):
        cnt = sum(t.count[i][c] for c in CH)
        out[name] = {
            "messages": round(100 * cnt / n, 1),
            "bytes": round(100 * sum(t.nbytes[i][c] for c in CH) / b, 1),
            "channels": [round(100 * t.count[i][c] / cnt, 1) if cnt else 0.0 for c in CH],
        }
    return out


def size_program(name: str) -> str | None:
    """ "namd" or "hpl" when the profiled program is NAMD's or HPL's (namd2, namd3, xhpl)."""
    low = name.lower()
    return "namd" if low.startswith("namd") else "hpl" if low in ("xhpl", "hpl") else None


def _close(ref: str, mine: list[float], paper: tuple[float, ...], empty: str = "") -> Finding:
    gap = max(abs(a - b) for a, b in zip(mine, paper))
    shown = f"{_text(mine)} (paper {_text(list(paper))})"
    if empty:
        return findings.held(ref, shown, False, empty)
    return findings.held(
        ref, shown, gap <= CLOSE, f"largest gap {gap:.0f} points (> {CLOSE:.0f})", f"largest gap {gap:.0f} points"
    )


def _size_parts(part: str, prof: dict[str, Any], model: msgdist.Model) -> Finding:
    ref, sizes = f"{SECTION}/sizes/{part}", by_size(prof, model)
    if part == "namd_range":
        rng = sizes[NAMD_RANGE]
        here = f"{rng['messages']:.0f}% of messages, {rng['bytes']:.0f}% of bytes at {NAMD_RANGE}"
        return findings.held(ref, here, min(rng["messages"], rng["bytes"]) > 90, "90% or less of them at 4-64 KB")
    if part == "namd_channels":
        rng = sizes[NAMD_RANGE]
        return _close(ref, rng["channels"], NAMD_CHANNELS, "" if rng["messages"] else f"no message at {NAMD_RANGE}")
    if part == "hpl_16x4":
        return _close(ref, shares(prof, model)["messages"], HPL_16X4)
    if part == "hpl_range":
        most = (max(sizes, key=lambda r: sizes[r]["messages"]), max(sizes, key=lambda r: sizes[r]["bytes"]))
        here = f"most messages at {most[0]}, most bytes at {most[1]}"
        why = f"the paper's ranges are {HPL_MESSAGES} (messages) and {HPL_BYTES} (bytes)"
        return findings.held(ref, here, most == (HPL_MESSAGES, HPL_BYTES), why)
    on_node = sum(sizes[r]["messages"] * sum(sizes[r]["channels"][:2]) / 100 for r in sizes)
    return findings.held(ref, f"{on_node:.0f}% of messages on the node", on_node >= 90, "under 90%")


def _sizes(got: list[tuple[str, dict]], model: msgdist.Model) -> tuple[list[Finding], list[Comparison]]:
    """The size dimension: NAMD's and HPL's parts from their profiles (else why not, and how to
    test them), and every profile's messages per size range beside them."""
    found, comparison, seen, wrong = [], [], set(), {}
    for name, prof in got:
        sizes = by_size(prof, model)
        shown = " / ".join(f"{sizes[r]['messages']:.0f}" for r in sizes)
        comparison.append(Comparison(f"{name}: % of messages per size range", "-", shown, " / ".join(sizes)))
        setup = (size_program(name) or "", int(prof["ranks"]))
        if setup in SIZE_SETUPS and (model.sockets, model.cores) == (2, 2) and setup not in seen:
            seen.add(setup)
            found += [_size_parts(part, prof, model) for part in SIZE_SETUPS[setup]]
        elif setup[0]:
            wrong[setup[0]] = f"; the profile of {name} has {prof['ranks']} ranks on model {model}"
    for (key, ranks), parts in SIZE_SETUPS.items():
        if (key, ranks) not in seen:
            shape = f" (model {ranks // 4}x2x2)" if ranks != 16 or (model.sockets, model.cores) != (2, 2) else ""
            prog = PROGRAMS[key]
            why = (
                f"pxq has no {prog} proxy: profile {prog} at {ranks} ranks (pxq profile -- PROGRAM ...) "
                f"and give the file to pxq study msgdist --profiles{shape}{wrong.get(key, '')}"
            )
            found += [findings.untestable(f"{SECTION}/sizes/{p}", why) for p in parts]
    return found, comparison


def _profiles(ctx: Context, opts: dict[str, Any], model: msgdist.Model) -> tuple[list[tuple[str, dict]], list[dict]]:
    if opts.get("profiles"):
        return [(msgdist.program_name(p), p) for p in (msgdist.load(f) for f in opts["profiles"])], []
    out, recs = [], []
    for app in [a for a in opts["apps"].split(",") if a]:
        prof, rec = profile_app(ctx, app, model.slots, runner.class_args(app, opts["cls"]))
        if rec is not None:
            recs.append(rec)
        if prof is not None:
            out.append((app, prof))
    return out, recs


def run(ctx: Context, opts: dict[str, Any]) -> Outcome:
    model = msgdist.parse_model(opts["model"])
    paper = findings.section(SECTION)
    got, recs = _profiles(ctx, opts, model)
    for name, prof in got:
        if prof["ranks"] > model.slots:
            raise InputError(f"{name}: {prof['ranks']} ranks do not fit model {model}: use a larger --model")
    rows = [{"app": name, "ranks": prof["ranks"], **shares(prof, model)} for name, prof in got]
    even_d = msgdist.even_distribution(msgdist.place(model, model.slots, "block"))
    even = [round(100 * even_d[c], 1) for c in CH]
    comparison = [Comparison("even distribution", _text(paper["even_distribution_percent"]), _text(even), str(model))]
    cls = None if opts.get("profiles") else opts["cls"]
    found = [f for r in rows for f in _app_finding(r["app"], r, paper, cls)]
    found += _summary(rows, even)
    sized, by_range = _sizes(got, model)
    found += sized
    comparison += by_range
    for r in rows:
        if r["self_bytes_percent"]:
            comparison.append(
                Comparison(f"{r['app']}: bytes a rank sends itself", "-", f"{r['self_bytes_percent']}%", "shown apart")
            )
    cls = "" if opts.get("profiles") else f", class {opts['cls']}"
    title = f"Message distribution on model {model} (block allocation{cls}): shares per channel"
    notes = ["the profiles ran oversubscribed where ranks exceed cores: counts are exact, times are not"]
    code = None if got else records.EXIT_RUN_FAILED
    return Outcome(title, rows, comparison, found, recs, notes, {"paper": paper, "even": even}, code)


def plot(rec: dict[str, Any], path: Path) -> Path:
    """Stacked channel shares per app, the paper's bar beside this machine's, the even one last."""
    plt = figures.pyplot()
    paper = rec.get("data", {}).get("paper", {})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, what in zip(axes, ("messages", "bytes")):
        labels, stacks = [], []
        for r in rec["rows"]:
            key = r["app"].upper()
            if key in paper.get(f"{what}_percent", {}):
                labels.append(f"{key}\npaper")
                stacks.append(paper[f"{what}_percent"][key])
            labels.append(f"{key}\nhere")
            stacks.append(r[what])
        labels.append("even")
        stacks.append(rec.get("data", {}).get("even", [0, 0, 0]))
        bottom = [0.0] * len(labels)
        for i, c in enumerate(CH):
            vals = [s[i] for s in stacks]
            ax.bar(labels, vals, bottom=bottom, color=channelbars.COLOURS[c], label=msgdist.CHANNEL_TEXT[c])
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"% of {what} between ranks")
        ax.set_xlabel("benchmark: the paper's shares beside this machine's")
        ax.tick_params(axis="x", labelsize=7)
    axes[0].legend(fontsize=7, loc="lower left")
    fig.suptitle(rec["title"], fontsize=9)
    return figures.save(fig, path)


def defaults(quick: bool) -> dict[str, Any]:
    return {"model": "4x2x2", "apps": ",".join(registry.nas_apps()), "cls": "S" if quick else "B", "profiles": None}


PLUGIN = plugins.Study(
    help="message and byte shares per channel for the NAS proxies (or any profile) beside the paper's table",
    facts=plugins.StudyFacts(order=1, section=SECTION, minutes=0.1),
    hooks=plugins.StudyHooks(add, defaults, run, plot),
    name="msgdist",
)
