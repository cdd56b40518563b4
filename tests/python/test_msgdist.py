"""Message classification by channel and size under block and cyclic models, from hand-made
profiles, and the profile reader's errors."""

import json
from pathlib import Path

import pytest
from conftest import RUN_RECORD

from pxq.analysis.messages import msgdist
from pxq.core.errors import InputError
from pxq.core.records import RecordError

UPPER = [0] + [1 << (k - 1) for k in range(1, 50)]


def bin_of(nbytes: int) -> int:
    return next(k for k, u in enumerate(UPPER) if nbytes <= u)


def ring_profile(ranks: int, nbytes: int = 1024) -> dict:
    """Every rank sends one message to its right neighbour."""
    return {
        "kind": "profile",
        "schema": 2,
        "app": "msgprof",
        "status": "ok",
        "program": "ring",
        "ranks": ranks,
        "columns": ["src", "dst", "bin", "count", "bytes"],
        "bins": {"kind": "log2", "upper_bytes": UPPER},
        "p2p": [[r, (r + 1) % ranks, bin_of(nbytes), 1, nbytes] for r in range(ranks)],
        "collective_model": [],
        "collectives": {},
        "placement": [],
        "context": {"mpi_library": "Open MPI v4.1.4", "date": "2026-11-25T00:00:00Z"},
    }


def shares(t: msgdist.Tally) -> dict[str, float]:
    count = {c: sum(r[c] for r in t.count) for c in msgdist.CHANNELS}
    total = sum(count.values())
    return {c: round(100 * count[c] / total, 1) for c in msgdist.CHANNELS}


def test_ring_on_4x2x2_block_and_cyclic():
    rec = ring_profile(16)
    model = msgdist.parse_model("4x2x2")
    block = msgdist.tally(rec, msgdist.place(model, 16, "block"), "all")
    assert shares(block) == {"intra_cmp": 50.0, "inter_cmp": 25.0, "inter_node": 25.0}
    cyclic = msgdist.tally(rec, msgdist.place(model, 16, "cyclic"), "all")
    assert shares(cyclic) == {"intra_cmp": 0.0, "inter_cmp": 0.0, "inter_node": 100.0}


def test_even_distribution_on_4x2x2():
    even = msgdist.even_distribution(msgdist.place(msgdist.parse_model("4x2x2"), 16, "block"))
    assert {c: round(100 * v, 1) for c, v in even.items()} == {"intra_cmp": 6.7, "inter_cmp": 13.3, "inter_node": 80.0}


def test_sizes_fall_in_their_coarse_ranges_and_self_messages_are_their_own_channel():
    rec = ring_profile(4)
    rec["p2p"] = [
        [0, 1, bin_of(256), 2, 512],
        [0, 1, bin_of(257), 1, 257],
        [1, 2, bin_of(300000), 1, 300000],
        [2, 2, bin_of(8), 5, 40],
    ]
    t = msgdist.tally(rec, msgdist.place(msgdist.parse_model("1x1x4"), 4, "block"), "p2p")
    assert [sum(r.values()) for r in t.count] == [7, 1, 0, 0, 1]
    assert t.count[0]["self"] == 5 and t.nbytes[0]["self"] == 40
    assert t.nbytes[4]["intra_cmp"] == 300000


def test_allocation_verdicts_follow_bytes_and_messages_apart():
    """Many small messages to a near rank, few large ones to a far one: block wins by
    messages, cyclic by bytes, and the verdict says they disagree."""
    rec = ring_profile(4)
    rec["p2p"] = [[0, 1, bin_of(8), 100, 800], [0, 2, bin_of(1 << 20), 1, 1 << 20]]
    rows = msgdist.compare_allocations(rec, msgdist.parse_model("2x1x2"))
    assert msgdist.better_allocation(rows, "count") == "block"
    assert msgdist.better_allocation(rows, "bytes") == "cyclic"
    text = " ".join(msgdist.allocation_verdicts(rows))
    assert "by bytes: cyclic" in text and "by messages: block" in text and "disagree" in text


def test_collectives_are_reported_apart_and_included():
    rec = ring_profile(4)
    rec["collective_model"] = [[0, 3, bin_of(8), 2, 16]]
    places = msgdist.place(msgdist.parse_model("2x1x2"), 4, "block")
    assert msgdist.tally(rec, places, "p2p").total() == 4
    assert msgdist.tally(rec, places, "collectives").total() == 2
    assert msgdist.tally(rec, places, "all").total() == 6


def test_observed_placement_classifies_by_node_and_package():
    rec = ring_profile(3)
    rec["placement"] = [
        {"rank": r, "node": n, "threads": [{"package": p}]} for r, n, p in ((0, 0, 0), (1, 0, 1), (2, 1, 0))
    ]
    t = msgdist.tally(rec, msgdist.observed_places(rec), "all")
    assert shares(t) == {"intra_cmp": 0.0, "inter_cmp": 33.3, "inter_node": 66.7}


def test_allocation_comparison():
    rows = msgdist.compare_allocations(ring_profile(16), msgdist.parse_model("4x2x2"))
    assert [r["alloc"] for r in rows] == ["block", "cyclic"]
    assert rows[0]["count"]["inter_node"] == 4 and rows[1]["count"]["inter_node"] == 16


def test_bad_models_allocations_and_files(tmp_path: Path):
    with pytest.raises(InputError, match="at least 16 cores"):
        msgdist.place(msgdist.parse_model("2x2x2"), 16, "block")
    for bad in ("4x2", "0x2x2", "axbxc"):
        with pytest.raises(InputError, match="NODESxSOCKETSxCORES"):
            msgdist.parse_model(bad)
    with pytest.raises(InputError, match="unknown allocation"):
        msgdist.place(msgdist.parse_model("4x2x2"), 16, "scatter")
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(RUN_RECORD) + "\n")
    with pytest.raises(RecordError, match="no message profile"):
        msgdist.load(run)
    truncated = tmp_path / "cut.jsonl"
    text = json.dumps(ring_profile(4))
    truncated.write_text(text[: len(text) // 2])
    before = truncated.read_text()
    with pytest.raises(RecordError, match="truncated"):
        msgdist.load(truncated)
    assert truncated.read_text() == before  # nothing overwritten
    with pytest.raises(InputError, match="no such file"):
        msgdist.load(tmp_path / "missing.jsonl")
    nomatrix = tmp_path / "nomatrix.jsonl"
    rec = ring_profile(4)
    del rec["p2p"]
    nomatrix.write_text(json.dumps(rec) + "\n")
    with pytest.raises(RecordError, match="nomatrix.jsonl:1: not a valid profile record: .*'p2p' is a required"):
        msgdist.load(nomatrix)


def test_a_profiles_program_name_is_shown_as_plain_text():
    rec = dict(ring_profile(4), program="/x/[red]$\\frac{a}{\x1b[31m prog --flag")
    assert msgdist.program_name(rec) == "?red???frac?a????31m"
    assert msgdist.program_name(dict(rec, program="./cg.A.x -n 4")) == "cg.A.x"


def test_profile_tells_a_failed_launch_from_a_program_that_never_finalised(tmp_path, capsys):
    """No profile: a command that failed is a run failure with its exit code named; a program that
    exited 0 without MPI_Finalize is named as such."""
    import io

    from rich.console import Console

    from pxq.analysis.messages import msgdist

    def ran(code: int) -> str:
        out = io.StringIO()
        fake = tmp_path / "mpirun"
        fake.write_text(f"#!/bin/sh\nexit {code}\n")
        fake.chmod(0o755)
        got = msgdist.profile(
            Console(file=out, width=200), [str(fake), "-np", "2", "./app"], tmp_path / "p.jsonl", tmp_path / "p.png"
        )
        assert got == 3
        return out.getvalue()

    assert "ended with exit code 7" in ran(7) and "MPI_Finalize" not in ran(7)
    assert "exited 0 without reaching MPI_Finalize" in ran(0)
