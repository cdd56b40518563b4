"""The driver's commands, one module each. A module has NAME, HELP, `add(parser)` that
registers its options, `handle(args, app_args, console)` that runs it and returns the exit
code, and APP_ARGS (True when it passes arguments after `--` on); NEEDS_BUILD = False marks
a command that only reads records (./pxq lists the same ones in RECORD_COMMANDS and starts
them at once, without installing or building anything). A new command is a new module listed
in COMMANDS."""

from __future__ import annotations

from types import ModuleType

from pxq.commands import (
    compare,
    demo,
    env,
    lab,
    msgdist,
    peer_import,
    placement,
    probe,
    profile,
    repair,
    report,
    reproduce,
    run,
    study,
    sweep,
    tune,
    validate,
)

COMMANDS: tuple[ModuleType, ...] = (
    run,
    sweep,
    report,
    compare,
    peer_import,
    repair,
    probe,
    study,
    reproduce,
    lab,
    tune,
    profile,
    msgdist,
    placement,
    validate,
    env,
    demo,
)
