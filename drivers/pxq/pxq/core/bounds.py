"""The bounds of every number pxq takes from a user, a file or the environment: a value
outside them is refused with exit 2 and the range, before anything is planned or run (a
repeat count of 10^11 would build its run list until memory ran out; a timeout of 1e300
overflows the clock)."""

from __future__ import annotations

import math

from pxq.core.errors import InputError

MAX_REPEAT = 10_000  # repeats of one configuration
MAX_TIMEOUT = 7 * 24 * 3600.0  # seconds a run may take: a week
MAX_NODES = 100_000
MAX_RANKS_PER_NODE = 4096
MAX_THREADS = 4096  # threads per rank
MAX_RANKS = 1 << 20  # ranks in one run (rank-order files, ranges)


def repeat(value: int, option: str = "--repeat") -> int:
    if not 1 <= value <= MAX_REPEAT:
        raise InputError(f"{option} {value}: use 1 to {MAX_REPEAT} repeats")
    return value


def timeout(seconds: float) -> float:
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_TIMEOUT:
        raise InputError(
            f"--timeout {seconds}: give the seconds a run may take, above 0 and at most {MAX_TIMEOUT:.0f} "
            "(a week; default 600)"
        )
    return seconds


def threads(value: int, option: str = "--threads") -> int:
    if not 1 <= value <= MAX_THREADS:
        raise InputError(f"{option} {value}: use 1 to {MAX_THREADS} threads per rank")
    return value


def count(value: int, option: str, low: int, high: int, what: str) -> int:
    """Any other count: OPTION VALUE refused unless LOW <= VALUE <= HIGH (WHAT names the unit)."""
    if not low <= value <= high:
        raise InputError(f"{option} {value}: use {low} to {high} {what}")
    return value
