"""Plausibility guards: a figure no careful engineer would sign is flagged where it is printed
(tables, figures, records, reports) and never the basis of a verdict (findings.Finding turns a
verdict resting on a flagged figure into "inconclusive").

Each guard returns None for a plausible figure, else the flag's text: what was seen and why
it cannot be right."""

from __future__ import annotations

import statistics

from pxq.analysis.verdicts.findings import spread

SPEEDUP_SLACK = 0.15  # a speedup may beat the ratio of cores by this much (caches add up) before it is flagged
CONTENTION_FLOOR = 0.8  # sharing a resource cannot make a copy this much faster than alone
CONTENTION_SLACK = 0.25  # c copies sharing a bus may each take c times as long, and this much more
BANDWIDTH_SLACK = 0.10  # above the measured peak by more than this
EFFICIENCY_SLACK = 0.05


def speedup(label: str, value: float, cores_ratio: float) -> str | None:
    """A speedup above the ratio of cores used: an efficiency above 100% by more than caches
    can add (SPEEDUP_SLACK), such as 1 rank 3x faster than 2."""
    if efficiency(label, value / cores_ratio, SPEEDUP_SLACK):
        return (
            f"{label}: {value:.2f}x with {cores_ratio:g}x the cores ({100 * value / cores_ratio:.0f}% efficiency); "
            "more than the cores allow, so one of the runs was disturbed"
        )
    return None


def contention(label: str, ratio: float, copies: int | None = None) -> str | None:
    """Time together over time alone far below 1: a shared resource does not speed a copy up;
    or (with COPIES, on data beyond the caches) far above the number of copies: c copies sharing
    a memory bus each get at least a c-th of it, so none takes much more than c times as long."""
    if ratio < CONTENTION_FLOOR:
        return f"{label}: {ratio:.2f}x; copies sharing a machine cannot run much faster than one alone"
    if copies and ratio > copies * (1 + CONTENTION_SLACK):
        return (
            f"{label}: {ratio:.2f}x with {copies} copies; sharing a memory bus among {copies} costs each at most "
            f"about {copies}x, so something else (another load, the timer) slowed the copies"
        )
    return None


def bandwidth(label: str, gbs: float, peak: float) -> str | None:
    if peak > 0 and gbs > peak * (1 + BANDWIDTH_SLACK):
        return f"{label}: {gbs:.1f} GB/s above the measured peak of {peak:.1f} GB/s"
    return None


def efficiency(label: str, value: float, slack: float = EFFICIENCY_SLACK) -> str | None:
    if value > 1 + slack:
        return f"{label}: {100 * value:.0f}% efficiency, above 100%"
    return None


def identical(label: str, a: list[float], b: list[float]) -> str | None:
    """Two configurations that run on the same cores the same way, whose medians differ by
    more than the spread of either: the noise is larger than the repeats show."""
    if not a or not b:
        return None
    ma, mb = statistics.median(a), statistics.median(b)
    if not ma or not mb:
        return None
    noise = max(spread(a), spread(b))
    gap = max(ma, mb) / min(ma, mb) - 1
    if gap > max(noise, 0.05):
        return (
            f"{label}: identical configurations {ma / mb:.2f}x apart, beyond their spread of {100 * noise:.0f}%; "
            "the machine's noise is larger than the repeats show"
        )
    return None


def single(label: str, repeats: int) -> str | None:
    """A ratio from one unrepeated run has no spread to read it against."""
    if repeats < 2:
        return f"{label}: from one run, no spread to read it against"
    return None
