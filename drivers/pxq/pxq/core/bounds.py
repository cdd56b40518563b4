"""The bounds of every number pxq takes from a user, a file or the environment: a value
outside them is refused with exit 2 and the range, before anything is planned or run (a
repeat count of 10^11 would build its run list until memory ran out; a timeout of 1e300
overflows the clock)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any

from pxq.core.errors import InputError

MAX_REPEAT = 10_000  # repeats of one configuration
MAX_TIMEOUT = 7 * 24 * 3600.0  # seconds a run may take: a week
MAX_NODES = 100_000
MAX_RANKS_PER_NODE = 4096
MAX_THREADS = 4096  # threads per rank
MAX_RANKS = 1 << 20  # ranks in one run (rank-order files, ranges)
MAX_PAIRS = 1 << 24  # ordered rank pairs the rank-pair probe times (its C++ side refuses more)


def repeat(value: int, option: str = "--repeat") -> int:
    if not 1 <= value <= MAX_REPEAT:
        raise InputError(f"{option} {value}: use 1 to {MAX_REPEAT} repeats")
    return value


def timeout(seconds: float) -> float:
    if not math.isfinite(seconds) or not MIN_TIMEOUT <= seconds <= MAX_TIMEOUT:
        raise InputError(
            f"--timeout {seconds}: give the seconds a run may take, at least {MIN_TIMEOUT} and at most "
            f"{MAX_TIMEOUT:.0f} (a week; default 600)"
        )
    return seconds


def duration(text: str, option: str = "--budget", low: float = 10.0) -> float:
    """'300', '300s', '5m', '1h' -> seconds, from LOW to a week (InputError otherwise)."""
    units = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
    t = text.strip().lower()
    unit = t[-1:] if t[-1:] in ("s", "m", "h") else ""
    try:
        value = float(t[: len(t) - len(unit)]) * units[unit]
    except ValueError:
        raise InputError(f"{option} {text}: give seconds or a time such as 300, 90s, 5m or 1h") from None
    if not (math.isfinite(value) and low <= value <= MAX_TIMEOUT):
        raise InputError(f"{option} {text}: give {_plain(low)} s to a week")
    return value


def threads(value: int, option: str = "--threads") -> int:
    if not 1 <= value <= MAX_THREADS:
        raise InputError(f"{option} {value}: use 1 to {MAX_THREADS} threads per rank")
    return value


def count(value: int, option: str, low: int, high: int, what: str) -> int:
    """Any other count: OPTION VALUE refused unless LOW <= VALUE <= HIGH (WHAT names the unit)."""
    if not low <= value <= high:
        raise InputError(f"{option} {value}: use {low} to {high} {what}")
    return value


MIN_TIMEOUT = 0.1  # seconds: no run starts faster than this


@dataclass(frozen=True)
class Range:
    """What a numeric option accepts: LOW to HIGH (LOW excluded when OPEN), in WHAT."""

    low: float
    high: float
    what: str
    open_low: bool = False

    def holds(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        return (value > self.low if self.open_low else value >= self.low) and value <= self.high

    def text(self) -> str:
        low = f"above {_plain(self.low)}" if self.open_low else f"{_plain(self.low)}"
        return f"use {low} to {_plain(self.high)} {self.what}"


def _plain(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# Every integer and real option of every command, by its flag: what it accepts. An option named
# here by "COMMAND FLAG" has its own range there. A new numeric option without an entry is a
# programming error (tests/python/test_cli.py checks every command's parser).
OPTIONS: dict[str, Range] = {
    "--repeat": Range(1, MAX_REPEAT, "repeats"),
    "--timeout": Range(MIN_TIMEOUT, MAX_TIMEOUT, "seconds a run may take (a week at most; default 600)"),
    "--threads": Range(1, MAX_THREADS, "threads per rank"),
    "--confidence": Range(0.5, 0.9999, "(a confidence level, such as 0.95)"),
    "--threshold": Range(0, 0.99, "(a relative change, such as 0.05)"),
    "--calls": Range(1, 100_000_000, "calls (each call's time is kept: 800 MB a rank at most)"),
    "--warmup": Range(0, 1_000_000, "untimed calls"),
    "--noise-intensity": Range(0, 1, "(the share of the core the load takes)", open_low=True),
    "--window": Range(1, 10_000, "messages in flight"),
    "--scale": Range(0.001, 100, "(a factor on the iterations)"),
    "-i": Range(1, 10_000_000, "iterations"),
    "-x": Range(0, 1_000_000, "warm-up iterations"),
    "-W": Range(1, 10_000, "messages in flight"),
    "--accesses": Range(1, 1 << 34, "accesses"),
    "--copies": Range(1, MAX_THREADS, "copies"),
    "--points-per-octave": Range(1, 64, "points per octave"),
    "--max-cores": Range(1, MAX_THREADS, "cores"),
    "--ranks": Range(1, MAX_RANKS_PER_NODE, "ranks"),
    "--iterations": Range(1, 1_000_000, "iterations"),
    "--max-ranks": Range(1, MAX_RANKS_PER_NODE, "ranks (0 is not 'every core': give the number)"),
    "--min-time": Range(0.001, 3600, "seconds per benchmark"),
    "--seed": Range(0, 2**31 - 1, "(a seed)"),
    "--nodes": Range(2, 64, "nodes"),
    "advise --nodes": Range(1, MAX_NODES, "nodes"),
    "advise --cores": Range(1, MAX_RANKS_PER_NODE, "cores per node"),
    "--mtu": Range(1280, 65000, "bytes"),
    "--cores-per-node": Range(1, MAX_THREADS, "cores per node"),
    "--precision": Range(0.001, 0.5, "(a relative precision, such as 0.05)"),
    "--max-blocks": Range(4, 1000, "blocks"),
    "--pairs": Range(2, MAX_PAIRS, "ordered rank pairs"),
}


def _checked(kind: type, option: str, limits: Range) -> Any:
    def convert(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{option} {text}: not {what}; {limits.text()}") from None
        if not limits.holds(value):
            raise argparse.ArgumentTypeError(f"{option} {text}: {limits.text()}")
        return value

    convert.__name__ = kind.__name__  # argparse names the type in its messages
    return convert


def install(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Every integer and real option of PARSER (and its subcommands) checked at the door: a
    value that is not finite or outside its Range is refused by argparse (exit 2, the range
    named). KeyError for an option with no Range in OPTIONS."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                install(sub, f"{path} {name}".strip())
        elif action.type in (int, float):
            flag = action.option_strings[-1] if action.option_strings else action.dest
            limits = OPTIONS.get(f"{path} {flag}") or OPTIONS[flag]
            action.type = _checked(action.type, flag, limits)  # type: ignore[arg-type]
