"""What several commands share: the launch options, the files --trace and --rank-order name, and
the checks of their values."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from pxq.analysis.exports import otf2trace
from pxq.analysis.messages import rankorder
from pxq.core import bounds, records, registry
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.core.paths import binary, build_hint
from pxq.experiments import runner
from pxq.launch import launchers
from pxq.launch.hostfile import hostfile_hosts
from pxq.launch.request import PLACEMENTS
from pxq.machine import envinfo


def add_launch_options(
    p: argparse.ArgumentParser, results: str = "results/<app>.jsonl", classes: str | None = "S"
) -> None:
    """The options every launching command shares. `results`: its default results file, as its
    help says it; `classes`: the default --class it says, None where there are no classes
    (--class is then still taken, and refused by the command with a reason)."""
    p.add_argument(
        "--network",
        metavar="PROFILE",
        help="run on a cluster of this machine brought up for this command alone, its links shaped to PROFILE "
        "(as `pxq cluster up --link`; root only), and taken down after it",
    )
    p.add_argument(
        "--alloc",
        choices=("block", "cyclic"),
        default="block",
        help="rank allocation over nodes: block (0..q-1 on node 0) or cyclic (i on node i mod p)",
    )
    p.add_argument(
        "--placement",
        choices=PLACEMENTS,
        help="cores for the ranks of a node, from hwloc: packed (sharing caches), spread (as far "
        "apart as the node allows) or custom (--cores); default: the launcher's mapping",
    )
    p.add_argument(
        "--cores",
        dest="placement_cores",
        help="with --placement custom: OS cpu numbers, one per worker, rank by rank (node by node for virtual nodes)",
    )
    p.add_argument("--results", type=Path, help=f"results file (default {results})")
    p.add_argument("--oversubscribe", action="store_true", help="allow more workers than cores")
    p.add_argument("--hostfile", help="run on the real nodes of this MPI hostfile")
    p.add_argument(
        "--launcher",
        choices=sorted(launchers.REGISTRY, key=launchers.ORDER.index),
        help="override the launcher choice (default: slurm in an allocation, hostfile with --hostfile, "
        "the cluster of `pxq cluster up` when one is, virtual nodes for p > 1, else local)",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run before it is killed")
    p.add_argument(
        "--class",
        dest="problem_class",
        metavar="CLASS",
        help=argparse.SUPPRESS if classes is None else class_help(classes),
    )


def class_help(default: str) -> str:
    """--class's help from the registry: the NAS proxies and their classes."""
    apps = registry.nas_apps()
    letters = list(dict.fromkeys(c for a in apps for c in registry.classes(a)))
    listed = ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else "".join(letters)
    return f"NAS problem class for {', '.join(apps)}: {listed} (default {default})"


def add_fuse_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fuse",
        choices=("auto", "on", "off"),
        default="auto",
        help="fused sweeps (one pass where the plain code makes several): auto = with the tile",
    )


def app_help() -> str:
    return f"miniapp: {', '.join(registry.apps())}"


def check_app(app: str) -> None:
    if app not in registry.apps():
        raise InputError(f"unknown app '{app}': pxq has {', '.join(registry.apps())}")
    if not binary(app).exists():
        raise InputError(f"{binary(app)} is missing: {build_hint()}")


def check_backends(backends: list[str]) -> None:
    for b in backends:
        if b not in registry.backends():
            raise InputError(f"unknown backend '{b}': use {' or '.join(registry.backends())}")
        if b not in registry.available_backends():  # the backends this build carries
            raise InputError(
                f"backend {b}: this pxq build has no {registry.backend_label(b)}; use --backend "
                "openmp, or rebuild with it (./pxq build builds Kokkos, or -DKokkos_ROOT=...)"
            )


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


check_timeout = bounds.timeout
check_repeat = bounds.repeat


def check_launch(args: argparse.Namespace) -> None:
    """The launch options that name files and programs, checked before anything runs: the
    hostfile read strictly, --launcher hostfile without one refused."""
    hostfile, launcher = getattr(args, "hostfile", None), getattr(args, "launcher", None)
    if launchers.needs_hostfile(launcher) and not hostfile:
        raise InputError(f"--launcher {launcher} runs on the nodes of a hostfile: add --hostfile FILE")
    if hostfile:
        hostfile_hosts(Path(hostfile))


def launch_spec(args: argparse.Namespace, results: Path | None = None) -> runner.RunSpec:
    """The launch options alone (probes and app-less studies set the app and layout per run)."""
    check_launch(args)
    return runner.RunSpec(
        app="probe",
        layout=parse_layout("1x1"),
        alloc=getattr(args, "alloc", "block"),
        results=results or Path("results/probe.jsonl"),
        oversubscribe=args.oversubscribe,
        hostfile=args.hostfile,
        launcher=getattr(args, "launcher", None),
        timeout=check_timeout(args.timeout),
        cores=envinfo.cores(),
        placement=getattr(args, "placement", None),
        placement_cpus=parse_cpus(getattr(args, "placement_cores", None)),
        counters=getattr(args, "counters", None),
    )


def base_spec(args: argparse.Namespace, app_args: list[str], results: Path) -> runner.RunSpec:
    """The run every app command starts from: launch options, class and app arguments."""
    runner.check_app_args(app_args)
    check_timeout(args.timeout)
    check_launch(args)
    return runner.RunSpec(
        app=args.app,
        layout=parse_layout("1x1"),
        alloc=args.alloc,
        app_args=runner.class_args(args.app, args.problem_class) + app_args,
        results=results,
        oversubscribe=args.oversubscribe,
        hostfile=args.hostfile,
        launcher=args.launcher,
        timeout=args.timeout,
        cores=envinfo.cores(),
        placement=args.placement,
        placement_cpus=parse_cpus(args.placement_cores),
        fuse=getattr(args, "fuse", "auto"),
        counters=getattr(args, "counters", None),
        driver_extra={"experiment": args.experiment} if getattr(args, "experiment", None) else {},
    )


def trace_target(path: Path, writes: bool = True) -> Path:
    """--trace's file, refused before any run when it cannot be written (`writes` False: a dry
    run, which only prints the launch and needs no OTF2 writer). Its folder is created."""
    if path == runner.TRACE_AUTO:
        return path
    records.check_plain(path, "--trace")
    if writes and path.suffix == ".otf2" and otf2trace.interpreter() is None:
        raise InputError(f"--trace {path}: {otf2trace.INSTALL_HINT}")
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--trace {path}: cannot create {parent} ({e.strerror}): choose a writable folder") from None
    # An OTF2 archive is a folder, replaced whole by the run: what must be writable is beside it.
    if path.suffix == ".otf2":
        otf2trace.check_replaceable(path)
        records.check_writable(parent / f".{path.name}.probe", "--trace", "json")
    else:
        records.check_writable(path, "--trace", "trace")
    return path


def repeat_trace(path: Path | None, rep: int, repeats: int) -> Path | None:
    """One file per repeat: a named file gets -r0, -r1, ... when the run repeats."""
    if path is None or path == runner.TRACE_AUTO or repeats == 1:
        return path
    name = path.name
    ext = ".trace.json" if name.endswith(".trace.json") else path.suffix
    return path.with_name(f"{name[: len(name) - len(ext)]}-r{rep}{ext}")


def with_rank_order(spec: runner.RunSpec, path: Path) -> runner.RunSpec:
    """The run with the order a file gives, and the prediction its header carries."""
    ranks, prediction = rankorder.read_order(path)
    predicted = None
    if prediction is not None:
        predicted = (prediction.get("channels") or {}).get("suggested")
    return replace(
        spec,
        rank_order=ranks,
        channels={"source": str(path), "model": (prediction or {}).get("model"), "predicted": predicted},
    )
