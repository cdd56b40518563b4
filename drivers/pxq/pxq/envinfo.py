"""`pxq env`: what pxq sees (cores, caches, MPI, Kokkos, compiler) and the layouts it can run."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.launch import find_mpirun
from pxq.layout import InputError, Layout, format_bytes
from pxq.paths import binary, build_hint


def machine() -> dict[str, Any]:
    exe = binary("envinfo")
    if not exe.exists():
        raise InputError(f"{exe} is missing: {build_hint()}")
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def packages() -> int:
    """Processor packages (sockets) on this machine; 1 when pxq-envinfo cannot say."""
    try:
        return int(machine().get("packages") or 1)
    except (InputError, OSError, ValueError, subprocess.SubprocessError):
        return 1


def cores() -> int:
    """Cores this process may use (affinity), the limit for runs without oversubscription."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def layouts_for(n: int) -> list[Layout]:
    """Every p x q x T with p*q*T = n: the layouts that use all cores exactly once."""
    out = []
    for p in range(1, n + 1):
        for q in range(1, n + 1):
            if n % (p * q) == 0:
                out.append(Layout(p, q, n // (p * q)))
    return out


def show(console: Console) -> int:
    info = machine()
    n = cores()
    try:
        mpirun = find_mpirun()
        ver = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30)
        mpirun_text = f"{mpirun} ({ver.stdout.splitlines()[0] if ver.stdout else '?'})"
    except InputError as e:
        mpirun_text = f"[red]{e}[/red]"
    t = Table(title="pxq env", show_header=False)
    t.add_column("what")
    t.add_column("value")
    t.add_row("host", info["host"])
    t.add_row("CPU", info["cpu_model"])
    t.add_row(
        "topology",
        f"{info['packages']} package(s), {info['cores']} core(s), {info['pus']} PU(s), "
        f"{info['numa_nodes']} NUMA node(s); {n} usable by pxq",
    )
    c = info["caches"]
    for level in ("l1d", "l2", "l3"):
        lv = c[level]
        if lv["bytes"]:
            t.add_row(level.upper(), f"{format_bytes(lv['bytes'])} per instance, shared by {lv['shared_by']} PU(s)")
    t.add_row("cache source", c["source"])
    t.add_row("compiler", info["compiler"])
    t.add_row("MPI", info["mpi_library"])
    t.add_row("mpirun", mpirun_text)
    t.add_row("Kokkos", info["kokkos"] or "not built (backend openmp only)")
    t.add_row("backends", ", ".join(info["backends"]))
    t.add_row("git", info["git_commit"])
    t.add_row("layouts", ", ".join(str(x) for x in layouts_for(n)) + "  (p > 1 runs on virtual nodes here)")
    console.print(t)
    return 0
