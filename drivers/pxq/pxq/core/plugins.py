"""Plugins: each command, study, lab and probe declares itself once, as one typed value named
PLUGIN in its own module (pxq.commands.*, pxq.studies.*, pxq.labs.*, pxq.probes.*). They are
found here by their package, so nothing below them imports them by name and a new one is a new
module, listed nowhere else. (pxq.probes also holds modules that are no probe's command: the
ceilings' measurement, a cluster's links; those declare no PLUGIN.)

A plugin module's other names (its options, its run, its figure) are its own; what the rest of
pxq may ask of it is the declaration's fields."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any


class _Parts:
    """A plugin's parts (facts, hooks, build) read as its own fields: `study.run`, `lab.program`."""

    PARTS: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        for part in type(self).PARTS:
            value = object.__getattribute__(self, part)
            if hasattr(value, name):
                return getattr(value, name)
        raise AttributeError(f"{type(self).__name__} has no field '{name}'")


@dataclass(frozen=True)
class CommandHooks:
    add: Callable[[argparse.ArgumentParser], None]  # registers its options
    handle: Callable[..., int]  # handle(args, app_args, console) runs it: the exit code
    app_args: bool = False  # it passes the arguments after `--` on to an app
    needs_build: bool = True  # False: it only reads records (./pxq starts it without a build)
    # It uses records a user gives it: a value in them that pxq never writes is a refusal naming
    # the files (exit 2), never a traceback (pxq.core.records.consuming).
    reads_records: bool = False
    # Before anything else (a --network cluster included): completes the options from what the
    # command line names (an experiment file); returns the app's arguments.
    prepare: Callable[[argparse.Namespace, list[str]], list[str]] | None = None


@dataclass(frozen=True)
class Command(_Parts):
    """`pxq NAME ...`, named after its module unless it says otherwise."""

    help: str
    order: int  # its place in `pxq --help`
    hooks: CommandHooks
    name: str = ""  # "" when found: its module's name
    example: str = ""  # a command line that shows it in use, printed at the end of its --help
    PARTS = ("hooks",)


@dataclass(frozen=True)
class StudyFacts:
    order: int  # its place in `pxq reproduce`
    section: str  # the part of pxq/data/published.json it cites
    # its quick-mode duration on a 2-core VM (measured 2026-11-28), the weight of its share of the
    # progress bar's estimate (the bar's rate then scales them to this machine)
    minutes: float
    apps: bool | str = False  # True: takes an app argument; "optional": may
    judged: tuple[str, ...] | None = None  # the sections whose findings it judges (None: its own)

    @property
    def sections(self) -> tuple[str, ...]:
        return self.judged if self.judged is not None else (self.section,)


@dataclass(frozen=True)
class StudyHooks:
    add: Callable[[argparse.ArgumentParser], None]  # its own options, all defaulting to None
    defaults: Callable[[bool], dict[str, Any]]  # defaults(quick)
    run: Callable[..., Any]  # run(ctx, opts) -> Outcome: measures and judges
    plot: Callable[..., Any]  # plot(record, path): its figure from its study record alone
    # untestable(opts): why none of its parts can be judged on this machine, known before any run
    # (pxq reproduce says so up front and the study runs nothing); None when they may be
    untestable: Callable[[dict[str, Any]], str | None] | None = None


@dataclass(frozen=True)
class Study(_Parts):
    """`pxq study NAME` (its module's name) and one part of `pxq reproduce`."""

    help: str
    facts: StudyFacts
    hooks: StudyHooks
    name: str = ""  # filled in when found: its module's name
    doc: str = ""  # filled in when found: its module's docstring (what the paper is)
    PARTS = ("facts", "hooks")


@dataclass(frozen=True)
class LabBuild:
    program: str  # the executable the lab's CMake builds
    minutes: int  # how long the lab takes a student
    kokkos: bool = False  # the build needs Kokkos
    timeout: float | None = None  # seconds a run may take before it is called a hang (None: the default)
    hang_hint: str = ""  # the likely cause of a hang, named
    # The program's options that do not change its answer (a tile size: "--tile=", "=" when it
    # takes a value): pxq recomputes a copy's answer once for all of their values.
    answer_ignores: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lab(_Parts):
    """A teaching lab (labs/FOLDER in the checkout): `measure(ctx) -> Outcome` runs the built
    program, checks it and grades it (pxq.teaching.harness)."""

    folder: str  # NN-name: its number first
    title: str
    build: LabBuild
    measure: Callable[..., Any]
    # What the lab asks predicted before its runs (a pxq.teaching.prediction.Plan, graded against
    # pxq advise's model), None for none.
    predict: Any = None

    PARTS = ("build",)

    @property
    def number(self) -> int:
        return int(self.folder[:2])


@dataclass(frozen=True)
class Probe:
    """`pxq probe NAME ...`: the sub-commands one module of pxq.probes offers (several where one
    module measures several alike: the collectives), their options and their run."""

    names: tuple[str, ...]  # the sub-commands, in `pxq probe --help`'s order within the module
    add: Callable[[Any], None]  # add(subparsers): adds a sub-parser per name
    run: Callable[..., int]  # run(args, console): the exit code (args.op names the sub-command)
    order: int  # the module's place in `pxq probe --help`


def _discover(package: str, kind: type, every: bool = True) -> list[tuple[str, ModuleType, Any]]:
    """(module name, module, its PLUGIN) for every module of a plugin package, each checked to
    declare a plugin of `kind` (with EVERY false, a module without PLUGIN is skipped)."""
    found = []
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        module = importlib.import_module(f"{package}.{info.name}")
        plugin = getattr(module, "PLUGIN", None)
        if plugin is None and not every:
            continue
        if not isinstance(plugin, kind):
            raise TypeError(f"{package}.{info.name}: PLUGIN must be a pxq.core.plugins.{kind.__name__}")
        found.append((info.name, module, plugin))
    return found


@functools.cache
def commands() -> tuple[Command, ...]:
    found = [c if c.name else dataclasses.replace(c, name=n) for n, _, c in _discover("pxq.commands", Command)]
    return tuple(sorted(found, key=lambda c: c.order))


@functools.cache
def studies() -> tuple[Study, ...]:
    found = [
        dataclasses.replace(s, name=s.name or n, doc=m.__doc__ or "") for n, m, s in _discover("pxq.studies", Study)
    ]
    return tuple(sorted(found, key=lambda s: s.facts.order))


@functools.cache
def labs() -> tuple[Lab, ...]:
    return tuple(sorted((lab for _, _, lab in _discover("pxq.labs", Lab)), key=lambda lab: lab.number))


@functools.cache
def probes() -> tuple[Probe, ...]:
    found = sorted((p for _, _, p in _discover("pxq.probes", Probe, every=False)), key=lambda p: p.order)
    names = [n for p in found for n in p.names]
    if len(set(names)) != len(names):
        raise TypeError(f"pxq.probes: a probe name is declared twice: {names}")
    return tuple(found)


def probe(name: str) -> Probe:
    """The probe that offers sub-command NAME (argparse has already refused other names)."""
    return next(p for p in probes() if name in p.names)
