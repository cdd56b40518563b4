"""Plugins: each command, study and lab declares itself once, as one typed value named PLUGIN in
its own module (pxq.commands.*, pxq.studies.*, pxq.labs.*). They are found here by their package,
so nothing below them imports them by name and a new one is a new module, listed nowhere else.

A plugin module's other names (its options, its run, its figure) are its own; what the rest of
pxq may ask of it is the declaration's fields."""

from __future__ import annotations

import argparse
import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar


@dataclass(frozen=True)
class Command:
    """`pxq NAME ...`: `add` registers its options, `handle(args, app_args, console)` runs it and
    returns the exit code."""

    name: str
    help: str
    order: int  # its place in `pxq --help`
    add: Callable[[argparse.ArgumentParser], None]
    handle: Callable[..., int]
    app_args: bool = False  # it passes the arguments after `--` on to an app
    needs_build: bool = True  # False: it only reads records (./pxq starts it without a build)


@dataclass(frozen=True)
class Study:
    """`pxq study NAME` and one part of `pxq reproduce`: `run(ctx, opts) -> Outcome` measures and
    judges, `plot(record, path)` draws its figure from its study record alone."""

    name: str
    help: str
    doc: str  # the module's docstring: what the paper is
    order: int  # its place in `pxq reproduce`
    section: str  # the part of pxq/data/published.json it cites
    sections: tuple[str, ...]  # the sections whose findings' parts it gives verdicts on
    minutes: float  # a rough quick-mode duration, for the progress bar's first estimate
    apps: bool | str  # True: takes an app argument; "optional": may
    add: Callable[[argparse.ArgumentParser], None]
    defaults: Callable[[bool], dict[str, Any]]
    run: Callable[..., Any]
    plot: Callable[..., Any]


@dataclass(frozen=True)
class Lab:
    """A teaching lab (labs/FOLDER in the checkout): `measure(ctx) -> Outcome` runs the built
    PROGRAM, checks it and grades it (pxq.teaching.harness)."""

    number: int
    folder: str
    title: str
    minutes: int
    program: str  # the executable the lab's CMake builds
    kokkos: bool  # the build needs Kokkos
    measure: Callable[..., Any]
    timeout: float | None = None  # seconds a run may take before it is called a hang (None: the default)
    hang_hint: str = ""  # the likely cause of a hang, named


P = TypeVar("P", Command, Study, Lab)


def _discover(package: str, kind: type[P]) -> tuple[P, ...]:
    pkg = importlib.import_module(package)
    found: list[P] = []
    for info in pkgutil.iter_modules(pkg.__path__):
        plugin = getattr(importlib.import_module(f"{package}.{info.name}"), "PLUGIN", None)
        if not isinstance(plugin, kind):
            raise TypeError(f"{package}.{info.name}: PLUGIN must be a pxq.core.plugins.{kind.__name__}")
        found.append(plugin)
    return tuple(found)


@functools.cache
def commands() -> tuple[Command, ...]:
    return tuple(sorted(_discover("pxq.commands", Command), key=lambda c: c.order))


@functools.cache
def studies() -> tuple[Study, ...]:
    return tuple(sorted(_discover("pxq.studies", Study), key=lambda s: s.order))


@functools.cache
def labs() -> tuple[Lab, ...]:
    return tuple(sorted(_discover("pxq.labs", Lab), key=lambda lab: lab.number))
