"""`pxq validate PATH...`: check records against their kind's schema (schemas/, docs/RESULTS.md)."""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pxq.analysis.exports import report
from pxq.core import paths, plugins, records, schemas
from pxq.core.errors import InputError
from pxq.core.escape import Console, term
from pxq.reports import writers


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths", nargs="+", help="results files, folders (every *.jsonl and *.json in them and below) or globs"
    )
    p.add_argument(
        "--require",
        default="",
        help="kinds that must be present, comma-separated (e.g. run,probe,profile,tile-profile,study)",
    )


def _required(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in schemas.KINDS]
    if unknown:
        raise InputError(f"--require {','.join(unknown)}: not a record kind; use {', '.join(schemas.KINDS)}")
    return kinds


def _check_file(path: Path, console: Console, seen: Counter[tuple[str, int]]) -> int:
    """One file's invalid documents (and 1 more when `pxq report` cannot use a file whose records
    pass), each said; the kinds and versions of its records counted into SEEN."""
    bad, file_bad = 0, False
    docs: Iterable[tuple[str, Any]] = records.each_document(path)  # one at a time: any file size
    if path.suffix == ".json":  # one document (a profile) or a few: read whole
        docs = list(docs)
        if len(docs) == 1 and schemas.kind_of(docs[0][1]) is None:
            console.print(f"{term(path)}: not a pxq record (another tool's JSON), skipped", highlight=False)
            return 0
    kinds: set[str | None] = set()
    kept: list[dict[str, Any]] = []  # what `pxq report` reads of each record, for _unusable
    for where, rec in docs:
        if isinstance(rec, ValueError):
            console.print(
                f"[red]{term(where)}[/red]: {term(rec)}; `pxq repair {term(path)}` sets it aside",
                markup=True,
                highlight=False,
            )
            bad, file_bad = bad + 1, True
            continue
        found = schemas.problems(rec, where)
        kind = schemas.kind_of(rec)
        kinds.add(kind)
        if kind:
            seen[(kind, rec.get("schema") if isinstance(rec.get("schema"), int) else 1)] += 1
        for p in found[:5]:
            console.print(
                f"[red]{term(p.where)}[/red] ({term(p.kind or 'unknown')}): {term(p.message)}",
                markup=True,
                highlight=False,
            )
        bad += bool(found)
        file_bad = file_bad or bool(found)
        if not file_bad and kind in REPORTED:
            kept.append(report.essentials(rec))
    # Records read as report reads them (JSON lines) go to its table as read here; a document
    # over several lines, which report refuses, is handed to report to say so.
    handed = None if records.one_document(path) else kept
    why = _unusable(path, handed) if not file_bad and kinds & REPORTED else None
    if why:
        console.print(f"[red]{term(path)}[/red]: pxq report cannot use it: {term(why)}", highlight=False)
        bad += 1
    return bad


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    required = _required(args.require)
    files = paths.expand(args.paths, ("**/*.jsonl", "**/*.json"))
    seen: Counter[tuple[str, int]] = Counter()
    bad = sum(_check_file(path, console, seen) for path in files)
    summary = ", ".join(f"{n} {kind} (version {v})" for (kind, v), n in sorted(seen.items())) or "no records"
    console.print(f"{len(files)} file(s): {summary}; {bad} invalid")
    missing = [k for k in required if not any(kind == k for kind, _ in seen)]
    if missing:
        console.print(f"[red]no {', '.join(missing)} record[/red] among them (--require)")
    return records.EXIT_VERIFICATION if bad or missing else records.EXIT_OK


REPORTED = {"run", "probe", "profile", "study"}  # the kinds `pxq report FILE` reads (a tile profile: report tiles)


def _unusable(path: Path, kept: list[dict[str, Any]] | None) -> str | None:
    """Why `pxq report` cannot use a file whose records pass their schema (None when it can):
    the schema cannot say everything a reader needs (one field against another, a study's own
    rows), so validate hands what report reads of the records it has just checked (KEPT, one
    final record per run; None: report reads the file) to report's table, its figure drawn to
    a scratch folder, and agrees with it: a file of JSON lines is read once."""
    command = next(c for c in plugins.commands() if c.name == "report")
    parser = argparse.ArgumentParser()
    command.add(parser)
    with tempfile.TemporaryDirectory(prefix="pxq-validate-") as scratch:
        args = parser.parse_args([str(path), "--plot", str(Path(scratch) / "figure.png")])
        quiet = Console(file=io.StringIO(), width=160)
        try:
            with contextlib.redirect_stdout(io.StringIO()), records.consuming(str(path)):
                writers.table(args, quiet, None if kept is None else records.final(kept))
        except (InputError, records.RecordError) as e:
            return str(e)
    return None


PLUGIN = plugins.Command(
    help="check results files (runs, probes, profiles, tile profiles, studies) against the record schemas",
    order=14,
    hooks=plugins.CommandHooks(add, handle, needs_build=False, reads_records=True),
    example="./pxq validate results/ --require run",
)
