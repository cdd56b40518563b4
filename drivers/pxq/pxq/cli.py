"""The `pxq` command line: run, sweep, env, demo, report, tune, probe."""

from __future__ import annotations

import argparse
import math
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from pxq import chanprobe, demo, procs, envinfo, memprobe, msgdist, probe, study, records, report, runner, sweep, tiles
from pxq.launch import PLACEMENTS
from pxq.layout import ALLOCATIONS, BACKENDS, MODES, InputError, parse_layout, parse_layouts, parse_tile
from pxq.paths import binary, results_dir
from pxq.records import RecordError, RecordWriteError


def _add_launch_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alloc", choices=ALLOCATIONS, default="block",
                   help="rank allocation over nodes: block (0..q-1 on node 0) or cyclic (i on node i mod p)")
    p.add_argument("--placement", choices=PLACEMENTS,
                   help="cores for the ranks of a node, from hwloc: packed (sharing caches), spread (as far "
                        "apart as the node allows) or custom (--cores); default: the launcher's mapping")
    p.add_argument("--cores", dest="placement_cores", help="with --placement custom: OS cpu numbers, one per "
                                                           "worker, rank by rank (node by node for virtual nodes)")
    p.add_argument("--results", type=Path, help="results file (default results/<app>.jsonl)")
    p.add_argument("--oversubscribe", action="store_true", help="allow more workers than cores")
    p.add_argument("--hostfile", help="run on the real nodes of this MPI hostfile")
    p.add_argument("--launcher", choices=("local", "virtual", "hostfile", "slurm"),
                   help="override the launcher choice (default: slurm in an allocation, "
                        "hostfile with --hostfile, virtual nodes for p > 1, else local)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run before it is killed")
    p.add_argument("--class", dest="problem_class", metavar="CLASS",
                   help="NAS problem class for cg, mg and ft: S, W, A, B or C (default S)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="pxq", description="pxq: hybrid MPI+OpenMP mini-application kit")
    sub = ap.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run one miniapp on one layout")
    r.add_argument("app", help=f"miniapp: {', '.join(runner.APPS)}")
    r.add_argument("--layout", default="1x1", help="PxQ[xT]: nodes x ranks per node [x threads per rank]")
    r.add_argument("--mode", choices=MODES, help="variant preset")
    r.add_argument("--threads", type=int, help="threads per rank (overrides the layout's T)")
    r.add_argument("--tile", help="tile size: off, auto, or bytes such as 256K")
    r.add_argument("--backend", choices=BACKENDS, default="openmp")
    r.add_argument("--repeat", type=int, default=1, help="runs of the same configuration")
    r.add_argument("--dry-run", action="store_true", help="print the exact launch command only")
    _add_launch_options(r)

    s = sub.add_parser("sweep", help="run the cross product of layouts x modes x tiles x backends")
    s.add_argument("app", help=f"miniapp: {', '.join(runner.APPS)}")
    s.add_argument("--layouts", default="1x2,2x1,1x1x2")
    s.add_argument("--modes", default="flat,hybrid,tiled")
    s.add_argument("--tiles", default="256K", help="tile sizes for the tiled mode, e.g. 64K,256K,1M")
    s.add_argument("--threads", help="threads per rank to sweep (overrides the layouts' T), e.g. 1,2")
    s.add_argument("--backends", default="openmp")
    s.add_argument("--repeat", type=int, default=3, help="interleaved repeats of every configuration")
    s.add_argument("--resume", action="store_true", help="skip runs the results file already holds")
    _add_launch_options(s)

    sub.add_parser("env", help="what pxq sees: cores, caches, MPI, Kokkos, layouts")
    d = sub.add_parser("demo", help="the headline study: ring flat/hybrid/tiled on every layout")
    d.add_argument("--repeat", type=int, default=3)
    rp = sub.add_parser("report", help="table (and chart) of a results file; `report tiles FILE...` for "
                                       "tile benchmark results")
    rp.add_argument("results", type=Path, nargs="+", help="a results file, or: tiles FILE...")
    rp.add_argument("--plot", type=Path, help="write the chart (PNG) here")
    rr = sub.add_parser("repair", help="keep a results file's good records, set damaged lines aside "
                                       "(FILE.damaged)")
    rr.add_argument("file", type=Path, help="a results file (.jsonl)")
    pr = sub.add_parser("probe", help="probes: a collective's variability (allreduce, bcast, alltoall, barrier), "
                                      "the memory hierarchy (stride), bandwidth per active core (bandwidth)")
    probes = pr.add_subparsers(dest="op", required=True, metavar="PROBE")
    for op in probe.COLLECTIVES:
        pc = probes.add_parser(op, help=f"N back-to-back MPI {op} calls, optionally next to a background load")
        pc.add_argument("--layout", default="1x2", help="PxQ: nodes x ranks per node (default 1x2)")
        pc.add_argument("--calls", type=int, default=2000, help="timed calls (default 2000)")
        pc.add_argument("--size", default="16K", help="message size (default 16K; per peer for alltoall)")
        pc.add_argument("--warmup", type=int, default=50, help="untimed calls first (default 50)")
        pc.add_argument("--noise", choices=probe.NOISE_MODES, help="a background load while the probe runs")
        pc.add_argument("--noise-cores", help="cores the load runs on, e.g. 1 or 0,1 (default the last core)")
        pc.add_argument("--noise-intensity", type=float, default=1.0,
                        help="share of each 10 ms period the load works, (0, 1] (default 1)")
        pc.add_argument("--plot", type=Path, help="time series and histogram PNG (default next to the results)")
        _add_launch_options(pc)
    pp = probes.add_parser("pingpong", help="latency and bandwidth of each channel (intra-CMP, inter-CMP, "
                                            "inter-node) the layout offers")
    pp.add_argument("--layout", default="1x2", help="PxQ (default 1x2; 2x1 for two virtual nodes)")
    pp.add_argument("--min", default="0", help="smallest message (default 0)")
    pp.add_argument("--max", default="4M", help="largest message (default 4M)")
    pp.add_argument("--window", type=int, default=64, help="sends in flight per bandwidth window (default 64)")
    pp.add_argument("--scale", type=float, default=1.0, help="iteration counts x this (default 1)")
    pp.add_argument("--validate", action="store_true", help="check every received byte")
    pp.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    _add_launch_options(pp)
    rk = probes.add_parser("rankpairs", help="every ordered rank pair sends one large buffer: a throughput "
                                             "matrix and heatmap")
    rk.add_argument("--layout", default="1x2", help="PxQ (default 1x2)")
    rk.add_argument("--size", default="64M", help="bytes per send (default 64M)")
    rk.add_argument("--repeat", type=int, default=3, help="timed sends per pair, best counts (default 3)")
    rk.add_argument("--validate", action="store_true", help="check every received byte")
    rk.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    _add_launch_options(rk)
    ps = probes.add_parser("stride", help="time per read+write access over array sizes and strides (and blocks), "
                                          "alone or as q copies on placed cores")
    ps.add_argument("--min", default="4K", help="smallest array (default 4K)")
    ps.add_argument("--max", default="auto", help="largest array (default: twice the last-level cache, >= 64M)")
    ps.add_argument("--stride", help="measure this stride only (bytes), e.g. 64")
    ps.add_argument("--accesses", type=int, default=1 << 22, help="accesses per point, at least (default 4194304)")
    ps.add_argument("--repeat", type=int, default=3, help="measurements per point, fastest counts (default 3)")
    ps.add_argument("--copies", type=int, default=1, help="copies run at once on as many cores (default 1)")
    ps.add_argument("--placement", choices=PLACEMENTS, default="packed",
                    help="cores of the copies: packed (sharing caches), spread, or custom (--cores)")
    ps.add_argument("--cores", dest="placement_cores", help="with --placement custom: one cpu per copy, e.g. 0,1")
    ps.add_argument("--points-per-octave", type=int, choices=(1, 2), default=2,
                    help="array sizes per doubling: 1 (powers of two) or 2 (also 1.5x; default)")
    ps.add_argument("--no-blocks", action="store_true", help="skip the block-size variant")
    ps.add_argument("--results", type=Path, help="results file (default results/probe-stride.jsonl)")
    ps.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    pb = probes.add_parser("bandwidth", help="STREAM copy/scale/add/triad on 1..N active cores, as ranks and as "
                                             "threads, with the saturation point")
    pb.add_argument("--max-cores", type=int, help="N: measure 1..N active cores (default: every core)")
    pb.add_argument("--array", default="auto", help="bytes per array per core (default: 4 x the last-level cache)")
    pb.add_argument("--kernels", default="copy,scale,add,triad", help="comma-separated STREAM kernels")
    pb.add_argument("--repeat", type=int, default=5, help="timed passes, fastest counts (default 5)")
    pb.add_argument("--as", dest="workers_as", choices=("both", "ranks", "threads"), default="both",
                    help="cores as ranks (flat), threads (hybrid) or both (default)")
    pb.add_argument("--plot", type=Path, help="PNG (default next to the results)")
    _add_launch_options(pb)
    sd = sub.add_parser("study", help="studies that run an app over several layouts and placements")
    studies = sd.add_subparsers(dest="study", required=True, metavar="STUDY")
    sc = studies.add_parser("contention", help="an app on 1xq, (q/2)x2 and qx1, packed and spread, "
                                               "normalised to qx1")
    sc.add_argument("app", help=f"miniapp: {', '.join(runner.APPS)}")
    sc.add_argument("--ranks", type=int, help="q: ranks in all (default: every core)")
    sc.add_argument("--placements", default="packed,spread", help="packed, spread or both (default both)")
    sc.add_argument("--repeat", type=int, default=3, help="interleaved repeats (default 3)")
    sc.add_argument("--plot", type=Path, help="bar chart PNG (default next to the results)")
    _add_launch_options(sc)
    sa = studies.add_parser("allocation", help="profile an app once, compare block and cyclic allocation on a "
                                               "machine model")
    sa.add_argument("app", help=f"miniapp: {', '.join(runner.APPS)}")
    sa.add_argument("--ranks", type=int, required=True, help="ranks to profile (oversubscribed if above the cores)")
    sa.add_argument("--model", required=True, help="machine model NODESxSOCKETSxCORES, e.g. 4x2x2")
    _add_launch_options(sa)
    md = sub.add_parser("msgdist", help="messages by channel and size range from a message profile")
    md.add_argument("record", type=Path, help="a profile written by pxq profile (the last one in the file)")
    md.add_argument("--model", help="classify on a what-if machine NODESxSOCKETSxCORES (default: as observed)")
    md.add_argument("--alloc", default="block", help="with --model: block or cyclic (default block)")
    md.add_argument("--plot", type=Path, help="stacked bars per size range (default next to the record)")
    pf = sub.add_parser("profile", help="run any MPI program with the message profiler: pxq profile -- mpirun "
                                        "-np 4 ./app")
    pf.add_argument("--results", type=Path, help="profile file (default results/msgprof.jsonl)")
    pf.add_argument("--plot", type=Path, help="stacked bars per size range (default next to the results)")
    t = sub.add_parser("tune", help="benchmark the tiled kernels over tile sizes, write the machine tile profile")
    t.add_argument("target", nargs="?", help=f"an app ({', '.join(tiles.APP_KERNELS)}), a kernel "
                                             f"({', '.join(tiles.KERNELS)}) or all (default)")
    t.add_argument("--tiles", help="tile sizes, e.g. 64K,256K,1M (default 4K .. 64M in powers of two)")
    t.add_argument("--threads", help="thread counts, e.g. 1,2 (default 1 .. the cores)")
    t.add_argument("--repeat", type=int, default=3, help="repetitions of every benchmark, interleaved at random")
    t.add_argument("--min-time", type=float, default=0.2, help="seconds each repetition runs at least")
    t.add_argument("--out", type=Path, help="Google Benchmark JSON (default results/tiles.json)")
    t.add_argument("--profile", type=Path, help="the profile to write (default: $PXQ_TILE_PROFILE, "
                                                "$XDG_CONFIG_HOME/pxq/tiles.json or ~/.config/pxq/tiles.json)")
    t.add_argument("--replace-profile", action="store_true",
                   help="start the profile afresh (a corrupt one, or one from another machine)")
    return ap


def _split_app_args(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _check_app(app: str) -> None:
    if app not in runner.APPS:
        raise InputError(f"unknown app '{app}': pxq has {', '.join(runner.APPS)}")
    if not binary(app).exists():
        raise InputError(f"{binary(app)} is missing: run ./pxq build (or ./pxq with any command)")


def _check_backends(backends: list[str]) -> None:
    for b in backends:
        if b not in BACKENDS:
            raise InputError(f"unknown backend '{b}': use {' or '.join(BACKENDS)}")
    if "kokkos" in backends and "kokkos" not in envinfo.machine()["backends"]:
        raise InputError("backend kokkos: this pxq build has no Kokkos; use --backend openmp, or "
                         "rebuild with Kokkos (./pxq build, or -DKokkos_ROOT=...)")


def _results_path(args: argparse.Namespace) -> Path:
    return results_path(args.results, f"{args.app}.jsonl")


def parse_cpus(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        cpus = [int(c) for c in text.split(",") if c.strip() != ""]
    except ValueError:
        raise InputError(f"--cores {text}: use cpu numbers such as 0,2") from None
    if not cpus or any(c < 0 for c in cpus):
        raise InputError(f"--cores {text}: use cpu numbers such as 0,2")
    return cpus


def check_timeout(seconds: float) -> float:
    if not math.isfinite(seconds) or seconds <= 0:
        raise InputError(f"--timeout {seconds}: give the seconds a run may take, a number above 0 (default 600)")
    return seconds


def _base_spec(args: argparse.Namespace, app_args: list[str], results: Path) -> runner.RunSpec:
    runner.check_app_args(app_args)
    check_timeout(args.timeout)
    return runner.RunSpec(app=args.app, layout=parse_layout("1x1"), alloc=args.alloc,
                          app_args=runner.class_args(args.app, args.problem_class) + app_args, results=results, oversubscribe=args.oversubscribe,
                          hostfile=args.hostfile, launcher=args.launcher, timeout=args.timeout,
                          cores=envinfo.cores(), placement=args.placement,
                          placement_cpus=parse_cpus(args.placement_cores))


def cmd_run(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_app(args.app)
    layout = parse_layout(args.layout)
    if args.threads is not None:
        if args.threads < 1:
            raise InputError(f"--threads {args.threads}: must be at least 1")
        layout = layout.with_threads(args.threads)
    if args.repeat < 1:
        raise InputError("--repeat must be at least 1")
    _check_backends([args.backend])
    if "--help" in app_args or "-h" in app_args:
        return subprocess.run([str(binary(args.app)), "--help"]).returncode
    results = _results_path(args)
    spec = replace(_base_spec(args, app_args, results), layout=layout, mode=args.mode,
                   tile=args.tile, backend=args.backend)
    spec.resolved()  # validates mode/threads/tile before anything runs
    if args.dry_run:
        with tempfile.TemporaryDirectory(prefix="pxq-dry-") as tmp:
            plan, argv = runner.build(spec, Path(tmp), "dry-run")
            for path, content in plan.files.items():
                console.print(f"# {path}:\n{content}", markup=False)
            env = " ".join(f"{k}={v}" for k, v in plan.env.items())
            print(f"{env} {shlex.join(argv)}")
        return 0
    recs = []
    for rep in range(args.repeat):
        result = runner.execute(replace(spec, repeat=rep), echo=True)
        if result.status == "bad-input":
            console.print("[red]the app refused the run as bad input[/red] (exit code 2; no record written)")
            return records.EXIT_BAD_INPUT
        if result.status != "ok":
            runner.say_failure(console, "run", result, results)
        recs.append(result.record)
    rows = report.summarize(recs)
    if rows:
        report.print_table(rows, f"pxq run {args.app} -> {results}", console)
    report.print_failures(recs, console)
    return records.exit_code(recs)


def cmd_sweep(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_app(args.app)
    layouts = parse_layouts(args.layouts)
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            raise InputError(f"unknown mode '{m}': use {', '.join(MODES)}")
    tiles = [parse_tile(t) for t in args.tiles.split(",") if t]
    backends = [b for b in args.backends.split(",") if b]
    _check_backends(backends)
    threads = None
    if args.threads:
        try:
            threads = [int(t) for t in args.threads.split(",")]
        except ValueError:
            raise InputError(f"--threads {args.threads}: use integers such as 1,2") from None
        if any(t < 1 for t in threads):
            raise InputError(f"--threads {args.threads}: every value must be at least 1")
    if args.repeat < 1:
        raise InputError("--repeat must be at least 1")
    results = _results_path(args)
    base = _base_spec(args, app_args, results)
    configs, notes = sweep.plan(base, layouts, modes, tiles, backends, threads)
    for note in notes:
        console.print(f"[dim]{note}[/dim]")
    if not configs:
        raise InputError("nothing to run: every layout/mode combination was skipped")
    for spec in configs:  # layouts that cannot run here fail now, not mid-sweep
        runner.build(spec, Path("/nonexistent"), "check")
    runs = sweep.interleave(configs, args.repeat)
    console.print(f"{len(configs)} configurations x {args.repeat} repeats = {len(runs)} runs -> {results}")
    recs = sweep.run(runs, results, args.resume, console)
    sweep.summarize_and_print(recs, console, f"pxq sweep {args.app} ({results})")
    if len(recs) != len(runs):
        console.print(f"[red]{len(runs) - len(recs)} run(s) have no record in {results}[/red]")
        return records.EXIT_RUN_FAILED
    return records.exit_code(recs)


def results_path(given: Path | None, default_name: str) -> Path:
    """A user's --results as given (its folder must exist), else results/<default_name> (the
    folder made); checked writable before anything runs."""
    if given is None:
        given = results_dir() / default_name
        try:
            given.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the results folder {given.parent} ({e.strerror}): set "
                             "PXQ_RESULTS_DIR or use --results") from None
    records.check_writable(given)
    return given


def _probe_results(args: argparse.Namespace, name: str) -> Path:
    return results_path(args.results, f"probe-{name}.jsonl")


def cmd_probe(args: argparse.Namespace, console: Console) -> int:
    if args.op == "stride":
        results = _probe_results(args, "stride")
        argv = memprobe.stride_argv(args.min, args.max, args.stride, args.accesses, args.repeat, args.copies,
                                    args.placement, parse_cpus(args.placement_cores), args.points_per_octave,
                                    args.no_blocks, results, {"command": "pxq probe stride"})
        return memprobe.run_stride(console, argv, results, args.plot or results.with_suffix(".png"))
    if args.problem_class:
        raise InputError("--class: the probes have no problem classes")
    base = runner.RunSpec(app="probe", layout=parse_layout("1x1"), alloc=args.alloc,
                          oversubscribe=args.oversubscribe, hostfile=args.hostfile,
                          launcher=args.launcher, timeout=check_timeout(args.timeout), cores=envinfo.cores(),
                          placement=args.placement, placement_cpus=parse_cpus(args.placement_cores))
    if args.op in ("pingpong", "rankpairs"):
        results = _probe_results(args, args.op)
        plot = args.plot or results.with_suffix(".png")
        if args.op == "pingpong":
            return chanprobe.run_pingpong(console, parse_layout(args.layout), args.min, args.max, args.window,
                                          args.scale, args.validate, results, plot, base)
        return chanprobe.run_rankpairs(console, parse_layout(args.layout), args.size, args.repeat, args.validate,
                                       results, plot, base)
    if args.op == "bandwidth":
        if args.max_cores is not None and args.max_cores < 1:
            raise InputError(f"--max-cores {args.max_cores}: measure at least 1 core (default: every core)")
        results = _probe_results(args, "bandwidth")
        return memprobe.run_bandwidth(console, args.max_cores or envinfo.cores(), args.array, args.kernels,
                                      args.repeat, args.workers_as, results,
                                      args.plot or results.with_suffix(".png"), base)
    results = _probe_results(args, args.op)
    return probe.run(console, args.op, parse_layout(args.layout), args.calls, args.size, args.warmup,
                     args.noise, args.noise_cores, args.noise_intensity, results,
                     args.plot or results.with_suffix(".png"), base)


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    if str(args.results[0]) == "tiles":
        if len(args.results) < 2:
            raise InputError("pxq report tiles needs a tile benchmark JSON file (pxq tune writes "
                             "results/tiles.json)")
        return tiles.report(console, args.results[1:], args.plot)
    if len(args.results) != 1:
        raise InputError("pxq report takes one results file (or: pxq report tiles FILE...)")
    path = args.results[0]
    recs = records.final(records.read(path, must_exist=True))
    rows = report.summarize(recs)
    if not rows and not report.failed_runs(recs):
        raise InputError(f"{path}: no run records to report (probe records are reported by their probe)")
    if rows:
        report.print_table(rows, str(path), console)
    report.print_failures(recs, console)
    if args.plot and rows:
        console.print(f"chart: {report.bar_chart(rows, args.plot, str(path))}")
    return records.exit_code(r for r in recs if r.get("app") in runner.APPS)


def cmd_repair(args: argparse.Namespace, console: Console) -> int:
    kept, removed = records.repair(args.file)
    if not removed:
        console.print(f"{args.file}: {kept} records, nothing damaged")
    else:
        console.print(f"{args.file}: kept {kept} records; set aside {len(removed)} damaged line(s) "
                      f"({', '.join(map(str, removed[:10]))}{' ...' if len(removed) > 10 else ''}) "
                      f"in {args.file.name}.damaged")
    return 0


def cmd_study(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    _check_app(args.app)
    if args.study == "allocation":
        model = msgdist.parse_model(args.model)
        if args.ranks < 2:
            raise InputError(f"--ranks {args.ranks}: use at least 2")
        if args.ranks > model.slots:
            raise InputError(f"model {model} has {model.slots} cores for {args.ranks} ranks: use a model with "
                             f"at least {args.ranks} cores")
        results = results_path(args.results, f"study-allocation-{args.app}.jsonl")
        profile_path = results.with_name(results.stem + "-msgprof.jsonl")
        records.check_writable(profile_path)
        over = args.ranks > envinfo.cores()
        spec = replace(_base_spec(args, app_args, results), layout=parse_layout(f"1x{args.ranks}"), mode="flat",
                       oversubscribe=over or args.oversubscribe, profile=profile_path)
        console.print(f"profiling {args.app} on {args.ranks} ranks" +
                      (f" (oversubscribing {envinfo.cores()} cores)" if over else ""))
        result = runner.execute(spec)
        if result.status != "ok":
            console.print(result.output[-2000:], markup=False)
            runner.say_failure(console, "run", result, results)
            return runner.STATUS_EXIT[result.status]
        msgdist.allocation_study(console, msgdist.load(profile_path), model, spec.oversubscribe)
        console.print(f"profile: {profile_path}")
        return 0
    if args.placement or args.placement_cores:
        raise InputError("the contention study sets placements itself: use --placements packed,spread")
    if args.ranks is not None and args.ranks < 1:
        raise InputError(f"--ranks {args.ranks}: use at least 1 (default: every core)")
    results = results_path(args.results, f"study-contention-{args.app}.jsonl")
    base = _base_spec(args, app_args, results)
    return study.contention(console, base, args.ranks or envinfo.cores(),
                            [p for p in args.placements.split(",") if p], args.repeat, results,
                            args.plot or results.with_suffix(".png"))


def check_plot_path(path: Path | None) -> None:
    """A figure path must be writable before anything runs."""
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"--plot {path} is a directory: give a file such as {path}/figure.png")
    if path.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InputError(f"--plot {path}: give a .png, .pdf or .svg file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(f"--plot {path}: folder '{parent}' does not exist or is not writable: pick another path")


def dispatch(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if app_args and args.command not in ("run", "sweep", "profile", "study"):
        raise InputError(f"pxq {args.command} takes no arguments after --: {' '.join(app_args)}")
    check_plot_path(getattr(args, "plot", None))
    if args.command == "run":
        return cmd_run(args, app_args, console)
    if args.command == "sweep":
        return cmd_sweep(args, app_args, console)
    if args.command == "env":
        return envinfo.show(console)
    if args.command == "demo":
        if args.repeat < 1:
            raise InputError(f"--repeat {args.repeat}: use at least 1")
        return demo.run(console, repeat=args.repeat)
    if args.command == "report":
        return cmd_report(args, console)
    if args.command == "repair":
        return cmd_repair(args, console)
    if args.command == "probe":
        return cmd_probe(args, console)
    if args.command == "msgdist":
        if args.model is None and args.alloc != "block":
            raise InputError(f"--alloc {args.alloc} places ranks on a model machine: give --model "
                             "NODESxSOCKETSxCORES too (without it the observed placement is used)")
        if args.alloc not in ALLOCATIONS:
            raise InputError(f"unknown allocation '{args.alloc}': use --alloc block or cyclic")
        return msgdist.report(console, args.record, args.model, args.alloc,
                              args.plot or args.record.with_suffix(".png"))
    if args.command == "profile":
        results = results_path(args.results, "msgprof.jsonl")
        return msgdist.profile(console, app_args, results, args.plot or results.with_suffix(".png"))
    if args.command == "study":
        return cmd_study(args, app_args, console)
    if args.command == "tune":
        return tiles.tune(console, args.target, args.tiles, args.threads, args.repeat, args.min_time,
                          args.out or results_dir() / "tiles.json", args.profile or tiles.profile_path(),
                          args.replace_profile)
    raise InputError(f"unknown command {args.command}")


def main(argv: list[str] | None = None) -> int:
    """Exit codes: 0 all verified, 1 a verification failed, 2 bad input (nothing ran, no record),
    3 a run failed (crash, killed, timeout, a record that could not be written), 128 + N when
    signal N (INT, TERM, HUP) stopped the driver."""
    argv = list(sys.argv[1:] if argv is None else argv)
    own, app_args = _split_app_args(argv)
    args = parser().parse_args(own)
    # Piped output (logs, CI) gets a wide table instead of an 80-column one.
    console = Console() if sys.stdout.isatty() else Console(width=160)
    try:
        return dispatch(args, app_args, console)
    except (InputError, RecordError) as e:
        print(f"pxq: error: {e}", file=sys.stderr)
        return records.EXIT_RUN_FAILED if isinstance(e, RecordWriteError) else records.EXIT_BAD_INPUT
    except procs.Interrupted as e:
        print(f"pxq: interrupted by {signal.Signals(e.signum).name} (runs and background loads stopped)", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print("pxq: interrupted (runs and background loads stopped)", file=sys.stderr)
        return 130
    except OSError as e:
        where = f": {e.filename}" if e.filename else ""
        print(f"pxq: error: {e.strerror or e}{where}", file=sys.stderr)
        return records.EXIT_RUN_FAILED


def entry() -> int:
    """`python -m pxq`: SIGTERM and SIGHUP unwind like Ctrl-C."""
    procs.install_signal_handlers()
    return main()
