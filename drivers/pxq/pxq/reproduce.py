"""`pxq reproduce`: every published study in one go, one progress bar with an ETA, resumable,
and a report folder: report.md and a self-contained report.html with every table and figure
beside the machine's description.

The folder holds records/NAME.jsonl (each study's runs, probes and study record), figures/,
logs/NAME.log (each study's full output) and progress.json (which studies are done, so that
a second call with the same folder and mode carries on where the first stopped)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import html
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from pxq import envinfo, findings, records, runner, studies
from pxq.errors import InputError
from pxq.options import launch_spec
from pxq.records import RecordError

PROGRESS = "progress.json"


def select(only: str | None) -> list[Any]:
    mods = studies.registry()
    if not only:
        return mods
    names = [n.strip() for n in only.split(",") if n.strip()]
    if not names:
        raise InputError("--only is empty: name studies, e.g. --only channels,msgdist")
    for n in names:
        studies.get(n)  # unknown names are refused with the list
    return [m for m in mods if m.NAME in names]


def load_progress(folder: Path, mode: str) -> dict[str, Any]:
    path = folder / PROGRESS
    if not path.exists():
        return {"mode": mode, "done": {}}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise RecordError(f"{path}: unreadable ({e}); delete it to start the report over") from None
    if state.get("mode") != mode:
        raise InputError(
            f"{folder} holds a {state.get('mode')} report: use --{state.get('mode')} to carry it on, "
            "or another --out folder"
        )
    return state


def save_progress(folder: Path, state: dict[str, Any]) -> None:
    """Written whole to a temporary file, then renamed: never a half-written progress file."""
    tmp = folder / f".{PROGRESS}.{os.getpid()}"
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    tmp.replace(folder / PROGRESS)


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


def run_one(mod: Any, folder: Path, base: runner.RunSpec, quick: bool) -> dict[str, Any]:
    """One study, all its output (the probes' and the apps' too) into logs/NAME.log; what
    progress.json keeps of it."""
    results = folder / "records" / f"{mod.NAME}.jsonl"
    log = folder / "logs" / f"{mod.NAME}.log"
    t0 = time.monotonic()
    with log.open("w", encoding="utf-8") as f, output_to(f):
        console = Console(file=f, width=160, force_terminal=False)
        ctx = studies.Context(console, results, base, quick, None, folder / "figures" / f"{mod.NAME}.png")
        try:
            code, rec, figure = studies.finish(ctx, mod.NAME, "-", mod.run(ctx, mod.defaults(quick)))
        except (InputError, RecordError) as e:
            console.print(f"error: {e}")
            return {"code": records.EXIT_BAD_INPUT, "error": str(e), "seconds": time.monotonic() - t0}
    return {
        "code": code,
        "record": str(results.relative_to(folder)),
        "figure": str(figure.relative_to(folder)),
        "verdicts": [f["verdict"] for f in rec["findings"]],
        "seconds": time.monotonic() - t0,
    }


def summary(entry: dict[str, Any]) -> str:
    if "error" in entry:
        return f"[red]error[/red]: {entry['error']}"
    counts = {v: entry["verdicts"].count(v) for v in findings.VERDICTS if v in entry["verdicts"]}
    text = ", ".join(f"{n} {v}" for v, n in counts.items()) or "no findings"
    bad = "" if entry["code"] == 0 else f" [red](exit {entry['code']}: see the log)[/red]"
    return f"{text} in {entry['seconds']:.0f} s{bad}"


def reproduce(console: Console, folder: Path, quick: bool, only: str | None, args: Any) -> int:
    mods = select(only)
    mode = "quick" if quick else "full"
    for sub in ("records", "logs", "figures"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK):
        raise InputError(f"{folder} is not writable: give another --out folder")
    state = load_progress(folder, mode)
    todo = [m for m in mods if m.NAME not in state["done"]]
    if len(todo) < len(mods):
        console.print(f"resuming {folder}: {len(mods) - len(todo)} of {len(mods)} studies already done")
    base = launch_spec(args, folder / "records" / "x.jsonl")  # each study sets its own results
    # The progress bar writes to the terminal through its own copy of standard output, which
    # each study's redirection (output_to) leaves alone.
    term = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    screen = Console(file=term, force_terminal=term.isatty() or None, width=console.width)
    with (
        term,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=screen,
        ) as progress,
    ):
        task = progress.add_task("reproduce", total=sum(m.MINUTES for m in todo) or 1, count="")
        for i, mod in enumerate(todo):
            progress.update(task, description=f"{mod.NAME} ({mode})", count=f"{i + 1}/{len(todo)}")
            entry = run_one(mod, folder, base, quick)
            state["done"][mod.NAME] = entry
            save_progress(folder, state)
            progress.console.print(f"{mod.NAME}: {summary(entry)}")
            progress.advance(task, mod.MINUTES)
    md, page = write_report(folder, [m.NAME for m in mods], state)
    console.print(f"report: {md}\npage: {page}")
    codes = [state["done"][m.NAME]["code"] for m in mods]
    return max(codes, default=0)


def report_only(console: Console, folder: Path, mode: str, only: str | None) -> int:
    """Rewrites report.md and report.html from what the folder holds."""
    if not (folder / PROGRESS).exists():
        raise InputError(f"{folder} has no {PROGRESS}: run pxq reproduce first (or give --out)")
    state = load_progress(folder, mode)
    names = [m.NAME for m in select(only) if m.NAME in state["done"]]
    md, page = write_report(folder, names, state)
    console.print(f"report: {md}\npage: {page}")
    return 0


# ---- the report ----


def _study_records(folder: Path, names: list[str], state: dict[str, Any]) -> list[tuple[str, dict | None, dict]]:
    out = []
    for name in names:
        entry = state["done"].get(name, {})
        rec = None
        if "record" in entry:
            recs = [r for r in records.read(folder / entry["record"]) if r.get("kind") == "study"]
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


def _tally(items: list[tuple[str, dict | None, dict]]) -> dict[str, int]:
    verdicts = [f["verdict"] for _, rec, _ in items if rec for f in rec.get("findings", [])]
    return {v: verdicts.count(v) for v in findings.VERDICTS}


def write_report(folder: Path, names: list[str], state: dict[str, Any]) -> tuple[Path, Path]:
    items = _study_records(folder, names, state)
    machine = _machine()
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = folder / "report.md"
    md.write_text(markdown(items, machine, date, state["mode"]), encoding="utf-8")
    page = folder / "report.html"
    page.write_text(html_page(folder, items, machine, date, state["mode"]), encoding="utf-8")
    return md, page


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    esc = [[str(c).replace("|", "\\|").replace("\n", " ") for c in row] for row in rows]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in esc)]


def markdown(items: list[tuple[str, dict | None, dict]], machine: dict[str, Any], date: str, mode: str) -> str:
    tally = _tally(items)
    out = [
        "# pxq: the published multicore-cluster studies on this machine",
        "",
        f"{date}, {mode} mode. Verdicts: " + ", ".join(f"{n} {v}" for v, n in tally.items()) + ".",
        "",
        "## Machine",
        "",
        *_md_table(["", ""], [[k, v] for k, v in _machine_lines(machine)]),
    ]
    for name, rec, entry in items:
        out += ["", f"## {name}: {rec['title'] if rec else 'did not finish'}", ""]
        if rec is None:
            out.append(f"This study did not finish: {entry.get('error', 'see logs/' + name + '.log')}.")
            continue
        out.append(f"Source: {rec.get('source', '-')}.")
        if rec.get("comparison"):
            rows = [[c["quantity"], c["paper"], c["here"], c.get("note", "")] for c in rec["comparison"]]
            out += ["", *_md_table(["quantity", "paper", "this machine", "note"], rows)]
        if rec.get("findings"):
            rows = [[f["finding"], f["paper"], f["here"], f"**{f['verdict']}**", f["why"]] for f in rec["findings"]]
            out += ["", *_md_table(["finding", "paper", "here", "verdict", "why"], rows)]
        out += ["", f"![{name}]({entry['figure']})"]
        out += [f"- note: {n}" for n in rec.get("notes", [])]
        out += ["", f"Records: `{entry['record']}`; output: `logs/{name}.log`."]
    return "\n".join(out) + "\n"


CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .5em;
vertical-align:top}th{background:#f3f3f3}img{max-width:100%;border:1px solid #ddd}.reproduced{color:#176f2c;
font-weight:bold}.not-reproduced{color:#b3261e;font-weight:bold}.inconclusive{color:#9a6700}
.cannot-be-tested-here{color:#666}"""

SCRIPT = """window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  document.body.dataset.figures = imgs.length;
  document.body.dataset.loaded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
});"""


def _html_table(head: list[str], rows: list[list[str]], raw_col: int = -1) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if i == raw_col else html.escape(str(c))}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><tr>{cells}</tr>{body}</table>"


def _figure(folder: Path, rel: str, name: str) -> str:
    path = folder / rel
    if not path.is_file():
        return f"<p>figure missing: {html.escape(rel)}</p>"
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(name)}" src="data:image/png;base64,{data}">'


def _html_study(folder: Path, name: str, rec: dict | None, entry: dict) -> list[str]:
    if rec is None:
        return [
            f"<h2>{html.escape(name)}: did not finish</h2>",
            f"<p>{html.escape(entry.get('error', 'see the log'))}</p>",
        ]
    out = [f'<h2 id="{name}">{html.escape(name)}: {html.escape(rec["title"])}</h2>']
    out.append(f"<p>Source: {html.escape(rec.get('source', '-'))}.</p>")
    if rec.get("comparison"):
        rows = [[c["quantity"], c["paper"], c["here"], c.get("note", "")] for c in rec["comparison"]]
        out.append(_html_table(["quantity", "paper", "this machine", "note"], rows))
    if rec.get("findings"):
        rows = [
            [
                f["finding"],
                f["paper"],
                f["here"],
                f'<span class="{f["verdict"].replace(" ", "-")}">{f["verdict"]}</span>',
                f["why"],
            ]
            for f in rec["findings"]
        ]
        out.append(_html_table(["finding", "paper", "here", "verdict", "why"], rows, raw_col=3))
    out.append(_figure(folder, entry["figure"], name))
    out += [f"<p>note: {html.escape(n)}</p>" for n in rec.get("notes", [])]
    return out


def html_page(folder: Path, items: list, machine: dict[str, Any], date: str, mode: str) -> str:
    tally = _tally(items)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>pxq: the published studies on this machine</title>",
        f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>",
        "<h1>pxq: the published multicore-cluster studies on this machine</h1>",
        f"<p>{html.escape(date)}, {mode} mode. Verdicts: "
        + html.escape(", ".join(f"{n} {v}" for v, n in tally.items()))
        + "</p>",
        "<h2>Machine</h2>",
        _html_table(["", ""], [[k, v] for k, v in _machine_lines(machine)]),
        "<p>" + " · ".join(f'<a href="#{n}">{html.escape(n)}</a>' for n, _, _ in items) + "</p>",
    ]
    for name, rec, entry in items:
        parts += _html_study(folder, name, rec, entry)
    parts.append("</body></html>")
    return "\n".join(parts)
