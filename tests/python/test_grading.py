"""`pxq lab grade`'s table keeps each copy's whole reason, on one line per cell, in CSV and
markdown alike."""

from __future__ import annotations

import csv
import io

from pxq.teaching import grading


def _record(reason: str) -> dict:
    return {"copy": "alice", "lab": 2, "outcome": "not done", "exit": 1, "code": "-", "reason": reason}


def test_the_whole_reason_reaches_the_table() -> None:
    reason = "the decomposition keeps 33% of halo messages on a node\nthe best the grid allows: 50%\n\nfix: tile rows"
    row = grading.row(_record(reason))
    assert row["reason"] == (
        "the decomposition keeps 33% of halo messages on a node / the best the grid allows: 50% / fix: tile rows"
    )
    (back,) = list(csv.DictReader(io.StringIO(grading.as_csv([row]))))
    assert back["reason"] == row["reason"]
    table = grading.as_markdown([row], "lab 2")
    assert "fix: tile rows" in table and "best the grid allows" in table


def test_a_flood_of_a_reason_is_cut_and_says_so() -> None:
    row = grading.row(_record("x" * 100_000))
    assert len(row["reason"]) < grading.REASON_CHARS + 100 and row["reason"].endswith("in the JSON)")
    assert grading.row(_record(""))["reason"] == ""
