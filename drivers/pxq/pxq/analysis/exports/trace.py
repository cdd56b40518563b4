"""A run's timeline (``pxq run --trace``) as a Chrome trace-event JSON file, the format Perfetto
(ui.perfetto.dev) and chrome://tracing open.

Each rank of a traced run writes two files into the run's own folder: ``phases-RANK.json``
(the proxy's timed phases and its own stages: setup, warm-up, timed iterations) and
``mpi-RANK.json`` (every MPI call the message profiler counted, with a send's destination and
bytes). Both read the rank's MPI_Wtime and the OS thread that ran the span. The merge puts
each rank in its own process lane (pid = the MPI rank) and each OS thread in its own thread
lane, and aligns the ranks on the barrier that starts the timed iterations: clocks of different
hosts are not compared, only offsets from that common instant. A run's trace is written rank by
rank (write_merged), never whole in memory: a traced CG at 128 ranks holds 2.9 million events.
An OTF2 archive is still converted from the Chrome file read whole (the otf2 package's writer)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pxq.analysis.exports import otf2trace
from pxq.core import door, escape, outputs
from pxq.core.errors import InputError

FORMAT = "Chrome trace-event JSON (open it in ui.perfetto.dev or chrome://tracing)"
CHROME_IN_ARCHIVE = "timeline.trace.json"  # an OTF2 archive's Chrome twin, for the viewers that read no OTF2
TIMED = "timed iterations"  # the run stage whose start every rank's clock is aligned on
THREADS_NOTE = (
    "phases are timed on each rank's main thread; OpenMP worker threads show where they make MPI "
    "calls, not their share of a phase (the OpenMP runtime has no tool interface pxq reads)"
)


def _read(path: Path, what: str) -> dict[str, Any]:
    try:
        data = door.json_doc(path, what, "the rank's trace file is pxq's own")
    except FileNotFoundError:
        raise InputError(f"{what} is missing ({path.name}): the rank did not finish its run") from None
    if not isinstance(data, dict) or "names" not in data:
        raise InputError(f"{what} ({path.name}) is not a pxq trace file")
    return data


def _rank_events(rank: int, phases: dict[str, Any], mpi: dict[str, Any], shift: float) -> list[dict[str, Any]]:
    """One rank's spans and calls as complete ("X") events, in microseconds from the trace's zero."""
    sync = float(phases["sync"])
    out: list[dict[str, Any]] = []
    names = phases["names"]
    for name, cat, t0, t1, tid in phases["spans"]:
        ev = {"name": names[name], "cat": cat, "ph": "X", "ts": (t0 - sync + shift) * 1e6, "dur": (t1 - t0) * 1e6}
        ev.update(pid=rank, tid=tid)
        out.append(ev)
    names = mpi["names"]
    for name, t0, t1, tid, peer, nbytes in mpi["events"]:
        ev = {"name": names[name], "cat": "mpi", "ph": "X", "ts": (t0 - sync + shift) * 1e6, "dur": (t1 - t0) * 1e6}
        ev.update(pid=rank, tid=tid)
        if peer >= 0:
            ev["args"] = {"peer": peer, "bytes": nbytes}
        out.append(ev)
    return out


def _lanes(rank: int, phases: dict[str, Any], tids: set[int]) -> list[dict[str, Any]]:
    """Names for a rank's process lane and its threads' lanes."""
    pid = int(phases["pid"])
    out = [
        {"name": "process_name", "ph": "M", "pid": rank, "args": {"name": f"rank {rank} ({phases['host']})"}},
        {"name": "process_sort_index", "ph": "M", "pid": rank, "args": {"sort_index": rank}},
    ]
    for tid in sorted(tids, key=lambda t: (t != pid, t)):
        label = "main thread" if tid == pid else f"thread {tid}"
        out.append({"name": "thread_name", "ph": "M", "pid": rank, "tid": tid, "args": {"name": label}})
    return out


def _files(folder: Path, rank: int) -> tuple[dict[str, Any], dict[str, Any]]:
    phases = _read(folder / f"phases-{rank}.json", f"rank {rank}'s phases")
    return phases, _read(folder / f"mpi-{rank}.json", f"rank {rank}'s calls")


def _zero(folder: Path, ranks: int) -> float:
    """The trace's zero: the earliest event of any rank, so no time is negative; every rank's
    timed iterations then start at the same instant, the returned seconds after it (one rank's
    files in memory at a time)."""
    shift = 0.0
    for r in range(ranks):
        phases, mpi = _files(folder, r)
        starts = [s[2] for s in phases["spans"]] + [e[1] for e in mpi["events"]]
        if starts:
            shift = max(shift, float(phases["sync"]) - min(starts))
    return shift


def _per_rank(folder: Path, ranks: int, shift: float) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """Each rank's lanes and events, and the events its files say were dropped, rank by rank."""
    for rank in range(ranks):
        phases, mpi = _files(folder, rank)
        evs = _rank_events(rank, phases, mpi, shift)
        lanes = _lanes(rank, phases, {int(e["tid"]) for e in evs} | {int(phases["pid"])})
        yield lanes + evs, int(phases.get("dropped", 0)) + int(mpi.get("dropped", 0))


def _other(meta: dict[str, Any], shift: float, dropped: int) -> dict[str, Any]:
    other = dict(meta)
    other.update(
        clock="each rank's MPI_Wtime, aligned on the barrier that starts the timed iterations",
        timed_start_us=shift * 1e6,
        dropped_events=dropped,
        threads=THREADS_NOTE,
    )
    return other


def merge(folder: Path, ranks: int, meta: dict[str, Any]) -> dict[str, Any]:
    """Every rank's files in `folder` as one trace, in memory; InputError when a rank's file is
    missing. (A run's trace is written by write_merged, which holds one rank at a time.)"""
    shift = _zero(folder, ranks)
    events: list[dict[str, Any]] = []
    dropped = 0
    for evs, lost in _per_rank(folder, ranks, shift):
        events += evs
        dropped += lost
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": _other(meta, shift, dropped)}


def write_merged(folder: Path, ranks: int, meta: dict[str, Any], path: Path) -> dict[str, int]:
    """merge() written to `path` whole or not at all, one rank's events in memory at a time (a
    traced run of thousands of ranks holds millions of events); what it holds: ranks with
    events, complete events (spans: the run's stages, phases and MPI calls), phase spans, MPI
    calls and dropped events."""
    shift = _zero(folder, ranks)
    counts = {"ranks": 0, "spans": 0, "phase_spans": 0, "mpi_calls": 0, "dropped": 0}
    compact = {"separators": (",", ":")}

    def chunks() -> Iterator[str]:
        yield '{"traceEvents":['
        sep = ""
        for evs, lost in _per_rank(folder, ranks, shift):
            xs = [e for e in evs if e["ph"] == "X"]
            counts["ranks"] += 1 if xs else 0
            counts["spans"] += len(xs)  # every complete event: stages, phases and MPI calls
            counts["phase_spans"] += sum(1 for e in xs if e["cat"] == "phase")
            counts["mpi_calls"] += sum(1 for e in xs if e["cat"] == "mpi")
            counts["dropped"] += lost
            if evs:
                yield sep + outputs.dumps(evs, **compact)[1:-1]
                sep = ","
        yield '],"displayTimeUnit":"ms","otherData":' + outputs.dumps(_other(meta, shift, counts["dropped"]), **compact)
        yield "}"

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        outputs.write_chunks(path, chunks(), "trace", "--trace")
    except OSError as e:
        raise InputError(f"cannot write the trace {path} ({e.strerror}): choose a writable path with --trace") from None
    return counts


def summary(counts: dict[str, int], path: Path) -> dict[str, Any]:
    """The record's "trace": where the timeline is and what it holds."""
    return {
        "path": str(path),
        "format": FORMAT,
        "ranks": counts["ranks"],
        "phase_spans": counts["phase_spans"],
        "mpi_calls": counts["mpi_calls"],
        "dropped": counts["dropped"],
        "note": THREADS_NOTE,
    }


def finish(folder: Path, path: Path, rec: dict[str, Any]) -> dict[str, Any]:
    """Merges a finished run's files into `path`; the record's "trace" (its path null and a note
    saying why when the ranks' files are incomplete)."""
    layout = rec.get("layout") or {}
    ranks = int(layout.get("ranks") or 0) or int(layout.get("nodes", 1)) * int(layout.get("ranks_per_node", 1))
    meta = {
        "app": rec.get("app"),
        "run_id": (rec.get("driver") or {}).get("run_id"),
        "layout": (rec.get("driver") or {}).get("layout"),
        "variant": rec.get("variant"),
        "host": (rec.get("context") or {}).get("host"),
    }
    try:
        if path.suffix != ".otf2":
            return summary(write_merged(folder, ranks, meta, path), path)
        # The Chrome twin lives inside the archive, which the run replaces whole: never a file
        # beside it that another run (`--trace x.trace.json`) may have written.
        staged = path.parent / f".{path.name}.trace.json"
        try:
            counts = write_merged(folder, ranks, meta, staged)
            enters = otf2trace.convert(staged, path)
            chrome = path / CHROME_IN_ARCHIVE
            os.replace(staged, chrome)
        finally:
            staged.unlink(missing_ok=True)
    except InputError as e:
        return {
            "path": None,
            "format": otf2trace.FORMAT if path.suffix == ".otf2" else FORMAT,
            "note": f"no trace written: {e}",
        }
    out = summary(counts, path / "traces.otf2")
    spans = counts["spans"]
    out.update(format=otf2trace.FORMAT, chrome_path=str(chrome), read_back={"spans": sum(enters.values()), "of": spans})
    return out


# ---- reading a trace back ----


def load(path: Path) -> dict[str, Any]:
    """A trace file parsed and checked event by event: every complete event has a name, a
    category, a rank (pid), a thread, and a finite start and duration."""
    try:
        data = door.json_doc(Path(path), "trace", "give a trace pxq run --trace wrote")
    except FileNotFoundError:
        raise InputError(f"{escape.plain(path)}: no such trace: give a trace pxq run --trace wrote") from None
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        raise InputError(f"{path} has no traceEvents list: not a Chrome trace-event file")
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("ph") not in ("X", "M"):
            raise InputError(f"{path}: event {i} is neither a complete (X) nor a metadata (M) event")
        if ev["ph"] == "X":
            ok = all(k in ev for k in ("name", "cat", "pid", "tid", "ts", "dur"))
            if not ok or not (math.isfinite(ev["ts"]) and math.isfinite(ev["dur"]) and ev["dur"] >= 0):
                raise InputError(f"{path}: event {i} lacks a name, category, rank, thread, start or duration")
    return data


def _timed(xs: list[dict[str, Any]]) -> dict[int, tuple[float, float]]:
    """Per rank, the start and end (microseconds) of its timed iterations."""
    return {e["pid"]: (e["ts"], e["ts"] + e["dur"]) for e in xs if e["cat"] == "run" and e["name"] == TIMED}


def _inside(e: dict[str, Any], window: tuple[float, float] | None) -> bool:
    return window is not None and window[0] <= e["ts"] and e["ts"] + e["dur"] <= window[1] + 1e-3  # 1 ns slack


def phase_seconds(trace: dict[str, Any]) -> dict[int, dict[str, float]]:
    """Per rank, each phase's seconds inside the rank's timed iterations (what its timers sum)."""
    xs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    timed = _timed(xs)
    out: dict[int, dict[str, float]] = {rank: {} for rank in timed}
    for e in xs:
        if e["cat"] == "phase" and _inside(e, timed.get(e["pid"])):
            out[e["pid"]][e["name"]] = out[e["pid"]].get(e["name"], 0.0) + e["dur"] * 1e-6
    return out


def sends(trace: dict[str, Any], timed_only: bool = False) -> dict[tuple[int, int], int]:
    """(rank, peer) -> the sends the trace holds from rank to peer (only those inside the rank's
    timed iterations with `timed_only`)."""
    xs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    timed = _timed(xs)
    out: dict[tuple[int, int], int] = {}
    for e in xs:
        if e["cat"] != "mpi" or "peer" not in e.get("args", {}):
            continue
        if timed_only and not _inside(e, timed.get(e["pid"])):
            continue
        key = (e["pid"], e["args"]["peer"])
        out[key] = out.get(key, 0) + 1
    return out


def print_timelines(console: Any, recs: Sequence[dict[str, Any] | None]) -> None:
    """One line per traced run: where its timeline is, or why it has none."""
    for rec in recs:
        t = (rec or {}).get("trace")
        if not t or rec is None:
            continue
        lay = rec.get("layout") or {}
        v = rec.get("variant") or {}
        what = f"{rec.get('app')} {lay.get('nodes')}x{lay.get('ranks_per_node')}x{lay.get('threads')} {v.get('mode')}"
        if t.get("path"):
            viewer = (
                f"an OTF2 archive: open it in Vampir, or its Chrome twin {t['chrome_path']} in ui.perfetto.dev"
                if t.get("chrome_path")
                else "open it in ui.perfetto.dev"
            )
            console.print(
                f"timeline of {what}: {t['path']} ({t['ranks']} ranks, {t['phase_spans']} phase spans, "
                f"{t['mpi_calls']} MPI calls; {viewer})",
                markup=False,
            )
        else:
            console.print(f"no timeline for {what}: {t.get('note')}", markup=False)


def default_path(results: Path, app: str, run_id: str) -> Path:
    """Where a run's trace goes when --trace names no file: beside the results."""
    return results.parent / "traces" / f"{app}-{run_id[:12]}.trace.json"
