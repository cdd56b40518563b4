"""What pxq drivers killed before their end left (kill -9 of the driver's whole group, its
watchdog included, as an out-of-memory kill of a cgroup does): their run and shared-memory
folders, whose names carry the driver's pid (pxq.core.procs.workdir), and processes started for
them, which carry it in their environment (PXQ_DRIVER_PID). The next pxq command stops and
removes them (`tidy`), saying so; a live driver's are never touched."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

from pxq.core import procs
from pxq.core.procs import DRIVER_TAG, SHM

_LEFT = re.compile(r"^pxq-[a-z-]+?-(\d+)-[A-Za-z0-9_]{6,}$")


def _driver_gone(pid: int) -> bool:
    """No process PID runs: the driver is gone. (A number taken again by another process keeps
    what the driver left until that process ends too: never a live driver's folder removed.)"""
    return not os.path.exists(f"/proc/{pid}")


def leftovers() -> tuple[list[Path], list[int]]:
    """What drivers killed before their end (kill -9, an out-of-memory kill of their whole
    group, watchdog and all) left: their run and shared-memory folders, and processes started
    for them (mpirun, ranks) still running. This user's only."""
    folders = []
    uid = os.getuid()
    for base in dict.fromkeys([tempfile.gettempdir(), "/tmp", SHM]):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            m = _LEFT.match(entry.name)
            try:
                mine = entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == uid
            except OSError:
                continue
            if m and mine and int(m.group(1)) != os.getpid() and _driver_gone(int(m.group(1))):
                folders.append(Path(entry.path))
    needle = f"{DRIVER_TAG}=".encode()
    orphans = []
    for pid, env in procs.environments():
        tag = next((v for v in env if v.startswith(needle)), None)
        if tag is not None and tag[len(needle) :].isdigit():
            owner = int(tag[len(needle) :])
            if owner != os.getpid() and _driver_gone(owner):
                orphans.append(pid)
    return folders, orphans


def tidy(say: Callable[[str], None]) -> None:
    """Stops and removes what killed drivers left (leftovers), saying what it did."""
    folders, orphans = leftovers()
    for pid in orphans:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for path in folders:
        shutil.rmtree(path, ignore_errors=True)
    if folders or orphans:
        named = ", ".join(str(p) for p in folders[:3]) + (" ..." if len(folders) > 3 else "")
        say(
            f"pxq: a pxq driver killed before its end left {len(orphans)} process(es) and {len(folders)} folder(s)"
            + (f" ({named})" if folders else "")
            + ": stopped and removed"
        )
