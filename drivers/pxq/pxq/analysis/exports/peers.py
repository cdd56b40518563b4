"""Peer results as pxq records (`pxq import`): the printed output of the NAS Parallel Benchmarks
(CG, MG, FT) and of the OSU Micro-Benchmarks, so that runs made with them sit beside pxq's own
in `pxq report` (a NAS run is a row of mode "nas"; an OSU test is drawn over pxq's OSU-style
probe of the same test). Only what the peer printed is taken; what it did not print (the nodes,
the host, the MPI library) is the user's to give, and the record says which were assumed."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pxq.core import bounds, door, registry
from pxq.core.errors import InputError
from pxq.core.layout import Layout

NAS_MODE = "nas"  # the report's mode for an imported NAS run
_NAS_DONE = re.compile(r"^\s*(\w+) Benchmark Completed\.?\s*$", re.M)
_NAS_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z/ ]*?)\s*=\s*(.*?)\s*$")
_OSU_TITLE = re.compile(r"^#\s*OSU MPI(?:-\w+)? (.+?) Test(?: v(\S+))?\s*$", re.M)
# OSU's test titles (between "OSU MPI" and "Test") and pxq's names for the tests.
OSU_TESTS = {
    "Multiple Bandwidth / Message Rate": "mbw_mr",
    "Bi-Directional Bandwidth": "bibw",
    "All-to-All Personalized Exchange Latency": "alltoall",
    "Allreduce Latency": "allreduce",
    "Broadcast Latency": "bcast",
    "Barrier Latency": "barrier",
    "Bandwidth": "bw",
    "Latency": "latency",
}
# OSU's column headings and pxq's names for them (pxq-probe-osu's rows use the same names).
OSU_COLUMNS = {
    "size": "bytes",
    "latency (us)": "latency_us",
    "avg latency(us)": "latency_us",
    "min latency(us)": "min_us",
    "max latency(us)": "max_us",
    "iterations": "iterations",
    "bandwidth (mb/s)": "mb_per_s",
    "mb/s": "mb_per_s",
    "messages/s": "messages_per_s",
}


@dataclass
class Peer:
    """What a peer's output said, before it becomes a record."""

    tool: str  # "NAS Parallel Benchmarks", "OSU Micro-Benchmarks"
    version: str
    kind: str  # "run" (NAS) or "probe" (OSU)
    app: str  # cg, mg, ft; probe-osu
    body: dict[str, Any] = field(default_factory=dict)  # the record's own fields
    processes: int | None = None  # as printed; None when the peer does not print it
    extra: dict[str, Any] = field(default_factory=dict)  # kept under "imported"


def read_text(path: Path) -> str:
    try:
        raw = door.read_bytes(path, "", "give the file NAS or OSU printed", door.DOCUMENT)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file: give the file NAS or OSU printed") from None
    if b"\0" in raw[:4096]:
        raise InputError(f"{path} is not text: give the file NAS or OSU printed (their standard output)")
    return raw.decode("utf-8", errors="replace")


def parse(path: Path, text: str) -> Peer:
    """NAS or OSU output as a Peer; InputError naming the file and what is missing."""
    if _NAS_DONE.search(text):
        return parse_nas(path, text)
    if _OSU_TITLE.search(text):
        return parse_osu(path, text)
    if "NAS Parallel Benchmarks" in text:
        raise InputError(
            f"{path}: NAS output without a 'Benchmark Completed' line: the run did not finish; import finished runs"
        )
    raise InputError(
        f"{path}: neither NAS Parallel Benchmarks output (a 'CG Benchmark Completed.' block) nor OSU "
        "Micro-Benchmarks output (a '# OSU MPI ... Test' title): give the standard output of one run"
    )


def _nas_fields(text: str, start: int) -> dict[str, str]:
    fields: dict[str, str] = {}
    options = False
    for line in text[start:].splitlines()[1:]:
        if line.strip().startswith("Compile options"):
            options = True
            continue
        m = _NAS_FIELD.match(line)
        if m:
            key = m.group(1).strip()
            fields[("option " + key) if options else key] = m.group(2)
        elif options and line.strip() and not line.startswith(" "):
            break
    return fields


def _number(path: Path, fields: dict[str, str], key: str, kind: type = float) -> Any:
    if key not in fields:
        raise InputError(f"{path}: NAS output without its '{key}' line: give the whole output of the run")
    try:
        value = kind(fields[key].split()[0])
    except (ValueError, IndexError):
        raise InputError(f"{path}: NAS's '{key}' is '{fields[key]}', not a number") from None
    if not math.isfinite(value) or not 0 <= value <= (bounds.MAX_RANKS if kind is int else 1e15):
        raise InputError(f"{path}: NAS's '{key}' is '{fields[key]}', not a figure NAS prints for a run")
    return value


def parse_nas(path: Path, text: str) -> Peer:
    m = _NAS_DONE.search(text)
    assert m is not None
    name = m.group(1).lower()
    if name not in registry.nas_apps():  # the NAS benchmarks pxq has a proxy of
        raise InputError(
            f"{path}: NAS {name.upper()} has no pxq proxy: import NAS "
            f"{', '.join(a.upper() for a in registry.nas_apps())} runs"
        )
    fields = _nas_fields(text, m.start())
    cls = fields.get("Class", "").strip()
    if not re.fullmatch(r"[SWABCDEF]", cls):
        raise InputError(f"{path}: NAS output without a problem class (Class = S, W, A, B, C, ...)")
    seconds = _number(path, fields, "Time in seconds")
    mops = _number(path, fields, "Mop/s total")
    procs = _number(path, fields, "Total processes", int)
    if seconds <= 0 or mops <= 0 or procs < 1:
        raise InputError(f"{path}: NAS printed a time of {seconds} s, {mops} Mop/s on {procs} processes: not a run")
    verdict = fields.get("Verification", "").strip().upper()
    if verdict not in ("SUCCESSFUL", "UNSUCCESSFUL"):
        raise InputError(f"{path}: NAS output without 'Verification = SUCCESSFUL' or 'UNSUCCESSFUL'")
    size: dict[str, Any] = {"class": cls, "nas_size": fields.get("Size", "")}
    if fields.get("Iterations", "").strip():
        size["iterations"] = _number(path, fields, "Iterations", int)
    if name == "ft":  # pxq pools FT runs by decomposition; NAS splits one axis while it can
        dims = [int(d) for d in re.findall(r"\d+", fields.get("Size", ""))]
        if len(dims) == 3:
            size["decomp"] = "1d" if procs <= dims[2] else "2d"
    options = {k.removeprefix("option "): v for k, v in fields.items() if k.startswith("option ")}
    body = {
        "status": "ok" if verdict == "SUCCESSFUL" else "failed",
        "size": size,
        "time": {"total": seconds},
        "metrics": {"mops_total": mops, "mops_per_process": mops / procs},
        "verification": {"passed": verdict == "SUCCESSFUL", "method": "NAS's own verification, as it printed it"},
    }
    extra = {"compile_date": fields.get("Compile date", ""), "compile_options": options}
    return Peer("NAS Parallel Benchmarks", fields.get("Version", "?"), "run", name, body, procs, extra)


def _osu_test(path: Path, title: str) -> str:
    if title in OSU_TESTS:
        return OSU_TESTS[title]
    raise InputError(
        f"{path}: OSU test '{title}' has no pxq counterpart: import "
        "latency, bw, bibw, mbw_mr, allreduce, bcast, alltoall or barrier"
    )


def _osu_columns(path: Path, text: str) -> tuple[list[str], list[str]]:
    """The column heading line's names (pxq's) and the data lines below it."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("#") or "Test" in line:
            continue
        heads = [h.strip().lower() for h in re.split(r"\s{2,}", line.lstrip("# ").strip()) if h.strip()]
        if heads and any(h in OSU_COLUMNS for h in heads):
            names = [OSU_COLUMNS.get(h, re.sub(r"[^a-z0-9]+", "_", h).strip("_")) for h in heads]
            data = [x for x in lines[i + 1 :] if x.strip() and not x.startswith("#")]
            return names, data
    raise InputError(f"{path}: OSU output without its column headings ('# Size  Latency (us)' or the like)")


def parse_osu(path: Path, text: str) -> Peer:
    m = _OSU_TITLE.search(text)
    assert m is not None
    test = _osu_test(path, m.group(1).strip())
    names, data = _osu_columns(path, text)
    rows = []
    for line in data:
        cells = line.split()
        if len(cells) != len(names):
            break  # the table ends where OSU's lines stop being rows of it
        try:
            values = [float(c) for c in cells]
        except ValueError:
            break
        row: dict[str, Any] = {n: (int(v) if n in ("bytes", "iterations") else v) for n, v in zip(names, values)}
        row.setdefault("bytes", 0)  # barrier has no size
        row.setdefault("iterations", None)  # OSU prints them with -f only
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: OSU output without a row of figures under its headings: the run did not finish")
    body = {
        "status": "ok",
        "size": {"test": test, "min": rows[0]["bytes"], "max": rows[-1]["bytes"]},
        "osu": {"test": test, "unit": "MB = 10^6 bytes; us", "rows": rows},
        "validation": {"on": False, "wrong": None},
    }
    return Peer("OSU Micro-Benchmarks", m.group(2) or "?", "probe", "probe-osu", body)


def check_layout(path: Path, peer: Peer, layout: Layout | None) -> Layout:
    """The layout the peer ran on: the user's, checked against what the peer printed."""
    if layout is None:
        if peer.processes is None:
            raise InputError(
                f"{path}: OSU does not print how many ranks or nodes ran: give --layout "
                "(e.g. --layout 1x2 for two ranks on one node, 2x1 for one rank on each of two nodes)"
            )
        return Layout(1, peer.processes, 1)
    if layout.threads != 1:
        raise InputError(f"--layout {layout}: NAS's MPI codes and OSU's tests run one thread per rank; use PxQ")
    if peer.processes is not None and layout.ranks != peer.processes:
        raise InputError(
            f"--layout {layout} has {layout.ranks} ranks but {path} ran {peer.processes} processes: "
            f"give a layout of {peer.processes} ranks, e.g. 1x{peer.processes}"
        )
    if peer.app == "probe-osu" and peer.body["osu"]["test"] in ("latency", "bw", "bibw") and layout.ranks != 2:
        raise InputError(f"--layout {layout}: OSU's {peer.body['osu']['test']} runs on 2 ranks; use 1x2 or 2x1")
    return layout


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def record(
    path: Path, text: str, peer: Peer, layout: Layout, context: dict[str, Any], assumed: list[tuple[str, str]]
) -> dict[str, Any]:
    """The pxq record of one peer run. Its run id is the output's digest, so importing the same
    output twice leaves one run in every report (the later record wins)."""
    sha = digest(text)
    rec: dict[str, Any] = {
        "kind": peer.kind,
        "schema": 2,
        "app": peer.app,
        "variant": {"mode": NAS_MODE if peer.kind == "run" else "flat", "threads": 1, "backend": "mpi"},
        "layout": {
            "nodes": layout.nodes,
            "ranks_per_node": layout.ranks_per_node,
            "threads": 1,
            "ranks": layout.ranks,
            "workers": layout.ranks,
            "alloc": "block",
            "launcher": "imported",
        },
        "context": context,
        "placement_summary": {"requested": None, "as_planned": None},  # where the ranks ran: not printed
        "driver": {"run_id": f"import-{sha[:32]}", "layout": str(layout)},
        "imported": {"tool": peer.tool, "version": peer.version, "file": str(path), "sha256": sha, **peer.extra},
        "notes": [f"imported from {path} ({peer.tool} {peer.version})"]
        + [f"{what}: not printed by {peer.tool.split()[0]}, assumed ({hint})" for what, hint in assumed],
        **peer.body,
    }
    return rec
