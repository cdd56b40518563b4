"""One run of a miniapp: command construction, execution with a timeout, its record."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pxq import records
from pxq.launch import LaunchPlan, LaunchRequest, find_mpirun, plan_launch
from pxq.layout import InputError, Layout, resolve_mode
from pxq.paths import ROOT, binary

APPS = ("ring", "cg", "mg", "ft")
# NAS problem classes each proxy accepts (the ring is sized by --block instead).
CLASSES = {"cg": ("S", "W", "A", "B", "C"), "mg": ("S", "W", "A", "B", "C"), "ft": ("S", "W", "A", "B", "C")}
EXIT_BAD_INPUT = 2


def class_args(app: str, cls: str | None) -> list[str]:
    """The app's --class argument, checked here so a bad class fails before any run."""
    if cls is None:
        return []
    if app not in CLASSES:
        raise InputError(f"--class: {app} has no problem classes (size it with its own options "
                         f"after --, e.g. -- --block 64M)")
    if cls.upper() not in CLASSES[app]:
        raise InputError(f"unknown class '{cls}' for {app}: use {', '.join(CLASSES[app])}")
    return ["--class", cls.upper()]


@dataclass
class RunSpec:
    app: str
    layout: Layout
    alloc: str = "block"
    mode: str | None = None
    tile: str | None = None
    backend: str = "openmp"
    app_args: list[str] = field(default_factory=list)
    results: Path = Path("results/ring.jsonl")
    oversubscribe: bool = False
    hostfile: str | None = None
    launcher: str | None = None
    timeout: float = 600.0
    repeat: int = 0
    sweep_key: str | None = None
    cores: int = os.cpu_count() or 1
    driver_extra: dict[str, Any] = field(default_factory=dict)  # more facts for the record's "driver"
    placement: str | None = None  # packed, spread or custom (None: the launcher's default)
    placement_cpus: list[int] | None = None
    profile: Path | None = None  # preload the message profiler, its record to this file

    def resolved(self) -> tuple[str, int, str]:
        return resolve_mode(self.mode, self.layout.threads, self.tile)


@dataclass
class RunResult:
    status: str  # ok, failed (verification), error, timeout, bad-input
    returncode: int
    seconds: float
    output: str
    record: dict[str, Any] | None = None


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=ROOT, capture_output=True, text=True, timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def sweep_key(spec: RunSpec) -> str:
    mode, threads, tile = spec.resolved()
    key = {
        "app": spec.app, "layout": str(spec.layout.with_threads(threads)), "alloc": spec.alloc,
        "mode": mode, "tile": tile, "backend": spec.backend, "args": spec.app_args,
        "repeat": spec.repeat,
    }
    if spec.placement:
        key["placement"] = spec.placement
        if spec.placement_cpus:
            key["cores"] = spec.placement_cpus
    return json.dumps(key, sort_keys=True)


def build(spec: RunSpec, workdir: Path, run_id: str) -> tuple[LaunchPlan, list[str]]:
    """The launch plan and the full command line of a run."""
    mode, threads, tile = spec.resolved()
    layout = spec.layout.with_threads(threads)
    req = LaunchRequest(layout, spec.alloc, spec.oversubscribe, spec.hostfile, spec.launcher, spec.cores,
                        spec.placement, spec.placement_cpus)
    plan = plan_launch(req, find_mpirun(), workdir)
    driver = {"run_id": run_id, "repeat": spec.repeat, "layout": str(layout)}
    if plan.placement is not None:
        driver["placement"] = plan.placement
    if spec.sweep_key:
        driver["sweep_key"] = spec.sweep_key
    driver.update(spec.driver_extra)
    app_argv = [
        str(binary(spec.app)), "--mode", mode, "--threads", str(threads), "--tile", tile,
        "--backend", spec.backend, "--nodes", str(layout.nodes),
        "--ranks-per-node", str(layout.ranks_per_node), "--alloc", spec.alloc,
        "--launcher", plan.launcher, "--json", str(spec.results),
        "--driver-info", json.dumps(driver, sort_keys=True),
    ]
    if plan.oversubscribed:
        app_argv.append("--oversubscribed")
    launch = list(plan.argv)
    if spec.profile is not None:
        from pxq.msgdist import preload_flags

        launch[1:1] = preload_flags(spec.profile)
    return plan, launch + app_argv + list(spec.app_args)


def execute(spec: RunSpec, echo: bool = False) -> RunResult:
    """Runs one spec; a timeout kills the whole process group."""
    run_id = uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="pxq-run-") as tmp:
        plan, argv = build(spec, Path(tmp), run_id)
        for path, content in plan.files.items():
            Path(path).write_text(content)
        env = dict(os.environ)
        env.update(plan.env)
        env["PXQ_GIT_COMMIT"] = git_commit()
        env["PXQ_VNODE_DIR"] = str(Path(tmp) / "vnodes")
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=spec.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            return RunResult("timeout", -1, time.monotonic() - start, output or "")
        except BaseException:
            # Interrupted (Ctrl-C): the run is in its own session, so take it down too.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        seconds = time.monotonic() - start
    if echo:
        print(output, end="")
    found = records.by_run_id(records.read(spec.results), run_id)
    record = found[-1] if found else None
    if record is not None:
        status = record["status"]
    elif proc.returncode == EXIT_BAD_INPUT:
        status = "bad-input"
    else:
        status = "error"
    return RunResult(status, proc.returncode, seconds, output, record)


def execute_probe(spec: RunSpec, console: Any) -> tuple[dict[str, Any] | None, int]:
    """Runs a probe with its output shown; without a record, says why and gives the exit code
    to pass on (the probe's own, e.g. 2 for bad input; 3 when it had none)."""
    result = execute(spec, echo=True)
    if result.record is None:
        console.print(f"[red]probe {result.status}[/red] (exit code {result.returncode})")
        return None, result.returncode if result.returncode > 0 else 3
    return result.record, 0


def error_record(spec: RunSpec, result: RunResult) -> dict[str, Any]:
    """What a sweep records for a run that produced no record of its own."""
    mode, threads, tile = spec.resolved()
    tail = "\n".join(result.output.strip().splitlines()[-15:])
    return {
        "schema": records.SCHEMA, "app": spec.app, "status": result.status,
        "variant": {"mode": mode, "threads": threads, "tile_request": tile, "backend": spec.backend},
        "layout": {"nodes": spec.layout.nodes, "ranks_per_node": spec.layout.ranks_per_node,
                   "threads": threads, "alloc": spec.alloc},
        "error": {"returncode": result.returncode, "seconds": result.seconds, "output_tail": tail},
        "driver": {"sweep_key": spec.sweep_key, "repeat": spec.repeat},
    }
