"""The rank-pair probe's timed pairs, whichever form its record holds: the full matrix
(`matrix_gbs`, every ordered pair, up to the probe's `--pairs`) or the sample by sender and
partner offset (`pairs_sampled`: rank i sent to i + d mod P for each offset d), which grows with
the ranks rather than their square. Every reader (the probe's table and figure, the study, the
exports) reads pairs through here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pxq.core.records import RecordError


def ranks(rec: dict[str, Any]) -> int:
    sampled = rec.get("pairs_sampled")
    return len(sampled["gbs"]) if sampled else len(rec.get("matrix_gbs") or [])


def timed_pairs(rec: dict[str, Any]) -> Iterator[tuple[int, int, float]]:
    """(from rank, to rank, GB/s) of every pair the record timed, the diagonal left out."""
    sampled = rec.get("pairs_sampled")
    if not sampled:
        for i, row in enumerate(rec.get("matrix_gbs") or []):
            yield from ((i, j, v) for j, v in enumerate(row) if i != j)
        return
    offsets, rows = sampled["offsets"], sampled["gbs"]
    n = len(rows)
    for i, row in enumerate(rows):
        if len(row) != len(offsets):
            raise RecordError(f"rank {i}'s sampled pairs hold {len(row)} values for {len(offsets)} offsets")
        yield from ((i, (i + d) % n, v) for d, v in zip(offsets, row, strict=True))


def coverage(rec: dict[str, Any]) -> tuple[int, int]:
    """The ordered pairs timed and the ordered pairs there are."""
    n = ranks(rec)
    sampled = rec.get("pairs_sampled")
    if sampled:
        return len(sampled["offsets"]) * n, int(sampled["pairs_total"])
    return n * (n - 1), n * (n - 1)
