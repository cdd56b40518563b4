"""One run of a miniapp: command construction, execution with a timeout, its record."""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pxq.analysis.exports import trace
from pxq.analysis.messages import placement
from pxq.analysis.messages.msgdist import preload_env, preload_flags
from pxq.analysis.models import roofmark
from pxq.core import procs, progress, records, registry, schemas
from pxq.core.errors import InputError
from pxq.core.layout import Layout, resolve_mode
from pxq.core.paths import binary, git_commit
from pxq.launch import request
from pxq.launch.plan import plan_launch
from pxq.launch.request import LaunchPlan, LaunchRequest, omp_record
from pxq.launch.session import session
from pxq.machine import counters, envinfo

EXIT_VERIFICATION = records.EXIT_VERIFICATION
EXIT_BAD_INPUT = records.EXIT_BAD_INPUT
TRACE_AUTO = Path("<beside the results>")  # RunSpec.trace: the default file, named by the run


def class_args(app: str, cls: str | None) -> list[str]:
    """The app's --class argument, checked here so a bad class fails before any run."""
    if cls is None:
        return []
    classes = registry.classes(app)
    if not classes:
        raise InputError(
            f"--class: {app} has no problem classes (size it with its own options after --, e.g. -- --block 64M)"
        )
    if cls.upper() not in classes:
        raise InputError(f"unknown class '{cls}' for {app}: use {', '.join(classes)}")
    return ["--class", cls.upper()]


@dataclass
class RunSpec:
    app: str
    layout: Layout
    alloc: str = "block"
    mode: str | None = None
    tile: str | None = None
    backend: str = "openmp"
    fuse: str = "auto"  # fused sweeps: auto (with the tile), on, off
    app_args: list[str] = field(default_factory=list)
    results: Path = Path("results/ring.jsonl")
    oversubscribe: bool = False
    hostfile: str | None = None
    launcher: str | None = None
    timeout: float = 600.0
    repeat: int = 0
    sweep_key: str | None = None  # the run within its sweep: configuration and repeat
    sweep_id: str | None = None  # the sweep (a resumed sweep keeps its id)
    sweep_plan: str | None = None  # digest of the sweep's runs (what --resume matches)
    cores: int = os.cpu_count() or 1
    driver_extra: dict[str, Any] = field(default_factory=dict)  # more facts for the record's "driver"
    placement: str | None = None  # packed, spread or custom (None: the launcher's default)
    placement_cpus: list[int] | None = None
    profile: Path | None = None  # preload the message profiler, its record to this file
    rank_order: list[int] | None = None  # the ranks slot by slot (--rank-order); the record's alloc is "order"
    # Measure the run's channels with the message profiler and record them beside this
    # prediction ({"source", "model", "predicted"}; set with every rank order).
    channels: dict[str, Any] | None = None
    counters: str | None = None  # hw, sim or sim-llc (pxq.machine.counters); None: not counted
    trace: Path | None = None  # write the run's timeline here (TRACE_AUTO: beside the results)

    def resolved(self) -> tuple[str, int, str]:
        return resolve_mode(self.mode, self.layout.threads, self.tile)


@dataclass
class RunResult:
    status: str  # ok, failed (verification), error, timeout, bad-input
    returncode: int
    seconds: float
    output: str
    record: dict[str, Any] | None = None


def sweep_key(spec: RunSpec) -> str:
    mode, threads, tile = spec.resolved()
    key = {
        "app": spec.app,
        "layout": str(spec.layout.with_threads(threads)),
        "alloc": spec.alloc,
        "mode": mode,
        "tile": tile,
        "backend": spec.backend,
        **({"fuse": spec.fuse} if spec.fuse != "auto" else {}),
        "args": spec.app_args,
        "repeat": spec.repeat,
    }
    if spec.rank_order is not None:
        key["rank_order"] = spec.rank_order
    if spec.counters:
        key["counters"] = spec.counters
    if spec.placement:
        key["placement"] = spec.placement
        if spec.placement_cpus:
            key["cores"] = spec.placement_cpus
    return json.dumps(key, sort_keys=True)


def build(spec: RunSpec, workdir: Path, run_id: str) -> tuple[LaunchPlan, list[str]]:
    """The launch plan and the full command line of a run."""
    mode, threads, tile = spec.resolved()
    layout = spec.layout.with_threads(threads)
    req = LaunchRequest(
        layout,
        spec.alloc,
        spec.oversubscribe,
        spec.hostfile,
        spec.launcher,
        spec.cores,
        spec.placement,
        spec.placement_cpus,
        spec.rank_order,
        envinfo.mpi_flavour(),
    )
    plan = plan_launch(req, None, workdir)
    driver = {"run_id": run_id, "repeat": spec.repeat, "layout": str(layout), "omp": omp_record(plan.env)}
    driver.update(plan.record())  # where the run went: the Slurm job, the cluster of this machine
    if plan.placement is not None:
        driver["placement"] = plan.placement
    if spec.rank_order is not None:
        driver["rank_order"] = {"ranks": spec.rank_order, "source": (spec.channels or {}).get("source")}
    if spec.sweep_key:
        driver.update(sweep_key=spec.sweep_key, sweep_id=spec.sweep_id, sweep_plan=spec.sweep_plan)
    driver.update(spec.driver_extra)
    sim = counters.simulating(spec.counters)
    if sim:
        counters.check(spec.app, spec.backend)
    app_argv = [
        str(counters.sim_binary(spec.app) if sim else binary(spec.app)),
        "--mode",
        mode,
        "--threads",
        str(threads),
        "--tile",
        tile,
        "--backend",
        spec.backend,
        "--fuse",
        spec.fuse,
        "--nodes",
        str(layout.nodes),
        "--ranks-per-node",
        str(layout.ranks_per_node),
        "--alloc",
        "order" if spec.rank_order is not None else spec.alloc,
        "--launcher",
        plan.launcher,
        "--json",
        str(spec.results),
        *request.driver_info_args(json.dumps(driver, sort_keys=True), workdir),
    ]
    if plan.oversubscribed:
        app_argv.append("--oversubscribed")
    if spec.counters:
        app_argv += ["--counters", "sim" if sim else "hw" if spec.counters == "hw" else "off"]
    tdir = workdir / "trace" if spec.trace is not None else None
    launch = (
        list(plan.argv)
        if plan.passes_environment or spec.profile is None
        else plan.with_flags(preload_flags(spec.profile, tdir))
    )
    if sim and spec.counters:
        launch += counters.wrapper(*counters.simulated(spec.counters, counters.machine_caches()), workdir)
    if spec.profile is not None and plan.passes_environment:
        plan.env.update(preload_env(spec.profile, tdir))
    return plan, launch + app_argv + list(spec.app_args)


# Options the driver sets itself: given after `--` they would contradict the record.
DRIVER_OWNED = (
    "--mode",
    "--threads",
    "--tile",
    "--backend",
    "--fuse",
    "--nodes",
    "--ranks-per-node",
    "--alloc",
    "--launcher",
    "--json",
    "--driver-info",
    "--driver-info-file",
    "--oversubscribed",
    "--declare",
)
DRIVER_OPTION = {
    "--mode": "--mode",
    "--threads": "--threads or the layout's T",
    "--tile": "--tile",
    "--backend": "--backend",
    "--fuse": "--fuse",
    "--nodes": "--layout",
    "--ranks-per-node": "--layout",
    "--alloc": "--alloc",
    "--launcher": "--launcher",
    "--json": "--results",
    "--driver-info": "nothing (the driver writes it)",
    "--driver-info-file": "nothing (the driver writes it)",
    "--oversubscribed": "--oversubscribe",
    "--declare": "pxq advise (it declares each configuration's work)",
}


def check_app_args(app_args: list[str]) -> None:
    """Options after `--` go to the app, except those the driver owns."""
    for arg in app_args:
        name = arg.split("=", 1)[0]
        if name in DRIVER_OWNED:
            raise InputError(f"{name} after --: pxq sets it itself; use pxq's {DRIVER_OPTION[name]} before --")


def verdict(finished: procs.Finished, rec: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
    """The run's one final status and record, from what the app wrote and how it ended."""
    if finished.timed_out:
        return "timeout", rec
    if rec is not None:
        status = rec.get("status", "error")
        if finished.returncode == 0 and status == "ok":
            return "ok", rec
        if finished.returncode == EXIT_VERIFICATION and status == "failed":
            return "failed", rec
        return "error", rec  # a record, then a crash (or a code that contradicts it)
    if finished.returncode == EXIT_BAD_INPUT and "error:" in finished.output:
        return "bad-input", None
    return "error", None


def _error_block(finished: procs.Finished, status: str) -> dict[str, Any]:
    tail = "\n".join(finished.output.strip().splitlines()[-15:])
    why = {"timeout": "killed after its timeout", "error": "the run failed"}.get(status, status)
    return {
        "returncode": finished.returncode,
        "seconds": round(finished.seconds, 3),
        "reason": why,
        "output_tail": tail,
    }


def execute(spec: RunSpec, echo: bool = False) -> RunResult:
    """Runs one spec and appends its one final record to spec.results.

    The app writes its record to a file of the run's own; the driver then decides the run's
    status from that record and how the job ended (a timeout or a crash after the record was
    written turns it into a failure) and appends exactly one record. A run refused as bad
    input (exit 2 with the app's message) leaves no record."""
    run_id = uuid.uuid4().hex
    if counters.simulating(spec.counters):
        counters.ensure_sim_build([spec.app])
    wanted = spec.channels is not None or spec.trace is not None

    def private(tmp: Path) -> RunSpec:
        """The spec as launched: its record, and the message profile it asks for, in its own folder."""
        return replace(
            spec, results=tmp / "record.jsonl", profile=spec.profile or (tmp / "msgprof.jsonl" if wanted else None)
        )

    def make(tmp: Path) -> tuple[LaunchPlan, list[str]]:
        if spec.trace is not None:
            (tmp / "trace").mkdir()
        return build(private(tmp), tmp, run_id)

    with session(make, spec.launcher, spec.hostfile, spec.results, "pxq-run-") as s:
        tmp, launched = s.folder, private(s.folder)
        s.env["PXQ_GIT_COMMIT"] = git_commit()
        finished = procs.run(s.argv, s.env, run_id, spec.timeout)
        try:
            # The app's own record, in the run's private folder, before the driver completes it
            # (counters, channels): parsed within the door's bounds; the schema checks it whole.
            found = records.by_run_id(records.read(launched.results, check=False), run_id)
        except records.RecordError:
            found = []  # rank 0 died while writing: no record of its own
        if found and spec.channels is not None:
            found[-1]["channels"] = placement.measured_channels(launched.profile, spec.channels)
        if found and spec.counters and spec.counters != "hw":
            found[-1]["counters"] = counters.run_record(spec.counters, tmp, spec.layout.ranks)
        if found and isinstance((found[-1].get("time") or {}).get("app_wall"), (int, float)):
            # The launcher's share of the job: starting the processes, MPI_Finalize and teardown.
            found[-1]["time"]["launch"] = round(max(0.0, finished.seconds - found[-1]["time"]["app_wall"]), 6)
        if found and found[-1].get("work"):
            roofmark.attach(found[-1])  # how close to this machine's physical limits
        if found and spec.trace is not None:
            dest = trace.default_path(spec.results, spec.app, run_id) if spec.trace == TRACE_AUTO else spec.trace
            found[-1]["trace"] = trace.finish(tmp / "trace", dest, found[-1])
    if echo:
        print(shown(finished.output, tmp), end="")
    status, rec = verdict(finished, found[-1] if found else None)
    if status == "bad-input":
        return RunResult(status, EXIT_BAD_INPUT, finished.seconds, finished.output, None)
    if rec is None:
        rec = error_record(spec, status, run_id)
    rec["status"] = status
    if status in records.FAILED_STATUSES:
        rec["error"] = _error_block(finished, status)
    records.append(spec.results, rec)
    return RunResult(status, finished.returncode, finished.seconds, finished.output, rec)


# Lines of a run's output that say nothing to the user: Open MPI's rsh launcher racing its own
# child to setpgid (harmless: the daemon runs in the group it asked for), and the profiler naming
# the run's private file, which the driver reads and removes.
_NOISE = re.compile(r"^\[[^\]]*\] plm:rsh: Warning: setpgid\(\d+,\d+\) failed in parent with errno=")


def shown(output: str, private: Path) -> str:
    """A run's output as the user sees it (the record keeps the whole output's tail)."""
    keep = [
        line
        for line in output.splitlines(keepends=True)
        if not _NOISE.match(line) and not line.startswith(f"pxq-msgprof: record appended to {private}/")
    ]
    return "".join(keep)


# A run's status as an exit code (see records.py).
STATUS_EXIT = {
    "ok": records.EXIT_OK,
    "failed": records.EXIT_VERIFICATION,
    "bad-input": records.EXIT_BAD_INPUT,
    "error": records.EXIT_RUN_FAILED,
    "timeout": records.EXIT_RUN_FAILED,
}


def say_failure(console: Any, what: str, result: RunResult, results: Path) -> None:
    where = f"record: {results}" if result.record is not None else "no record written"
    console.print(f"[red]{what} {result.status}[/red] (exit code {result.returncode}; {where})")


def execute_probe(spec: RunSpec, console: Any) -> tuple[dict[str, Any] | None, int]:
    """Runs a probe with its output shown; unless it verified, says why and gives the exit
    code to pass on."""
    test = f" {spec.app_args[0]}" if spec.app == "probe-osu" and spec.app_args else ""
    name = "rank-pair" if "--rankpairs" in spec.app_args else spec.app.removeprefix("probe-")
    what = f"{name}{test} probe on layout {spec.layout}"
    if hasattr(console, "status"):  # a spinner (off a terminal, a line every few seconds) while it runs
        with progress.running(console, f"{what}: running (its table comes when it ends)"):
            result = execute(spec, echo=True)
    else:
        result = execute(spec, echo=True)
    if result.status != "ok":
        say_failure(console, "probe", result, spec.results)
        return None, STATUS_EXIT[result.status]
    return result.record, 0


def error_record(spec: RunSpec, status: str, run_id: str) -> dict[str, Any]:
    """The record of a run that produced none of its own: what was asked, and (added by the
    caller) why it failed."""
    mode, threads, tile = spec.resolved()
    layout = spec.layout.with_threads(threads)
    driver = {"run_id": run_id, "repeat": spec.repeat, "layout": str(layout), **spec.driver_extra}
    if spec.sweep_key:
        driver.update(sweep_key=spec.sweep_key, sweep_id=spec.sweep_id, sweep_plan=spec.sweep_plan)
    return {
        "kind": schemas.kind_for_app(spec.app),
        "schema": records.SCHEMA,
        "app": spec.app,
        "status": status,
        "variant": {"mode": mode, "threads": threads, "tile_request": tile, "backend": spec.backend},
        "layout": {
            "nodes": spec.layout.nodes,
            "ranks_per_node": spec.layout.ranks_per_node,
            "threads": threads,
            "alloc": "order" if spec.rank_order is not None else spec.alloc,
        },
        "driver": driver,
    }
