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


def _check(rec: dict[str, Any], rows: list[Any], offsets: list[int] | None) -> None:
    """RecordError unless the record's rows are one a rank of its layout and its offsets (of a
    sample) name other ranks: a record pxq did not write that way would export and draw pairs of
    ranks that never ran."""
    n = len(rows)
    ranks = (rec.get("layout") or {}).get("ranks")
    if ranks is not None and n != ranks:
        raise RecordError(f"the rank pairs hold rows of {n} ranks for a layout of {ranks} ranks")
    if offsets is not None and (not offsets or any(not 0 < d < n for d in offsets)):
        raise RecordError(f"the sampled pairs' offsets {offsets[:8]} are not 1 to {n - 1} (ranks ahead of the sender)")
    width = len(offsets) if offsets is not None else n
    for i, row in enumerate(rows):
        if len(row) != width:
            what = (
                f"sampled pairs hold {len(row)} values for {width} offsets"
                if offsets is not None
                else (f"pairs hold {len(row)} values for {n} ranks")
            )
            raise RecordError(f"rank {i}'s {what}")


def timed_pairs(rec: dict[str, Any]) -> Iterator[tuple[int, int, float]]:
    """(from rank, to rank, GB/s) of every pair the record timed, the diagonal left out
    (RecordError when the record's pairs do not fit its ranks)."""
    sampled = rec.get("pairs_sampled")
    if not sampled:
        matrix = rec.get("matrix_gbs") or []
        if matrix:
            _check(rec, matrix, None)
        for i, row in enumerate(matrix):
            yield from ((i, j, v) for j, v in enumerate(row) if i != j)
        return
    offsets, rows = sampled["offsets"], sampled["gbs"]
    _check(rec, rows, offsets)
    n = len(rows)
    for i, row in enumerate(rows):
        yield from ((i, (i + d) % n, v) for d, v in zip(offsets, row, strict=True))


def coverage(rec: dict[str, Any]) -> tuple[int, int]:
    """The ordered pairs timed and the ordered pairs there are."""
    n = ranks(rec)
    sampled = rec.get("pairs_sampled")
    if sampled:
        return len(sampled["offsets"]) * n, int(sampled["pairs_total"])
    return n * (n - 1), n * (n - 1)
