"""The `pxq` command line: the parser built from the command plugins (pxq.commands), the
dispatch to their handlers, and the one mapping of errors to exit codes."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from pxq.core import bounds, escape, leftovers, outputs, plugins, procs, records
from pxq.core.errors import InputError
from pxq.core.escape import Console
from pxq.core.layout import parse_layout
from pxq.core.paths import check_plot_path
from pxq.core.records import RecordError, RecordWriteError
from pxq.launch import launchers, netns
from pxq.machine import envinfo


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="pxq", description="pxq: hybrid MPI+OpenMP mini-application kit")
    sub = ap.add_subparsers(dest="command", required=True)
    for command in plugins.commands():
        epilog = f"example:\n  {command.example}" if command.example else None
        command.add(sub.add_parser(command.name, help=command.help, epilog=epilog))
    bounds.install(ap)
    _state_defaults(ap)
    return ap


def _state_defaults(ap: argparse.ArgumentParser) -> None:
    """Every option's help states its default where one applies and the help does not already
    say it (a count, a time, a choice), on every command and subcommand."""
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _state_defaults(sub)
            continue
        default = action.default
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        unset = default is None or isinstance(default, bool) or default in ("", [], argparse.SUPPRESS)
        if unset or isinstance(action, argparse._HelpAction):
            continue
        text = action.help or ""
        if "default" in text:
            continue
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        action.help = f"{text} (default {shown})".lstrip() if text else f"default {shown}"


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
    check_distinct(args)
    if getattr(args, "network", None):
        asked = getattr(args, "launcher", None)
        if getattr(args, "hostfile", None) or (asked is not None and not launchers.emulated(asked)):
            raise InputError("--network runs on a cluster of this machine: drop --hostfile and --launcher")
        cores = envinfo.cores()
        with netns.around(args.network, _nodes_asked(args), cores, _cores_asked(args, cores), console.print):
            return int(command.handle(args, app_args, console))
    if command.hooks.reads_records:
        with records.consuming(_inputs(args)):
            return int(command.handle(args, app_args, console))
    return int(command.handle(args, app_args, console))


def _inputs(args: argparse.Namespace) -> str:
    """The files a command reads, as its refusals name them."""
    named = [v for k in ("results", "paths", "record", "profile", "file") for v in _listed(getattr(args, k, None))]
    return ", ".join(escape.plain(v) for v in named[:4]) + (" ..." if len(named) > 4 else "") or "the records"


def _listed(value: object) -> list[str]:
    return [str(v) for v in (value if isinstance(value, list) else [value]) if isinstance(v, (str, Path))]


# The options that name a file pxq writes; every other path a command is given is read.
OUTPUTS = {"results": "--results", "trace": "--trace", "plot": "--plot", "out": "--out", "json": "--json"}


def _identity(path: Path) -> tuple:
    """What makes two paths one file: the same device and inode when it exists, else the same
    absolute path."""
    try:
        st = os.stat(path)
        return ("inode", st.st_dev, st.st_ino)
    except OSError:
        return ("path", os.path.abspath(path))


def check_distinct(args: argparse.Namespace) -> None:
    """Refuses (exit 2) a command line whose output names the same file as another output or as
    a file it reads (`--results r.jsonl --trace r.jsonl`, `report r.jsonl --out r.jsonl`):
    writing one would destroy the other."""
    named: list[tuple[str, tuple, bool]] = []  # (option, identity, written)
    for attr, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if not isinstance(v, (str, Path)) or not str(v) or attr in ("command", "app", "layout", "lab"):
                continue
            written = attr in OUTPUTS and not isinstance(value, list)
            path = Path(v)
            if not written and not path.is_file():
                continue  # a name, a number or a glob: not a file read
            option = OUTPUTS.get(attr, attr.replace("_", "-"))
            named.append((option if written else f"the input {v}", _identity(path), written))
    for i, (a, ida, wa) in enumerate(named):
        for b, idb, wb in named[i + 1 :]:
            if ida == idb and (wa or wb):
                first, second = (a, b) if wa else (b, a)
                raise InputError(
                    f"{first} and {second} name the same file: writing one would destroy the other; give "
                    f"{first} a path of its own"
                )


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
        try:
            args, unknown = parser().parse_known_args(own)
        except SystemExit as e:  # argparse's refusal (its message printed): bad input, exit 2
            return e.code if isinstance(e.code, int) else records.EXIT_BAD_INPUT
        if unknown:
            print(f"pxq: error: {unknown_text(args, own, unknown)}", file=sys.stderr)
            return records.EXIT_BAD_INPUT
        leftovers.tidy(escape.warn)
        return dispatch(args, app_args, console)
    except (InputError, RecordError) as e:
        print(f"pxq: error: {escape.plain(e)}", file=sys.stderr)
        return records.EXIT_RUN_FAILED if isinstance(e, RecordWriteError) else records.EXIT_BAD_INPUT
    except procs.Interrupted as e:
        print(
            f"pxq: interrupted by {signal.Signals(e.signum).name} (runs and background loads stopped)", file=sys.stderr
        )
        return 128 + e.signum
    except KeyboardInterrupt:
        print("pxq: interrupted (runs and background loads stopped)", file=sys.stderr)
        return 130
    except outputs.NotJSON as e:
        print(f"pxq: error: cannot write what was computed: {escape.plain(e)}", file=sys.stderr)
        return records.EXIT_RUN_FAILED
    except OSError as e:
        where = f": {escape.plain(e.filename)}" if e.filename else ""
        print(f"pxq: error: {escape.plain(e.strerror or e)}{where}", file=sys.stderr)
        return records.EXIT_RUN_FAILED


def unknown_text(args: argparse.Namespace, own: list[str], unknown: list[str]) -> str:
    """argparse's "unrecognized arguments", with the fix where the command runs an app: the app's
    own options go after `--`."""
    said = escape.plain(" ".join(unknown))
    command = next((c for c in plugins.commands() if c.name == args.command), None)
    if command is None or not command.app_args or not any(u.startswith("-") for u in unknown):
        return f"unrecognized arguments: {said}"
    ours = list(own)
    for u in reversed(unknown):  # each unknown word once, from the right (where argparse left it)
        del ours[len(ours) - 1 - ours[::-1].index(u)]
    fixed = escape.plain(" ".join(["pxq", *ours, "--", *unknown]))
    return f"unrecognized arguments: {said}; if they are the app's options, they go after `--`: {fixed}"


def entry() -> int:
    """`python -m pxq`: SIGTERM and SIGHUP unwind like Ctrl-C."""
    procs.install_signal_handlers()
    return main()
