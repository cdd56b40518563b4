"""The cache levels pxq measures, and the working sets the studies choose from them.

A VM may report its host's whole L3 (hundreds of MiB) where its cores see a fraction of it, so
what hwloc says is a claim to check. Once per machine pxq runs the stride probe at one stride
over growing arrays (up to twice what hwloc reports, within the memory) and keeps the steps it
finds in $PXQ_CACHE_PROFILE, else $XDG_CACHE_HOME/pxq/caches.json, else
~/.cache/pxq/caches.json, keyed by host, processor and hwloc's figures. The measured last level
is where the time per access last stepped up; where it and hwloc disagree, the profile says so
and the sizes follow the measurement.

`working_set()` then grows a study's default size past the measured last level, or says why
the machine's memory cannot hold a size that would show the effect."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pxq.core import outputs, records
from pxq.core.errors import InputError
from pxq.core.layout import format_volume
from pxq.core.paths import binary
from pxq.machine import envinfo

MIB = 1 << 20
PROBE_FLOOR = 64 * MIB  # the probe's largest array is at least this
PROBE_CEILING = 2048 * MIB  # and at most this
FORMAT = 3  # a stored profile of another format is measured again


def kept_path(variable: str, name: str) -> Path:
    """Where pxq keeps a measured profile of this machine: $variable, else
    $XDG_CACHE_HOME/pxq/NAME, else ~/.cache/pxq/NAME."""
    if os.environ.get(variable):
        return Path(os.environ[variable])
    base = Path(os.environ["XDG_CACHE_HOME"]) if os.environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "pxq" / name


def profile_path() -> Path:
    return kept_path("PXQ_CACHE_PROFILE", "caches.json")


def available_memory() -> int:
    """MemAvailable from /proc/meminfo (bytes); the physical memory elsewhere."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def key(machine: dict[str, Any]) -> dict[str, Any]:
    caches = machine.get("caches", {})
    return {
        "format": FORMAT,
        "host": machine.get("host", "?"),
        "cpu_model": machine.get("cpu_model", "?"),
        "hwloc": {k: (caches.get(k) or {}).get("bytes", 0) for k in ("l1d", "l2", "l3")},
    }


def levels(steps: list[dict[str, Any]], hwloc: dict[str, int], largest: int) -> dict[str, Any]:
    """The measured cache levels from the probe's steps, beside hwloc's: the last level is the
    outermost step (its "spills" size: arrays from there on come from memory)."""
    found = sorted(steps, key=lambda s: s["spills"])
    last = found[-1]["spills"] if found else None
    rows: list[dict[str, Any]] = []
    for name in ("l1d", "l2", "l3"):
        size = hwloc.get(name, 0)
        if not size:
            continue
        near = [s for s in found if s["fits"] / 2 <= size <= s["spills"] * 2]
        rows.append(
            {
                "level": name,
                "hwloc_bytes": size,
                "reached": size < largest,
                "step": near[0] if near else None,
                "agrees": bool(near) or size >= largest,
            }
        )
    outer = max((k for k in ("l1d", "l2", "l3") if hwloc.get(k)), key=lambda k: hwloc[k], default=None)
    hw_last = hwloc.get(outer, 0) if outer else 0
    agree = all(r["agrees"] for r in rows)
    if last is None:
        note = "the probe found no step: the sizes follow hwloc"
    elif agree:
        note = f"the measured steps agree with hwloc's levels (last at {format_volume(last)})"
    else:
        wrong = ", ".join(f"{r['level'].upper()} {format_volume(r['hwloc_bytes'])}" for r in rows if not r["agrees"])
        note = (
            f"hwloc reports {wrong}, but the probe found no step there; the last step is at "
            f"{format_volume(last)}: sizes follow the measurement"
        )
    return {
        "steps": found,
        "levels": rows,
        "hwloc_last_bytes": hw_last,
        "last_level_bytes": last if last is not None else hw_last,
        "source": "measured" if last is not None else "hwloc",
        "agrees": agree,
        "note": note,
        "largest_probed": largest,
    }


def probe_size(hwloc_last: int, memory: int) -> int:
    """The largest array of the measurement: twice hwloc's last level, within the limits."""
    want = max(PROBE_FLOOR, 2 * hwloc_last)
    return max(4 * MIB, min(want, PROBE_CEILING, memory // 4))


def measure(machine: dict[str, Any], binary: Path) -> dict[str, Any]:
    """Runs the stride probe once (one copy, stride 64 B) and returns the profile."""
    mine = key(machine)
    largest = probe_size(max(mine["hwloc"].values(), default=0), available_memory())
    with tempfile.TemporaryDirectory(prefix="pxq-caches-") as tmp:
        out = Path(tmp) / "stride.jsonl"
        argv = [
            str(binary),
            "--min",
            "4K",
            "--max",
            str(largest),
            "--stride",
            "64",
            "--accesses",
            "2097152",
            "--repeat",
            "3",
            "--copies",
            "1",
            "--quiet",
            "--json",
            str(out),
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"the stride probe failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        rec = json.loads(out.read_text().splitlines()[-1])
    got = levels(rec["detection"]["steps"], mine["hwloc"], rec["size"]["max"])
    # One core reading and writing a block in its nearest cache: no kernel of pxq's moves more
    # per core (the tiling study's bandwidth guard).
    peak = max((b["gbs"] for b in rec.get("blocks", []) if b.get("gbs")), default=None)
    return {**mine, "date": rec["context"].get("date", ""), **got, "peak_gbs": peak}


# The fields of a stored cache profile pxq reads, with their types (a profile that is not so is
# measured again, never used).
_PROFILE = {
    "type": "object",
    "required": ["format", "last_level_bytes", "levels"],
    "properties": {
        "format": {"type": "integer"},
        "last_level_bytes": {"type": "integer", "minimum": 1},
        "hwloc_last_bytes": {"type": "integer", "minimum": 0},
        "peak_gbs": {"type": ["number", "null"], "minimum": 0},
        "levels": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["level", "hwloc_bytes", "agrees"],
                "properties": {
                    "level": {"enum": ["l1d", "l2", "l3"]},
                    "hwloc_bytes": {"type": "integer", "minimum": 0},
                    "agrees": {"type": "boolean"},
                },
            },
        },
        "note": {"type": "string"},
    },
}


def load(machine: dict[str, Any]) -> dict[str, Any] | None:
    """The stored profile of this machine, if one was measured (None for another machine's)."""
    import jsonschema

    path = profile_path()
    try:
        prof = records.json_file(path, "not a cache profile pxq writes")
        jsonschema.validate(prof, _PROFILE)
    except (FileNotFoundError, InputError, jsonschema.ValidationError):
        return None  # none, or not one pxq wrote: measured again
    mine = key(machine)
    return prof if all(prof.get(k) == v for k, v in mine.items()) else None


def save(prof: dict[str, Any]) -> Path | None:
    """Written whole; None when the folder cannot be written."""
    return outputs.keep_json(profile_path(), prof, "caches", "the kept cache profile (PXQ_CACHE_PROFILE)")


def profile(machine: dict[str, Any], binary: Path) -> dict[str, Any]:
    """This machine's cache profile: stored, else measured now and stored. Where the probe
    cannot run, hwloc's figures, said to be unmeasured."""
    prof = load(machine)
    if prof is not None:
        return prof
    outputs.check(profile_path(), "caches", "the kept cache profile (PXQ_CACHE_PROFILE)")  # before measuring
    try:
        prof = measure(machine, binary)
    except (OSError, RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
        mine = key(machine)
        last = max(mine["hwloc"].values(), default=0)
        return {
            **mine,
            "steps": [],
            "levels": [],
            "hwloc_last_bytes": last,
            "last_level_bytes": last,
            "source": "hwloc",
            "agrees": True,
            "note": f"not measured ({e}): the sizes follow hwloc",
        }
    save(prof)
    return prof


def here(say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """This machine's profile (one call of pxq-envinfo); `say` hears when it is measured now."""
    machine = envinfo.machine()
    if say is not None and load(machine) is None:
        say("measuring this machine's cache levels once (the stride probe at 64 B): a few seconds")
    return profile(machine, binary("probe-stride"))


@dataclass
class WorkingSet:
    bytes: int  # the size chosen
    why: str  # the reason, in a sentence


def working_set(
    default: int, last_level: int, copies: int, memory: int, factor: int = 2, per_copy: int = 1
) -> WorkingSet:
    """A working set per copy (rank, core) at least `factor` x the measured last level, so
    that `copies` of it leave the cache; the default when that already holds. `per_copy`
    buffers of that size live at once in each copy; a quarter of the available memory is the
    most a study takes."""
    want = -(-max(default, factor * last_level) // MIB) * MIB  # whole MiB, so it prints as a size option
    cap = memory // (4 * max(1, copies) * max(1, per_copy)) // MIB * MIB
    if want <= default:
        return WorkingSet(
            default,
            f"{format_volume(default)} per copy is {default / max(1, last_level):.1f}x "
            f"the measured last level ({format_volume(last_level)})",
        )
    if want <= cap:
        return WorkingSet(
            want,
            f"grown from {format_volume(default)} to {format_volume(want)} per copy: {factor}x the measured last level "
            f"({format_volume(last_level)}), which holds the default",
        )
    return WorkingSet(
        max(default, cap),
        f"the measured last level ({format_volume(last_level)}) needs {format_volume(want)} per copy to be left, but "
        f"the available memory ({format_volume(memory)}) allows {format_volume(cap)} for {copies} copies",
    )


RING_BLOCK = 64 * MIB  # the published ring's 64 MB per process


def ring_block(last_level: int, ranks: int, memory: int) -> WorkingSet:
    """The ring's bytes per rank (the tiling study, the demo): 64 MiB, or twice the measured
    last level; a rank holds its block and the two it sends and receives."""
    return working_set(RING_BLOCK, last_level, ranks, memory, factor=2, per_copy=3)


def array_size(last_level: int, copies: int, memory: int, default: int = 64 * MIB) -> WorkingSet:
    """The largest array of a stride sweep (the stride study, lab 3): a power of two at least
    twice the measured last level per copy (the probes' sizes are powers of two), within the
    memory."""
    ws = working_set(default, last_level, copies, memory, factor=2)
    size = 1 << (ws.bytes - 1).bit_length()
    if size > ws.bytes and size * copies * 4 > memory:
        size //= 2
    return WorkingSet(size, ws.why)


def fits(size: int, last_level: int, copies: int = 1) -> bool:
    """Whether `copies` working sets of `size` together stay in the measured last level."""
    return size * max(1, copies) <= last_level
