"""A run's timeline as an OTF2 archive (``pxq run --trace FILE.otf2``), the format Vampir and
Score-P's tools read, made from the Chrome trace pxq writes first.

One location group per rank (on a system-tree node per host), one location per thread, one
region per phase, run stage and MPI call (MPI calls with OTF2's MPI paradigm); every span an
Enter and a Leave at nanosecond resolution. Spans of one thread are written properly nested, as
OTF2 requires: a span that would end after the span enclosing it is clipped to that end (clock
readings a nanosecond apart), and the archive's own reader loads it back before pxq reports it.

The otf2 package (PyPI) is optional. This module runs wherever it is importable: in pxq's own
environment when the user installed it there, otherwise in .deps/ecosystem (``./pxq setup
--ecosystem``) as ``python -m pxq.analysis.exports.otf2trace TRACE.json ARCHIVE``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.core.paths import python_with

FORMAT = "OTF2 archive (open traces.otf2 in Vampir)"
INSTALL_HINT = (
    "writing OTF2 needs the otf2 package: ./pxq setup --ecosystem (or .venv/bin/pip install otf2); "
    "--trace FILE.json writes the Chrome trace with nothing to install"
)


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


def write(trace: dict[str, Any], archive: Path) -> None:
    """Writes `trace` (pxq's Chrome trace) as an OTF2 archive in the folder `archive`."""
    import otf2  # the optional package: imported only where this runs

    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in trace["traceEvents"] if e["name"].endswith("_name")}
    per_thread: dict[tuple[int, int], list[tuple[int, int, str, str]]] = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            start = round(e["ts"] * 1000)
            per_thread.setdefault((e["pid"], e["tid"]), []).append(
                (start, start + round(e["dur"] * 1000), e["name"], e["cat"])
            )
    check_replaceable(archive)
    if archive.exists():
        shutil.rmtree(archive)
    with otf2.writer.open(str(archive), timer_resolution=1_000_000_000) as w:
        machine = w.definitions.system_tree_node("machine")
        regions: dict[tuple[str, str], Any] = {}
        hosts: dict[str, Any] = {}
        groups: dict[int, Any] = {}
        for (rank, tid), spans in sorted(per_thread.items()):
            if rank not in groups:
                label = names.get((rank, None), f"rank {rank}")
                host = label.partition("(")[2].rstrip(")") or "host"
                node = hosts.setdefault(host, w.definitions.system_tree_node(host, parent=machine))
                groups[rank] = w.definitions.location_group(label, system_tree_parent=node)
            writer = w.event_writer(names.get((rank, tid), f"thread {tid}"), group=groups[rank])
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
    has otf2; the enters per location it read back."""
    python = interpreter()
    if python is None:
        raise InputError(INSTALL_HINT)
    if python == sys.executable:
        write(json.loads(trace_json.read_text()), archive)
        return read_back(archive)
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
    write(json.loads(source.read_text()), target)
    print(json.dumps(read_back(target)))
