"""`pxq probe allreduce|bcast|alltoall|barrier`: the variability of a collective, run with
pxq-probe-collective on any layout, optionally next to a controlled background load
(pxq-noise), with a time series and a histogram of the call times."""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.core import plugins, procs, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, parse_bytes, parse_layout
from pxq.core.paths import binary, build_hint, figure_path, results_path
from pxq.experiments import runner
from pxq.experiments.options import add_launch_options, launch_spec
from pxq.figures import collective

COLLECTIVES = ("allreduce", "bcast", "alltoall", "barrier")
NOISE_MODES = ("memory", "compute", "network")
READY_WAIT = 30.0  # seconds the background load may take to say it runs


class Noise:
    """A pxq-noise process for the lifetime of a `with` block. It runs in its own session and
    is stopped (SIGTERM, then SIGKILL) however the block ends, interrupts included; it also
    stops by itself after `lifetime` seconds should this process be killed outright."""

    def __init__(self, mode: str, cores: list[int], intensity: float, lifetime: float, tag: str):
        self.argv = [
            str(binary("noise")),
            "--mode",
            mode,
            "--cores",
            ",".join(str(c) for c in cores),
            "--intensity",
            str(intensity),
            "--seconds",
            str(int(lifetime) + 1),
            "--tag",
            tag,
        ]
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Noise:
        if not Path(self.argv[0]).exists():
            raise InputError(f"{self.argv[0]} is missing: {build_hint()}")
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        # It says "ready" once its settings are checked and its load runs; bad settings end it
        # first. Waiting for the line, not a fixed moment, holds on a loaded machine too.
        assert self.proc.stdout is not None
        try:
            ready = select.select([self.proc.stdout], [], [], READY_WAIT)[0]
            said = self.proc.stdout.readline() if ready else None
        except BaseException:  # a Ctrl-C while waiting: the with block never began, so stop it here
            self.stop()
            raise
        if said is None or not said.startswith("pxq-noise: ready"):
            self.stop()
            err = self.proc.stderr.read().strip() if self.proc.stderr else ""
            why = err or (f"exit {self.proc.returncode}" if said is not None else f"not ready within {READY_WAIT:g} s")
            raise InputError(f"the background load did not start: {why}")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        if self.proc is None or procs.exited(self.proc):
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            if not procs.reap(self.proc, 5):
                os.killpg(self.proc.pid, signal.SIGKILL)
                procs.reap(self.proc)
        except ProcessLookupError:
            procs.reap(self.proc, 5)


def parse_cores(text: str) -> list[int]:
    try:
        cores = [int(c) for c in text.split(",") if c != ""]
    except ValueError:
        raise InputError(f"--noise-cores {text}: use core numbers such as 1 or 0,1") from None
    if not cores or any(c < 0 for c in cores):
        raise InputError(f"--noise-cores {text}: use core numbers such as 1 or 0,1")
    return cores


def noise_overlap(rec: dict[str, Any], cores: list[int]) -> list[str]:
    """Warnings for ranks whose cores the background load also uses: they then share a core
    by time-slicing, which measures the scheduler rather than interference."""
    out = []
    for place in rec.get("placement", []):
        used = {c for t in place.get("threads", []) for c in t.get("affinity", [t.get("cpu")])}
        shared = sorted(used & set(cores))
        if shared:
            out.append(
                f"the background load runs on core {','.join(map(str, shared))}, which rank {place['rank']} uses: "
                "the probe then measures time-slicing, not interference; put the load on a core no rank uses "
                "(--noise-cores, or a layout with fewer ranks than cores)"
            )
    return out


def run(
    console: Console,
    op: str,
    layout: Layout,
    calls: int,
    size: str,
    warmup: int,
    noise: str | None,
    noise_cores: str | None,
    intensity: float,
    results: Path,
    plot_path: Path,
    base: runner.RunSpec,
) -> int:
    if op not in COLLECTIVES:
        raise InputError(f"unknown collective '{op}': use {', '.join(COLLECTIVES)}")
    if calls < 1:
        raise InputError(f"--calls {calls}: must be at least 1")
    if warmup < 0:
        raise InputError(f"--warmup {warmup}: must be at least 0")
    if layout.threads != 1:
        raise InputError(f"layout {layout}: the probe runs one thread per rank; use a layout PxQ")
    parse_bytes(size)
    extra: dict[str, Any] = {}
    cores: list[int] = []
    if noise is not None:
        if noise not in NOISE_MODES:
            raise InputError(f"unknown noise '{noise}': use {', '.join(NOISE_MODES)}")
        if not 0 < intensity <= 1:
            raise InputError(f"--noise-intensity {intensity}: must be within (0, 1] (a duty cycle)")
        cores = parse_cores(noise_cores) if noise_cores else [max(0, base.cores - 1)]
        extra["noise"] = {"mode": noise, "cores": cores, "intensity": intensity}
    spec = runner.RunSpec(
        **{
            **base.__dict__,
            "app": "probe-collective",
            "layout": layout,
            "mode": "flat",
            "results": results,
            "driver_extra": extra,
            "app_args": ["--op", op, "--size", size, "--calls", str(calls), "--warmup", str(warmup)],
        }
    )
    records.check_writable(results)
    if noise is not None:
        console.print(f"background load: {noise} on core(s) {cores} at intensity {intensity}")
        with Noise(noise, cores, intensity, spec.timeout + 60, f"pxq-{os.getpid()}"):
            rec, code = runner.execute_probe(spec, console)
    else:
        rec, code = runner.execute_probe(spec, console)
    if rec is None:
        return code
    for warning in noise_overlap(rec, cores):
        console.print(f"[yellow]warning[/yellow]: {warning}")
    if base.oversubscribe:
        console.print(
            "[yellow]warning[/yellow]: ranks oversubscribe the cores, so call times include waiting for a core"
        )
    console.print(f"record: {results}")
    console.print(f"plot: {collective.plot(rec, plot_path)}")
    return 0


def _add(probes: argparse._SubParsersAction) -> None:
    for op in COLLECTIVES:
        p = probes.add_parser(op, help=f"N back-to-back MPI {op} calls, optionally next to a background load")
        p.add_argument("--layout", default="1x2", help="PxQ: nodes x ranks per node (default 1x2)")
        p.add_argument("--calls", type=int, default=2000, help="timed calls (default 2000)")
        p.add_argument("--size", default="16K", help="message size (default 16K; per peer for alltoall)")
        p.add_argument("--warmup", type=int, default=50, help="untimed calls first (default 50)")
        p.add_argument("--noise", choices=NOISE_MODES, help="a background load while the probe runs")
        p.add_argument("--noise-cores", help="cores the load runs on, e.g. 1 or 0,1 (default the last core)")
        p.add_argument(
            "--noise-intensity",
            type=float,
            default=1.0,
            help="share of each 10 ms period the load works, (0, 1] (default 1)",
        )
        p.add_argument("--plot", type=Path, help="time series and histogram PNG (default next to the results)")
        add_launch_options(p, f"results/probe-{op}.jsonl", None)


def _run(args: argparse.Namespace, console: Console) -> int:
    results = results_path(args.results, f"probe-{args.op}.jsonl")
    return run(
        console,
        args.op,
        parse_layout(args.layout),
        args.calls,
        args.size,
        args.warmup,
        args.noise,
        args.noise_cores,
        args.noise_intensity,
        results,
        figure_path(args.plot, results),
        launch_spec(args),
    )


PLUGIN = plugins.Probe(COLLECTIVES, _add, _run, order=1)
