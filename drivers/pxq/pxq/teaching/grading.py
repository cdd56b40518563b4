"""`pxq lab grade N DIR...`: a class's copies of one lab, each checked as `pxq lab check` does,
one table for the teacher: CSV and markdown (every cell escaped: the folders and the messages
are the students'), and the grades as JSON."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

from rich.markup import escape as rich_escape
from rich.table import Table

from pxq.core import bounds, outputs, plugins, records
from pxq.core.errors import InputError
from pxq.core.escape import Console, csv_cell, md, plain
from pxq.teaching import harness as labs

COLUMNS = ("copy", "lab", "grade", "exit", "what the code does", "effect", "prediction", "reason")


def row(record: dict[str, Any]) -> dict[str, str]:
    """One table row from a grade record."""
    effects = record.get("effects") or []
    effect = "; ".join(f"{e['verdict']}: {e['sentence']}" for e in effects) or "-"
    reason = record.get("reason", "")
    return {
        "copy": record.get("copy", ""),
        "lab": record.get("lab", ""),
        "grade": record.get("outcome", ""),
        "exit": str(record.get("exit", "")),
        "what the code does": record.get("code", "-"),
        "effect": effect,
        "prediction": predicted(record.get("prediction")),
        "reason": whole_reason(reason),
    }


def predicted(block: dict[str, Any] | None) -> str:
    """The prediction's cell: "4 of 6 agree with pxq advise", its state, or "-" (none asked)."""
    if not isinstance(block, dict):
        return "-"
    if block.get("state") == "graded":
        cell = f"{block.get('agree')} of {block.get('of')} agree with pxq advise"
        revised = block.get("revised")
        if isinstance(revised, dict):
            now = f"{revised.get('agree')} of {revised.get('of')}"
            cell += f" (as first graded; changed after the model's answers: {now})"
        elif block.get("seal"):
            cell += " (no seal: graded as it stands)"
        return cell
    return str(block.get("state", "-"))


REASON_CHARS = 4000  # a reason longer than this (a program's output quoted at length) is cut, and says so


def whole_reason(reason: str) -> str:
    """The whole reason on one line (its lines joined by " / ": a table cell holds no newline),
    up to REASON_CHARS."""
    text = " / ".join(line.strip() for line in (reason or "").splitlines() if line.strip())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + " ... (cut: the whole reason is in the JSON)"


def as_csv(rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([csv_cell(r[c]) for c in COLUMNS])
    return buf.getvalue()


def as_markdown(rows: list[dict[str, str]], title: str) -> str:
    out = [f"# {md(title)}", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(md(r[c]) for c in COLUMNS) + " |" for r in rows]
    counts = {g: sum(r["grade"] == g for r in rows) for g in ("done", "not done", "not correct", "bad input")}
    out += ["", ", ".join(f"{n} {g}" for g, n in counts.items() if n) + f" of {len(rows)} copies."]
    return "\n".join(out) + "\n"


def _write(path: Path, text: str, kind: str) -> None:
    try:
        outputs.write(path, text, kind, "--out")
    except OSError as e:
        raise InputError(f"cannot write {path} ({e.strerror}): give a writable --out") from None


def grade_class(
    mod: plugins.Lab,
    dirs: list[Path],
    repeat: int,
    hostfile: str | None,
    out: Path,
    console: Console,
    unconfined: bool = False,
    budget: float = 0.0,
) -> int:
    """Grades every copy (a folder that cannot be graded is a row of its own, "bad input"),
    prints the table and writes OUT.csv, OUT.md and OUT.json."""
    bounds.repeat(repeat)
    if not out.parent.is_dir() or not os.access(out.parent, os.W_OK):
        raise InputError(f"--out {out}: its folder {out.parent} is missing or not writable")
    seen = set()
    for d in dirs:
        if d.resolve() in seen:
            raise InputError(f"{d} is given twice: name each copy once")
        seen.add(d.resolve())
    graded: list[dict[str, Any]] = []
    for i, d in enumerate(dirs, 1):
        console.rule(f"{i}/{len(dirs)}: {rich_escape(str(d))}")
        log = Console(file=io.StringIO(), width=160)
        try:
            code, _, record = labs.grade(mod, "copy", d, repeat, log, hostfile, unconfined, budget, seal=False)
        except InputError as e:
            code, record = records.EXIT_BAD_INPUT, {"lab": mod.folder, "outcome": "bad input", "reason": str(e)}
        record = {**record, "copy": str(d), "exit": code}
        graded.append(record)
        console.print(f"{plain(d)}: {record['outcome']} (exit {code})", markup=False, highlight=False)
    rows = [row(r) for r in graded]
    title = f"lab {mod.number} ({mod.title}): {len(rows)} copies"
    t = Table(title=rich_escape(title))
    for c in COLUMNS:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*(rich_escape(plain(r[c])) for c in COLUMNS))
    console.print(t)
    paths = [out.with_suffix(s) for s in (".csv", ".md", ".json")]
    for path, kind in zip(paths, ("csv", "markdown", "json")):
        outputs.check(path, kind, "--out")  # all three may be written before the first is
    _write(paths[0], as_csv(rows), "csv")
    _write(paths[1], as_markdown(rows, title), "markdown")
    _write(paths[2], outputs.dumps(graded, indent=1) + "\n", "json")
    console.print(f"tables: {paths[0]}, {paths[1]}; grades: {paths[2]}", markup=False)
    return records.EXIT_BAD_INPUT if any(r["outcome"] == "bad input" for r in graded) else records.EXIT_OK
