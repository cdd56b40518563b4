"""Run records: JSON lines, appended atomically, read strictly."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any, Iterable

from pxq.layout import InputError

SCHEMA = 1


class RecordError(RuntimeError):
    """A results file that cannot be read as run records."""


def check_writable(path: Path) -> None:
    """Raises InputError naming the path and the fix; creates nothing."""
    path = Path(path)
    if path.exists():
        if path.is_dir():
            raise InputError(f"results path '{path}' is a directory: give a file such as {path}/results.jsonl")
        if not os.access(path, os.W_OK):
            raise InputError(f"results file '{path}' is not writable: fix its permissions or use --results")
        return
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        # Creating our own default results folder is fine; a user path must exist.
        raise InputError(f"results directory '{parent}' does not exist: create it or use --results")
    if not os.access(parent, os.W_OK):
        raise InputError(f"results directory '{parent}' is not writable: use --results PATH")


def append(path: Path, record: dict[str, Any]) -> None:
    """One line, one write, under an exclusive lock: concurrent writers never interleave."""
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        written = os.write(fd, line)
        if written != len(line):
            raise OSError(f"short write to {path}")
        os.fsync(fd)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read(path: Path) -> list[dict[str, Any]]:
    """All records of a results file ([] when it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise RecordError(f"{path}:{number}: not a JSON record ({e.msg})") from None
            if not isinstance(rec, dict) or "app" not in rec or "status" not in rec:
                raise RecordError(f"{path}:{number}: not a pxq run record")
            out.append(rec)
    return out


def by_run_id(records: Iterable[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    return [r for r in records if r.get("driver", {}).get("run_id") == run_id]


def completed_keys(records: Iterable[dict[str, Any]]) -> set[str]:
    """Sweep keys of the runs that finished and verified (what --resume skips)."""
    return {
        r["driver"]["sweep_key"]
        for r in records
        if r.get("status") == "ok" and r.get("driver", {}).get("sweep_key")
    }
