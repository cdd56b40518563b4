"""A run's timeline as an OTF2 archive (``pxq run --trace FILE.otf2``), the format Vampir and
Score-P's tools read, made from the Chrome trace pxq writes first.

One location group per rank (on a system-tree node per host), one location per thread, one
region per phase, run stage and MPI call (MPI calls with OTF2's MPI paradigm); every span an
Enter and a Leave at nanosecond resolution. Spans of one thread are written properly nested, as
OTF2 requires: a span that would end after the span enclosing it is clipped to that end (clock
readings a nanosecond apart), and the archive's own reader loads it back before pxq reports it.

The Chrome file is read event by event (`events`) and written rank by rank: pxq writes each
rank's events together, so one rank's spans are in memory at a time (a traced run of thousands
of ranks holds millions of events). A rank whose events come apart is refused.

The otf2 package (PyPI) is optional. This module runs wherever it is importable: in pxq's own
environment when the user installed it there, otherwise in .deps/ecosystem (``./pxq setup
--ecosystem``) as ``python -m pxq.analysis.exports.otf2trace TRACE.json ARCHIVE``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.core.paths import python_with

FORMAT = "OTF2 archive (open traces.otf2 in Vampir)"
INSTALL_HINT = (
    "writing OTF2 needs the otf2 package: ./pxq setup --ecosystem (or .venv/bin/pip install otf2); "
    "--trace FILE.json writes the Chrome trace with nothing to install"
)


CHUNK = 1 << 20  # characters read at a time
MAX_EVENT = 64 << 20  # characters one event may take
_OPENING = re.compile(r'\s*\{\s*"traceEvents"\s*:\s*\[')
_BETWEEN = re.compile(r"[\s,]*")


def interpreter() -> str | None:
    """A Python that can import otf2: this one, or the ecosystem environment's; None if neither."""
    return python_with("otf2")


def _nested(spans: list[tuple[int, int, str, str]]) -> list[tuple[str, int, str, str]]:
    """One thread's (start, end, name, cat) spans as Enter/Leave events in time order, nested."""
    out: list[tuple[str, int, str, str]] = []
    stack: list[tuple[int, str, str]] = []
    for start, end, name, cat in sorted(spans, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][0] <= start:
            t, n, c = stack.pop()
            out.append(("leave", t, n, c))
        if stack:
            end = min(end, stack[-1][0])
        out.append(("enter", start, name, cat))
        stack.append((max(end, start), name, cat))
    while stack:
        t, n, c = stack.pop()
        out.append(("leave", t, n, c))
    return out


def check_replaceable(archive: Path) -> None:
    """An archive path pxq may replace: absent, or a folder holding an OTF2 archive (its
    traces.otf2 anchor); anything else is a user's, refused (exit 2)."""
    ours = archive.is_dir() and ((archive / "traces.otf2").is_file() or not any(archive.iterdir()))
    if archive.is_symlink() or (archive.exists() and not ours):
        raise InputError(
            f"--trace {archive} exists and is not an OTF2 archive, which pxq replaces whole: give another path, "
            "or move it away first"
        )


def events(path: Path) -> Iterator[dict[str, Any]]:
    """The events of a Chrome trace that opens with its event list (as pxq writes it), one at a
    time, reading CHUNK characters at a time: never the whole file (InputError when it is not such
    a trace, is cut short, or holds something else than JSON objects in its list)."""
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8") as f:
        buf, before = f.read(CHUNK), 0  # before: characters dropped from buf's front
        opening = _OPENING.match(buf)
        if opening is None:
            raise InputError(f"{path}: not a trace pxq wrote (it opens with its traceEvents list)")
        pos = opening.end()
        while True:
            pos = _BETWEEN.match(buf, pos).end()  # type: ignore[union-attr]
            if buf.startswith("]", pos):
                return
            try:
                event, pos = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError:
                more = f.read(CHUNK)
                if not more or len(buf) - pos > MAX_EVENT:
                    raise InputError(
                        f"{path}: no event could be read at character {before + pos}: the trace is cut short "
                        "or is not one pxq wrote"
                    ) from None
                before, buf, pos = before + pos, buf[pos:] + more, 0
                continue
            if not isinstance(event, dict):
                raise InputError(f"{path}: an event at character {before + pos} is not an object")
            yield event
            if pos > CHUNK:
                before, buf, pos = before + pos, buf[pos:], 0


def _by_rank(path: Path) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The trace's events, one rank's together (pxq writes them so): InputError when a rank's
    events come apart."""
    done: set[int] = set()
    rank: int | None = None
    held: list[dict[str, Any]] = []
    for e in events(path):
        pid = e.get("pid")
        if not isinstance(pid, int):
            raise InputError(f"{path}: an event with no rank (pid): not a trace pxq wrote")
        if pid != rank:
            if rank is not None:
                done.add(rank)
                yield rank, held
            if pid in done:
                raise InputError(f"{path}: rank {pid}'s events are not together: not a trace pxq wrote")
            rank, held = pid, []
        held.append(e)
    if rank is not None:
        yield rank, held


def write(trace_json: Path, archive: Path) -> None:
    """Writes the Chrome trace file `trace_json` (pxq's) as an OTF2 archive in the folder
    `archive`, one rank's events in memory at a time."""
    import otf2  # the optional package: imported only where this runs

    check_replaceable(archive)
    if archive.exists():
        shutil.rmtree(archive)
    with otf2.writer.open(str(archive), timer_resolution=1_000_000_000) as w:
        machine = w.definitions.system_tree_node("machine")
        regions: dict[tuple[str, str], Any] = {}
        hosts: dict[str, Any] = {}
        for rank, evs in _by_rank(trace_json):
            names = {e.get("tid"): e["args"]["name"] for e in evs if e.get("name") in ("process_name", "thread_name")}
            per_thread: dict[int, list[tuple[int, int, str, str]]] = {}
            for e in evs:
                if e.get("ph") == "X":
                    start = round(e["ts"] * 1000)
                    per_thread.setdefault(e["tid"], []).append(
                        (start, start + round(e["dur"] * 1000), e["name"], e["cat"])
                    )
            if not per_thread:
                continue
            label = names.get(None, f"rank {rank}")  # the process's name: "rank R (host)"
            host = label.partition("(")[2].rstrip(")") or "host"
            node = hosts.setdefault(host, w.definitions.system_tree_node(host, parent=machine))
            group = w.definitions.location_group(label, system_tree_parent=node)
            for tid, spans in sorted(per_thread.items()):
                writer = w.event_writer(names.get(tid, f"thread {tid}"), group=group)
                for kind, t, name, cat in _nested(spans):
                    key = (name, cat)
                    if key not in regions:
                        paradigm = otf2.Paradigm.MPI if cat == "mpi" else otf2.Paradigm.USER
                        regions[key] = w.definitions.region(name, paradigm=paradigm)
                    (writer.enter if kind == "enter" else writer.leave)(t, regions[key])


def read_back(archive: Path) -> dict[str, int]:
    """Per location ("rank R (host) / thread"), the Enter events the archive holds (its own
    reader; raises when the archive is not valid OTF2)."""
    import otf2

    counts: dict[str, int] = {}
    with otf2.reader.open(str(archive / "traces.otf2")) as r:
        for location, event in r.events:
            if isinstance(event, otf2.events.Enter):
                key = f"{location.group.name} / {location.name}"
                counts[key] = counts.get(key, 0) + 1
    return counts


def convert(trace_json: Path, archive: Path) -> dict[str, int]:
    """The Chrome trace file as an OTF2 archive, written and read back by an interpreter that
    has otf2, always in a process of its own (this one too): what the conversion and OTF2's
    writer allocate is returned when it ends (in the driver, after the merge, the same conversion
    of a 128-rank CG trace peaked at 648 MB against 218 MB apart); the enters per location it read
    back."""
    python = interpreter()
    if python is None:
        raise InputError(INSTALL_HINT)
    env_path = str(Path(__file__).resolve().parents[3])
    p = subprocess.run(
        [python, "-m", "pxq.analysis.exports.otf2trace", str(trace_json), str(archive)],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    if p.returncode != 0:
        raise InputError(f"the OTF2 archive could not be written: {(p.stderr or p.stdout).strip()[-400:]}")
    return json.loads(p.stdout)


if __name__ == "__main__":  # python -m pxq.analysis.exports.otf2trace TRACE.json ARCHIVE
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    try:
        write(source, target)
    except InputError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(read_back(target)))
