"""The `pxq` command line: the parser built from the command plugins (pxq.commands), the
dispatch to their handlers, and the one mapping of errors to exit codes."""

from __future__ import annotations

import argparse
import signal
import sys

from rich.console import Console

from pxq.core import plugins, procs, records
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.core.paths import check_plot_path
from pxq.core.records import RecordError, RecordWriteError
from pxq.launch import netns
from pxq.machine import envinfo


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="pxq", description="pxq: hybrid MPI+OpenMP mini-application kit")
    sub = ap.add_subparsers(dest="command", required=True)
    for command in plugins.commands():
        command.add(sub.add_parser(command.name, help=command.help))
    return ap


def _split_app_args(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def dispatch(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    command = next(c for c in plugins.commands() if c.name == args.command)
    if app_args and not command.app_args:
        raise InputError(f"pxq {args.command} takes no arguments after --: {' '.join(app_args)}")
    check_plot_path(getattr(args, "plot", None))
    if command.hooks.prepare is not None:
        app_args = command.hooks.prepare(args, app_args)
    if getattr(args, "network", None):
        if getattr(args, "hostfile", None) or getattr(args, "launcher", None) not in (None, "cluster"):
            raise InputError("--network runs on a cluster of this machine: drop --hostfile and --launcher")
        cores = envinfo.cores()
        with netns.around(args.network, _nodes_asked(args), cores, _cores_asked(args, cores), console.print):
            return int(command.handle(args, app_args, console))
    return int(command.handle(args, app_args, console))


def _nodes_asked(args: argparse.Namespace) -> int:
    """The most nodes the command's layouts name (--layout, --layouts, --ranks), else one per core
    (studies choose their layouts from the cores), at least 2."""
    texts = [t for t in (getattr(args, "layout", None), getattr(args, "layouts", None)) if isinstance(t, str)]
    nodes = [parse_layout(t).nodes for text in texts for t in text.split(",") if t.strip()]
    ranks = getattr(args, "ranks", None)
    if isinstance(ranks, int) and ranks > 0:
        nodes.append(ranks)  # study sharing and contention: up to one rank per node
    return max([2, *nodes]) if nodes else max(2, envinfo.cores())


def _cores_asked(args: argparse.Namespace, cores: int) -> int:
    """The most workers one node of the command's layouts holds (--layout, --layouts, a machine
    --model's sockets x cores, and 1xR for --ranks R: study sharing and contention put every rank
    on one node), else every core: the cores each node of a cluster for the command gets."""
    texts = [t for t in (getattr(args, n, None) for n in ("layout", "layouts", "model")) if isinstance(t, str)]
    need = [(lay.ranks_per_node * lay.threads) for text in texts for t in text.split(",") if t.strip()
            for lay in [parse_layout(t)]]  # fmt: skip
    ranks = getattr(args, "ranks", None)
    if isinstance(ranks, int) and ranks > 0:
        need.append(ranks)
    return min(max(need), cores) if need else cores


def main(argv: list[str] | None = None) -> int:
    """Exit codes: 0 all verified, 1 a verification failed, 2 bad input (nothing ran, no record),
    3 a run failed (crash, killed, timeout, a record that could not be written), 128 + N when
    signal N (INT, TERM, HUP) stopped the driver."""
    argv = list(sys.argv[1:] if argv is None else argv)
    own, app_args = _split_app_args(argv)
    # Piped output (logs, CI) gets a wide table instead of an 80-column one.
    console = Console() if sys.stdout.isatty() else Console(width=160)
    try:
        args = parser().parse_args(own)
        return dispatch(args, app_args, console)
    except (InputError, RecordError) as e:
        print(f"pxq: error: {e}", file=sys.stderr)
        return records.EXIT_RUN_FAILED if isinstance(e, RecordWriteError) else records.EXIT_BAD_INPUT
    except procs.Interrupted as e:
        print(
            f"pxq: interrupted by {signal.Signals(e.signum).name} (runs and background loads stopped)", file=sys.stderr
        )
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
