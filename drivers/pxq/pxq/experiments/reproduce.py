"""`pxq reproduce`: every published study in one go, one progress bar with an ETA, resumable,
and a report folder: report.md and a self-contained report.html with every table and figure
beside the machine's description.

The folder holds records/NAME.jsonl (each study's runs, probes and study record), figures/,
logs/NAME.log (each study's full output) and progress.json (which studies are done, so that
a second call with the same folder and mode carries on where the first stopped).

Over 400 lines: the progress bar, the resumable state and both renderings of the report (markdown
and self-contained HTML) share one model of the report."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import html
import math
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from pxq.analysis.verdicts import findings
from pxq.core import outputs, records
from pxq.core.errors import InputError
from pxq.core.escape import Console, md, plain
from pxq.core.progress import Steps
from pxq.core.records import RecordError
from pxq.experiments import runner
from pxq.experiments import studykit as studies
from pxq.experiments.options import launch_spec
from pxq.launch import netns
from pxq.machine import envinfo

PROGRESS = "progress.json"


def select(only: str | None) -> list[Any]:
    mods = list(studies.registry())
    if only is None:
        return mods
    names = [n.strip() for n in only.split(",") if n.strip()]
    if not names:
        raise InputError("--only is empty: name studies, e.g. --only channels,msgdist")
    for n in names:
        studies.get(n)  # unknown names are refused with the list
    return [m for m in mods if m.name in names]


def load_progress(folder: Path, mode: str) -> dict[str, Any]:
    path = folder / PROGRESS
    if not path.exists():
        return {"mode": mode, "done": {}}
    state = records.json_file(path, "not a progress file pxq writes: delete it to start the report over")
    done = state.get("done") if isinstance(state, dict) else None
    if not isinstance(done, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in done.items()):
        raise InputError(f'{path}: not a progress file pxq writes (no "done" by study): delete it to start over')
    if not isinstance(state.get("mode"), str) or not re.fullmatch(r"[a-z]{1,16}", state["mode"]):
        raise InputError(f"{path}: not a progress file pxq writes (no mode): delete it to start the report over")
    if state.get("mode") != mode:
        raise InputError(
            f"{folder} holds a {state.get('mode')} report: use --{state.get('mode')} to carry it on, "
            "or another --out folder"
        )
    return state


def save_progress(folder: Path, state: dict[str, Any]) -> None:
    """Written whole to a temporary file, then renamed: never a half-written progress file."""
    outputs.write(folder / PROGRESS, outputs.dumps(state, indent=1), "json", "--out")


@contextlib.contextmanager
def output_to(f: Any) -> Iterator[None]:
    """Standard output and error (this process's and its children's) into f for a while."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def run_one(mod: Any, folder: Path, base: runner.RunSpec, quick: bool, budget: float = 0.0) -> dict[str, Any]:
    """One study, all its output (the probes' and the apps' too) into logs/NAME.log; what
    progress.json keeps of it."""
    results = folder / "records" / f"{mod.name}.jsonl"
    log = folder / "logs" / f"{mod.name}.log"
    t0 = time.monotonic()
    with log.open("w", encoding="utf-8") as f, output_to(f):
        console = Console(file=f, width=160, force_terminal=False)
        ctx = studies.Context(
            console, results, base, quick, None, folder / "figures" / f"{mod.name}.png", budget, verdicts_only=True
        )
        try:
            code, rec, figure = studies.finish(ctx, mod.name, "-", mod.run(ctx, mod.defaults(quick)))
        except (InputError, RecordError) as e:
            console.print(f"error: {e}")
            return {"code": records.EXIT_BAD_INPUT, "error": str(e), "seconds": time.monotonic() - t0}
    return {
        "code": code,
        "record": str(results.relative_to(folder)),
        "figure": str(figure.relative_to(folder)),
        "verdicts": [f["verdict"] for f in rec["findings"] if f.get("kind", "part") == "part"],
        "checks": [f["verdict"] for f in rec["findings"] if f.get("kind") == "check"],
        "seconds": time.monotonic() - t0,
    }


def summary(entry: dict[str, Any]) -> str:
    if "error" in entry:
        return f"[red]error[/red]: {entry['error']}"
    counts = {v: entry["verdicts"].count(v) for v in findings.PART_VERDICTS if v in entry["verdicts"]}
    text = (", ".join(f"{n} {v}" for v, n in counts.items()) + " (parts)") if counts else "no parts measured"
    checks = entry.get("checks", [])
    if checks:
        # Every verdict the checks got, by name: "0 of 2 passed" would read as two failures when
        # both were inconclusive.
        got = ", ".join(f"{checks.count(v)} {v}" for v in findings.CHECK_VERDICTS if v in checks)
        text += f"; self-checks: {got}"
    bad = "" if entry["code"] == 0 else f" [red](exit {entry['code']}: see the log)[/red]"
    where = entry.get("cluster")
    at = f" on cluster '{where['name']}' ({where['nodes']} nodes, link {where['link']})" if where else ""
    return f"{text}{at} in {entry['seconds']:.0f} s{bad}"


def check_folder(folder: Path) -> None:
    """The report folder exists or can be made, and takes files: refused (exit 2) before any
    study runs, never an OSError (exit 3) after."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".pxq-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise InputError(f"--out {folder}: cannot write there ({e.strerror}): give another --out folder") from None


NETWORKED = {
    "allocation": 4,
    "sharing": 0,
}  # studies with parts across a network: the nodes each needs (0: one per core)


def _run_study(mod: Any, folder: Path, base: runner.RunSpec, quick: bool, args: Any, console: Any) -> dict[str, Any]:
    """One study; with --network, a study of NETWORKED on a cluster of this machine brought up
    for it alone (and taken down after it, however it ends), which its progress entry names."""
    budget = float(getattr(args, "budget", 0.0) or 0.0)
    profile = getattr(args, "cluster_link", None)
    if not profile or mod.name not in NETWORKED:
        return run_one(mod, folder, base, quick, budget)
    cores = envinfo.cores()
    nodes = NETWORKED[mod.name] or max(2, cores)
    with netns.around(profile, nodes, cores, cores, lambda s: console.print(f"{mod.name}: {s}")) as c:
        entry = run_one(mod, folder, base, quick, budget)
        entry["cluster"] = {"name": c.name, "nodes": c.nodes, "link": profile}
    return entry


def rests_on(f: dict[str, Any]) -> str:
    """What a part's verdict rests on, from its evidence: the paired rounds of one sweep (and
    whether the settled-comparison rule settled them), or the runs of each side and their spread;
    "-" for a count, an arithmetic check or a part not measured here."""
    ev = f.get("evidence") or {}
    paired = ev.get("paired") if isinstance(ev, dict) else None
    if isinstance(paired, dict) and paired.get("rounds"):
        state = paired.get("settled")
        said = f", {state}" if state and state != "unsettled" else ", not settled" if state == "unsettled" else ""
        return f"{paired['rounds']} paired rounds{said}"
    if isinstance(ev, dict) and isinstance(ev.get("repeats"), int):
        spread = ev.get("spread")
        return f"{ev['repeats']} runs each" + (f", spread {100 * spread:.0f}%" if isinstance(spread, float) else "")
    return "-"


def finished(entry: dict[str, Any] | None) -> bool:
    """Whether a study's progress entry is a finished study that a resume keeps: it ran to its
    record with exit 0. One that errored, or whose runs failed, is run again."""
    return isinstance(entry, dict) and entry.get("code") == records.EXIT_OK and "error" not in entry


def reproduce(console: Console, folder: Path, quick: bool, only: str | None, args: Any) -> int:
    mods = select(only)
    mode = "quick" if quick else "full"
    check_folder(folder)
    for sub in ("records", "logs", "figures"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    state = load_progress(folder, mode)
    todo = [m for m in mods if not finished(state["done"].get(m.name))]
    again = [m.name for m in todo if m.name in state["done"]]
    if len(todo) < len(mods):
        console.print(f"resuming {folder}: {len(mods) - len(todo)} of {len(mods)} studies already done")
    if again:
        console.print(f"retrying {len(again)} study(ies) that did not finish before: {', '.join(again)}")
    known = {}  # what is known before any run: said up front, and those studies run nothing
    for mod in todo:
        why = mod.untestable(mod.defaults(quick)) if mod.untestable else None
        if why:
            known[mod.name] = why
            console.print(f"{mod.name}: cannot be tested here, known before running ({why}): it runs nothing")
    weight = {m.name: 0.0 if m.name in known else m.minutes for m in todo}  # the estimate's shares
    base = launch_spec(args, folder / "records" / "x.jsonl")  # each study sets its own results
    # The progress bar writes to the terminal through its own copy of standard output, which
    # each study's redirection (output_to) leaves alone.
    term = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    screen = Console(file=term, force_terminal=term.isatty() or None, width=console.width)
    with (
        term,
        Steps(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=screen,
        ) as progress,
    ):
        task = progress.add_task("reproduce", total=sum(weight.values()) or 1, count="")
        for i, mod in enumerate(todo):
            progress.update(task, description=f"{mod.name} ({mode})", count=f"{i + 1}/{len(todo)}")
            entry = _run_study(mod, folder, base, quick, args, progress.console)
            state["done"][mod.name] = entry
            save_progress(folder, state)
            progress.console.print(f"{mod.name}: {summary(entry)}")
            progress.advance(task, weight[mod.name])
    md, page = write_report(folder, [m.name for m in mods], state)
    console.print(f"report: {md}\npage: {page}")
    codes = [state["done"][m.name]["code"] for m in mods]
    return max(codes, default=0)


def report_only(console: Console, folder: Path, mode: str, only: str | None) -> int:
    """Rewrites report.md and report.html from what the folder holds."""
    if not (folder / PROGRESS).exists():
        raise InputError(f"{folder} has no {PROGRESS}: run pxq reproduce first (or give --out)")
    state = load_progress(folder, mode)
    names = [m.name for m in select(only) if m.name in state["done"]]
    md, page = write_report(folder, names, state)
    console.print(f"report: {md}\npage: {page}")
    return 0


# ---- the report ----


def _study_records(folder: Path, names: list[str], state: dict[str, Any]) -> list[tuple[str, dict | None, dict]]:
    """Each study's record from records/NAME.jsonl inside the folder, by the study's name: never
    a path that progress.json names."""
    out = []
    for name in names:
        entry = state["done"].get(name, {})
        entry = entry if isinstance(entry, dict) else {}
        rec = None
        path = folder / "records" / f"{studies.get(name).name}.jsonl"
        if "record" in entry and path.is_file() and not path.is_symlink():
            recs = [r for r in records.read(path) if r.get("kind") == "study"]
            rec = recs[-1] if recs else None
        out.append((name, rec, entry))
    return out


def _machine() -> dict[str, Any]:
    try:
        return envinfo.machine()
    except (InputError, OSError, ValueError):
        return {}


def _machine_lines(m: dict[str, Any]) -> list[tuple[str, str]]:
    caches = m.get("caches", {})
    cache_text = ", ".join(
        f"{k.upper()} {v['bytes'] >> 10} KiB (shared by {v.get('shared_by', '?')})"
        for k, v in caches.items()
        if isinstance(v, dict) and "bytes" in v
    )
    return [
        ("host", str(m.get("host", "?"))),
        ("processor", str(m.get("cpu_model", "?"))),
        (
            "cores / packages / NUMA nodes",
            f"{m.get('cores', '?')} / {m.get('packages', '?')} / {m.get('numa_nodes', '?')}",
        ),
        ("caches", cache_text or "?"),
        ("MPI", str(m.get("mpi_library", "?"))),
        ("compiler", str(m.get("compiler", "?"))),
        ("pxq commit", str(m.get("git_commit", "?"))),
    ]


def assessment(items: list[tuple[str, dict | None, dict]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The distinct published findings of the studies' sections, each with one verdict from its
    parts (measured by any of the studies), and the studies' own checks apart."""
    sections = {sec for name, _, _ in items for sec in studies.get(name).sections}
    results = [
        {**f, "study": name} for name, rec, _ in items if rec for f in rec.get("findings", []) if isinstance(f, dict)
    ]
    parts = [f for f in results if f.get("kind", "part") == "part" and f.get("ref")]
    checks = [f for f in results if f.get("kind") == "check"]
    return findings.assess(parts, sections), checks


CROSS_APART = 3.0  # one channel's large-message bandwidth from two probes further apart than this: flagged


def cross_checks(items: list[tuple[str, dict | None, dict]]) -> list[dict[str, Any]]:
    """Figures two studies measure of one thing, side by side: per channel, the median rank-pair
    throughput (study rankpairs' data) against the ping-pong bandwidth at its largest message
    (study channels' rows). Further apart than CROSS_APART either way, the row is flagged
    implausible: one of them was disturbed (a loaded host, ranks sharing a core) or took another
    path."""
    recs = {name: rec for name, rec, _ in items if rec}
    if "channels" not in recs or "rankpairs" not in recs:
        return []
    ping: dict[str, tuple[float, int]] = {}
    rows = recs["channels"].get("rows")
    for row in rows if isinstance(rows, list) else []:
        points = row.get("bandwidth_MBps") if isinstance(row, dict) else None
        # Only [bytes, MB/s] points of positive, finite numbers: a record pxq did not write is
        # left out of the cross-check, never a traceback in the report.
        good = [p for p in points or [] if isinstance(p, list) and len(p) == 2 and all(map(_positive, p))]
        if good and isinstance(row.get("channel"), str):
            size, rate = max(good, key=lambda p: p[0])
            ping[row["channel"]] = (float(rate), int(size))
    data = recs["rankpairs"].get("data")
    pairs = data.get("channels_MBps") if isinstance(data, dict) else None
    pairs = {k: float(v) for k, v in pairs.items() if _positive(v)} if isinstance(pairs, dict) else {}
    out = []
    for ch in sorted(set(ping) & set(pairs)):
        mine, theirs = pairs[ch], ping[ch][0]
        ratio = mine / theirs
        apart = max(ratio, 1 / ratio)
        out.append(
            {
                "what": f"{ch.replace('_', '-')} bandwidth",
                "rankpairs_MBps": mine,
                "pingpong_MBps": theirs,
                "pingpong_bytes": ping[ch][1],
                "ratio": ratio,
                "implausible": apart > CROSS_APART,
            }
        )
    return out


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _cross_rows(checks: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            c["what"],
            f"{c['rankpairs_MBps']:.0f} MB/s (median of the pairs)",
            f"{c['pingpong_MBps']:.0f} MB/s at {c['pingpong_bytes'] >> 10} KiB",
            f"{c['ratio']:.2f}x",
            f"implausible (!): more than {CROSS_APART:g}x apart; one probe was disturbed or took another path"
            if c["implausible"]
            else f"agree within {CROSS_APART:g}x",
        ]
        for c in checks
    ]


CROSS_HEAD = ["quantity", "study rankpairs", "study channels (ping-pong)", "ratio", "reading"]


def write_report(folder: Path, names: list[str], state: dict[str, Any]) -> tuple[Path, Path]:
    items = _study_records(folder, names, state)
    machine = _machine()
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cross = cross_checks(items)
    md = outputs.write(folder / "report.md", markdown(items, machine, date, state["mode"], cross), "markdown", "--out")
    page_text = html_page(folder, items, machine, date, state["mode"], cross)
    page = outputs.write(folder / "report.html", page_text, "html", "--out")
    return md, page


READING = (
    "A finding is split into the parts it claims (a time, a network time, bytes, a distribution, a cause). "
    "It is **reproduced** only when every part was measured here and held; **partly tested** when the parts "
    "measured held and the others cannot be tested on this machine; **not reproduced** when a measured part did "
    "not hold; **inconclusive** when a part is within the noise or rests on a figure flagged implausible; "
    "**cannot be tested here** when no part could be measured (the reason says what it needs). The studies' own "
    "self-checks are listed apart and never counted."
)


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    esc = [[md(c) for c in row] for row in rows]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in esc)]


def _parts_text(a: dict[str, Any]) -> str:
    return "; ".join(f"{p['id']}: {p['verdict']}" for p in a["parts"])


def markdown(
    items: list[tuple[str, dict | None, dict]],
    machine: dict[str, Any],
    date: str,
    mode: str,
    cross: list[dict[str, Any]] | None = None,
) -> str:
    assessed, checks = assessment(items)
    out = [
        "# pxq: the published multicore-cluster studies on this machine",
        "",
        f"{md(date)}, {md(mode)} mode. **{md(findings.headline(assessed, checks))}.**",
        "",
        READING,
        "",
        "## Machine",
        "",
        *_md_table(["", ""], [[k, v] for k, v in _machine_lines(machine)]),
        "",
        "## Published findings",
        "",
        *_md_table(
            ["finding", "source", "parts", "verdict", "why"],
            [[a["text"], findings.source(a["section"]), _parts_text(a), a["verdict"], a["why"]] for a in assessed],
        ),
    ]
    if checks:
        rows = [[c["finding"], c["study"], c["here"], c["verdict"], c.get("why", "")] for c in checks]
        out += [
            "",
            "## Self-checks (never counted as reproduced)",
            "",
            *_md_table(["check", "study", "here", "verdict", "why"], rows),
        ]
    if cross:
        out += ["", "## Cross-checks: one quantity from two studies", "", *_md_table(CROSS_HEAD, _cross_rows(cross))]
    for name, rec, entry in items:
        out += ["", f"## {md(name)}: {md(rec['title']) if rec else 'did not finish'}", ""]
        if rec is None:
            out.append(f"This study did not finish: {md(entry.get('error', 'see logs/' + name + '.log'))}.")
            continue
        out.append(f"Source: {md(rec.get('source', '-'))}.")
        if rec.get("comparison"):
            rows = [[c["quantity"], c["paper"], c["here"], c.get("note", "")] for c in rec["comparison"]]
            out += ["", *_md_table(["quantity", "paper", "this machine", "note"], rows)]
        if rec.get("findings"):
            rows = [
                [f.get("ref") or "self-check", f["paper"], f["here"], f["verdict"], rests_on(f), f["why"]]
                for f in rec["findings"]
            ]
            out += ["", *_md_table(["part", "claim", "here", "verdict", "rests on", "why"], rows)]
        out += ["", f"![{md(name)}]({_rel(entry.get('figure', ''))})"]
        out += [f"- note: {md(n)}" for n in rec.get("notes", [])]
        out += ["", f"Records: `records/{md(name)}.jsonl`; output: `logs/{md(name)}.log`."]
    return "\n".join(out) + "\n"


def _rel(path: str) -> str:
    """A figure's path as the progress file names it, kept only when it is figures/NAME.png."""
    return path if re.fullmatch(r"figures/[a-z][a-z-]*\.png", str(path)) else ""


CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .5em;
vertical-align:top}th{background:#f3f3f3}img{max-width:100%;border:1px solid #ddd}.reproduced,.passed{color:#176f2c;
font-weight:bold}.not-reproduced,.failed{color:#b3261e;font-weight:bold}.inconclusive{color:#9a6700}
.partly-tested{color:#0b6e8a;font-weight:bold}.cannot-be-tested-here,.not-tested{color:#666}
details{margin:.2em 0}summary{cursor:pointer}"""

SCRIPT = """window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  document.body.dataset.figures = imgs.length;
  document.body.dataset.loaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
});"""

KNOWN = (*findings.VERDICTS, *findings.CHECK_VERDICTS, findings.NOT_TESTED)


def verdict_html(verdict: Any) -> str:
    """A verdict as a styled span: the class only from the known verdicts, the text escaped."""
    v = str(verdict)
    cls = v.replace(" ", "-") if v in KNOWN else "unknown"
    return f'<span class="{cls}">{html.escape(plain(v))}</span>'


def _html_table(head: list[str], rows: list[list[str]], raw_col: int = -1) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if i == raw_col else html.escape(plain(c))}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><tr>{cells}</tr>{body}</table>"


def _figure(folder: Path, name: str) -> str:
    """A study's figure, embedded: only figures/NAME.png inside the folder, never a path a file names."""
    if not re.fullmatch(r"[a-z][a-z-]*", name):
        return "<p>figure missing</p>"
    path = folder / "figures" / f"{name}.png"
    if not path.is_file() or path.is_symlink() or path.resolve().parent != (folder / "figures").resolve():
        return f"<p>figure missing: figures/{html.escape(name)}.png</p>"
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(name)}" src="data:image/png;base64,{data}">'


def _evidence(r: dict[str, Any]) -> str:
    ev = r.get("evidence") or {}
    bits = []
    if "repeats" in ev:
        bits.append(f"{ev['repeats']} repeats")
    if "spread" in ev:
        bits.append(f"spread {100 * float(ev['spread']):.0f}%")
    if r.get("flags"):
        bits.append("flagged: " + "; ".join(map(str, r["flags"])))
    return ", ".join(bits)


def _html_finding(a: dict[str, Any]) -> str:
    rows = []
    for p in a["parts"]:
        res = p["results"]
        measured = (
            "<br>".join(
                f"{html.escape(plain(r['here']))} ({html.escape(plain(r.get('study', '')))}; "
                f"{html.escape(_evidence(r)) or 'no repeats recorded'}; "
                f'<a href="logs/{html.escape(plain(r.get("study", "")))}.log">log</a>)'
                for r in res
            )
            or "-"
        )
        rows.append(
            f"<tr><td>{html.escape(p['id'])}</td><td>{html.escape(p['claim'])} <small>({html.escape(p['measure'])}, "
            f"{html.escape(p['mark'])})</small></td><td>{measured}</td><td>{verdict_html(p['verdict'])}</td>"
            f"<td>{html.escape(plain(p['why']))}</td></tr>"
        )
    table = "<table><tr><th>part</th><th>claim</th><th>measured here</th><th>verdict</th><th>why</th></tr>"
    return (
        f"<details><summary>{verdict_html(a['verdict'])} {html.escape(a['text'])} "
        f"<small>({html.escape(findings.source(a['section']))})</small></summary>{table}{''.join(rows)}</table>"
        f"<p>{html.escape(plain(a['why']))}</p></details>"
    )


def _html_study(folder: Path, name: str, rec: dict | None, entry: dict) -> list[str]:
    if rec is None:
        return [
            f"<h2>{html.escape(name)}: did not finish</h2>",
            f"<p>{html.escape(plain(entry.get('error', 'see the log')))}</p>",
        ]
    out = [f'<h2 id="{html.escape(name)}">{html.escape(name)}: {html.escape(plain(rec["title"]))}</h2>']
    out.append(f"<p>Source: {html.escape(plain(rec.get('source', '-')))}.</p>")
    if rec.get("comparison"):
        rows = [[c["quantity"], c["paper"], c["here"], c.get("note", "")] for c in rec["comparison"]]
        out.append(_html_table(["quantity", "paper", "this machine", "note"], rows))
    if rec.get("findings"):
        rows = [
            [f.get("ref") or "self-check", f["paper"], f["here"], verdict_html(f["verdict"]), rests_on(f), f["why"]]
            for f in rec["findings"]
        ]
        out.append(_html_table(["part", "claim", "here", "verdict", "rests on", "why"], rows, raw_col=3))
    out.append(_figure(folder, name))
    out += [f"<p>note: {html.escape(plain(n))}</p>" for n in rec.get("notes", [])]
    out.append(f'<p>Records: records/{html.escape(name)}.jsonl; <a href="logs/{html.escape(name)}.log">output</a>.</p>')
    return out


def html_page(
    folder: Path, items: list, machine: dict[str, Any], date: str, mode: str, cross: list[dict[str, Any]] | None = None
) -> str:
    assessed, checks = assessment(items)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>pxq: the published studies on this machine</title>",
        f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>",
        "<h1>pxq: the published multicore-cluster studies on this machine</h1>",
        f"<p>{html.escape(date)}, {html.escape(mode)} mode. "
        f"<b>{html.escape(findings.headline(assessed, checks))}.</b></p>",
        "<p>" + html.escape(READING.replace("**", "")) + "</p>",
        "<h2>Machine</h2>",
        _html_table(["", ""], [[k, v] for k, v in _machine_lines(machine)]),
        "<h2>Published findings</h2>",
        "<p>Each finding opens to its parts, what was measured for each, the spread and the study's log.</p>",
        *(_html_finding(a) for a in assessed),
    ]
    if checks:
        rows = [[c["finding"], c["study"], c["here"], verdict_html(c["verdict"]), c.get("why", "")] for c in checks]
        parts += [
            "<h2>Self-checks (never counted as reproduced)</h2>",
            _html_table(["check", "study", "here", "verdict", "why"], rows, raw_col=3),
        ]
    if cross:
        parts += ["<h2>Cross-checks: one quantity from two studies</h2>", _html_table(CROSS_HEAD, _cross_rows(cross))]
    parts.append("<p>" + " · ".join(f'<a href="#{html.escape(n)}">{html.escape(n)}</a>' for n, _, _ in items) + "</p>")
    for name, rec, entry in items:
        parts += _html_study(folder, name, rec, entry)
    parts.append("</body></html>")
    return "\n".join(parts)
