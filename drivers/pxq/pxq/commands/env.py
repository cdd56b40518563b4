"""`pxq env`: what pxq sees (cores, caches, MPI, its backends) and the layouts it can run."""

from __future__ import annotations

import argparse
import subprocess

from rich.console import Console
from rich.table import Table

from pxq.core import outputs, plugins, registry
from pxq.core.errors import InputError
from pxq.core.layout import format_bytes
from pxq.machine import envinfo
from pxq.machine.mpi import find_mpirun


def add(p: argparse.ArgumentParser) -> None:
    p.description = "What pxq sees here. Example: ./pxq env --json > machine.json"
    p.add_argument("--json", action="store_true", help="the same as one JSON document on standard output")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    return show_json() if args.json else show(console)


def show_json() -> int:
    """What show() prints, as JSON: the machine, the cores pxq uses, mpirun, the backends, the layouts."""
    try:
        mpirun: str | None = str(find_mpirun())
    except InputError:
        mpirun = None
    n = envinfo.cores()
    doc = {
        "machine": envinfo.machine(),
        "usable_cores": n,
        "mpirun": mpirun,
        "backends": registry.registry()["backends"],
        "layouts": [str(x) for x in envinfo.layouts_for(n)],
    }
    print(outputs.dumps(outputs.finite(doc), indent=1))
    return 0


def _backend_text(b: dict) -> str:
    if not b["available"]:
        return f"{b['name']}: not built ({b['enable']})"
    return f"{b['name']} {b['version']} ({b['runtime']})".replace("  ", " ")


def show(console: Console) -> int:
    info = envinfo.machine()
    n = envinfo.cores()
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
    t.add_row("backends", "; ".join(_backend_text(b) for b in registry.registry()["backends"]))
    t.add_row("git", info["git_commit"])
    t.add_row("layouts", ", ".join(str(x) for x in envinfo.layouts_for(n)) + "  (p > 1 runs on virtual nodes here)")
    console.print(t)
    return 0


PLUGIN = plugins.Command(
    help="what pxq sees: cores, caches, MPI, backends, layouts",
    order=15,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq env --json > machine.json",
)
