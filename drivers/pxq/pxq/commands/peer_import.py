"""`pxq import FILE...`: the printed output of NAS Parallel Benchmarks runs (CG, MG, FT) and of
OSU Micro-Benchmarks tests as pxq records, beside pxq's own (pxq.analysis.exports.peers). Every file is read and
checked before any record is written: one bad file writes nothing."""

from __future__ import annotations

import argparse
import datetime
import socket
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.exports import peers
from pxq.core import paths, plugins, records, schemas
from pxq.core.errors import InputError
from pxq.core.layout import Layout, parse_layout
from pxq.machine import envinfo


def add(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path, help="files holding what NAS or OSU printed, one run each")
    p.add_argument("--results", type=Path, help="results file to append to (default results/peers.jsonl)")
    p.add_argument(
        "--layout",
        help="PxQ the peer ran on (NAS: default one node, 1xN for its N processes; OSU: required, e.g. 1x2 or 2x1)",
    )
    p.add_argument("--host", help="host the peer ran on (default: this one)")
    p.add_argument("--mpi", help="the MPI library it ran with, e.g. 'Open MPI v4.1.4' (default: this machine's)")


def _this_mpi() -> str | None:
    """This machine's MPI library as pxq's records name it, None without a build to ask."""
    try:
        return str(envinfo.machine().get("mpi_library"))
    except (InputError, OSError, ValueError):
        return None


def _context(path: Path, args: argparse.Namespace, mpi: str | None) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """What the peer ran on: the user's --host and --mpi, else this machine's (`mpi`), and the
    file's date; with the list of what was assumed."""
    assumed = []
    if not args.host:
        assumed.append(("host", "this machine's; give --host"))
    if not args.mpi:
        assumed.append(("MPI library", "this machine's; give --mpi") if mpi else ("MPI library", "give --mpi"))
    when = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    assumed.append(("date", "the file's modification time"))
    context = {
        "host": args.host or socket.gethostname(),
        "date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "mpi_library": mpi or "unknown",
    }
    return context, assumed


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    layout: Layout | None = parse_layout(args.layout) if args.layout else None
    results = paths.results_path(args.results, "peers.jsonl")
    mpi = args.mpi or _this_mpi()  # asked once: pxq-envinfo is a process
    out = []
    for path in args.files:
        if not path.is_file():
            what = "a folder" if path.is_dir() else "no such file"
            raise InputError(f"{path}: {what}: give the files NAS or OSU printed (their standard output), one run each")
        text = peers.read_text(path)
        peer = peers.parse(path, text)
        lay = peers.check_layout(path, peer, layout)
        context, assumed = _context(path, args, mpi)
        rec = peers.record(path, text, peer, lay, context, assumed)
        problems = schemas.problems(rec, str(path))
        if problems:  # pxq's own fault, never the user's: say so rather than write it
            raise RuntimeError(f"the record made from {path} does not match its schema: {problems[0].message}")
        out.append(rec)
    for rec in out:
        records.append(results, rec)
        what = rec["app"].upper() if rec["kind"] == "run" else f"OSU {rec['osu']['test']}"
        figure = (
            f"{rec['size']['class']}, {rec['metrics']['mops_total']:.1f} Mop/s, {rec['status']}"
            if rec["kind"] == "run"
            else f"{len(rec['osu']['rows'])} sizes"
        )
        console.print(f"{rec['imported']['file']}: {what} on {rec['driver']['layout']} ({figure})", highlight=False)
    console.print(f"{len(out)} record(s) appended to {results}; `pxq report {results} ...` shows them beside pxq's")
    return records.exit_code(out)


PLUGIN = plugins.Command(
    help="read NAS (CG, MG, FT) and OSU output into pxq records, to report beside pxq's runs",
    order=4,
    hooks=plugins.CommandHooks(add, handle, needs_build=False),
    name="import",
    example="./pxq import cg.A.2.out --results results/nas.jsonl",
)
