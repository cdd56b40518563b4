"""What `pxq report` holds of each run (report.essentials: memory bounded by what its tables
read) and `pxq validate` parsing each line once: the report of the kept records is the report of the whole
ones, and a --group-by field keeps what it names."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from conftest import RUN_RECORD, complete

from pxq.analysis.exports import report
from pxq.cli import main
from pxq.core import records

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scale"))
import records as synthetic  # noqa: E402  (tests/scale/records.py)

DATA = Path(__file__).parent / "data"


def test_a_run_is_kept_without_the_detail_no_table_reads():
    rec = complete(copy.deepcopy(RUN_RECORD))
    rec["context"]["machine_note"] = "x" * 1000
    kept = report.essentials(rec)
    assert "placement" not in kept and "messages" not in kept
    assert set(kept["context"]) <= set(report.READ_CONTEXT) and kept["context"]["host"] == rec["context"]["host"]
    assert kept["time"] == rec["time"]  # its figures
    ids = ("run_id", "repeat", "sweep_id", "sweep_key", "settle")
    assert kept["driver"] == {k: rec["driver"][k] for k in ids if k in rec["driver"]}  # its identity, its round
    assert records.run_identity(kept) == records.run_identity(rec)
    assert "work" not in kept and set(kept.get("verification", {})) <= {"tolerance_used"}
    named = report.essentials(rec, ["placement_summary.requested", "context.machine_note", "messages.total"])
    assert named["context"] == rec["context"] and named["messages"] == rec["messages"]
    assert report.essentials(rec, ["driver.omp.OMP_NUM_THREADS"])["driver"] == rec["driver"]
    probe = {"kind": "probe", "probe": "stride", "placement": [1]}
    assert report.essentials(probe) is probe  # other kinds whole: their figures read them


def test_runs_alike_share_their_parts_and_a_run_that_did_not_verify_is_kept_whole():
    one, two = (complete(copy.deepcopy(RUN_RECORD)) for _ in range(2))
    two["driver"]["run_id"] = "another"
    a, b = report.essentials(one), report.essentials(two)
    for part in ("variant", "layout", "size"):
        assert a[part] == one[part] and a[part] is b[part]  # one object for both runs
    two["variant"]["tile_bytes"] = 12345
    assert report.essentials(two)["variant"] is not a["variant"]  # a part that differs is its own
    failed = complete(copy.deepcopy(RUN_RECORD))
    failed["status"] = "failed"
    kept = report.essentials(failed)
    assert kept["driver"] == failed["driver"] and kept["verification"] == failed["verification"]


def test_the_report_of_kept_runs_is_the_report_of_whole_ones(tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    synthetic.write(400, path)
    with path.open("a") as f:
        f.write((DATA / "figures" / "runs.jsonl").read_text())
    whole = records.read_files([path])
    kept = records.read_files([path], keep=report.essentials)
    assert len(whole) == len(kept) == 400 + len((DATA / "figures" / "runs.jsonl").read_text().splitlines())
    for group_by in ([], ["context.host"], ["placement_summary.requested"]):
        assert report.summarize(whole, group_by) == report.summarize(kept, group_by)

    assert main(["report", str(path), "--format", "csv"]) == 0
    text = capsys.readouterr().out
    assert text.count("\n") > 4 and "tiled" in text


def test_validate_reads_a_file_once(tmp_path, monkeypatch, capsys):
    path = tmp_path / "runs.jsonl"
    synthetic.write(200, path)
    parsed = []
    real = records.parse_line

    def counted(raw: bytes):
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(records, "parse_line", counted)
    assert main(["validate", str(path)]) == 0
    assert "200 run (version 2); 0 invalid" in capsys.readouterr().out
    assert len(parsed) == 200  # each line parsed once: the schema's pass and report's are one


def test_validate_still_agrees_with_report_on_a_record_saved_pretty_printed(tmp_path, capsys):
    """Report refuses a record over several lines; validate, which reads it whole, says so."""
    path = tmp_path / "saved.jsonl"
    path.write_text(json.dumps(complete(copy.deepcopy(RUN_RECORD)), indent=1) + "\n")
    assert main(["report", str(path)]) == 2
    capsys.readouterr()
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "pxq report cannot use it" in out and "1 invalid" in out


def test_a_run_in_two_files_differing_only_where_report_does_not_read_is_still_named(tmp_path, capsys):
    """Two copies of one run are compared whole, not on what report keeps of them."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    synthetic.write(4, first)
    rec = json.loads(first.read_text().splitlines()[0])
    rec["placement"] = list(reversed(rec["placement"]))
    rec["messages"]["bytes"] += 1
    second.write_text(json.dumps(rec) + "\n")
    assert main(["report", str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert "with different contents" in err and str(first) in err and str(second) in err
    second.write_text(first.read_text())  # a plain copy counts once
    assert main(["report", str(first), str(second), "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\n") == 5  # the header and the four configurations


def test_a_record_of_2048_ranks_of_is_holds_a_row_per_rank_and_is_read(tmp_path, capsys):
    """A real 32-rank IS record (an all-to-all: every rank sends to every other), widened to 2,048
    ranks as its writer writes them: its size grows with the ranks, not their pairs (the pairs of
    the old form would pass the readers' cap), and validate, report and the CSV export read it."""
    base = json.loads((DATA / "is-32-ranks.jsonl").read_text().splitlines()[0])
    assert "by_peer" not in base["messages"] and len(base["messages"]["by_rank"]) == 32
    ranks = 2048
    rec = synthetic.widen(base, ranks, 32)
    line = json.dumps(rec)
    per_rank = (len(line) - len(json.dumps(base))) / (ranks - 32)
    assert per_rank < 400, per_rank  # a placement row, two times and a by_rank row
    pair = len(json.dumps([2047, 2046, 670, 184084])) + 1
    assert pair * ranks * (ranks - 1) > records.MAX_LINE > 100 * len(line)  # the P x P form could not be read
    path = tmp_path / "is.jsonl"
    path.write_text(line + "\n")
    assert main(["validate", "--require", "run", str(path)]) == 0
    assert "1 run" in capsys.readouterr().out
    assert main(["report", str(path)]) == 0
    assert "64x32" in capsys.readouterr().out
    csv = tmp_path / "is.csv"
    assert main(["report", str(path), "--format", "csv", "--records", "runs", "--out", str(csv)]) == 0
    head, row = csv.read_text().splitlines()[:2]
    fields = dict(zip(head.split(","), row.split(",")))
    assert fields["nodes"] == "64" and fields["ranks_per_node"] == "32" and fields["verified"] == "True"
    (back,) = records.read_files([path])
    assert len(back["placement"]) == ranks and back["messages"]["messages"] == sum(
        r[2] for r in rec["messages"]["by_rank"]
    )
