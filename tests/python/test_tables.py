"""`pxq report --format csv|json|markdown` on probe, profile and study records: one row per
measured point, each naming its record, the counts following the records."""

import csv
import io
import json
from pathlib import Path

import pytest

from pxq import cli

FIGURES = Path(__file__).parent / "data" / "figures"


def last(name: str) -> dict:
    return [json.loads(line) for line in (FIGURES / name).read_text().splitlines() if line.strip()][-1]


def expected_rows(name: str) -> int:
    """Summed over every record of the file (a file may hold several)."""
    recs = [json.loads(line) for line in (FIGURES / name).read_text().splitlines() if line.strip()]
    return sum(_rows_of_one(name, rec) for rec in recs)


def _rows_of_one(name: str, rec: dict) -> int:
    if name == "pingpong.jsonl":
        return sum(len(ch["latency"]) for ch in rec["channels"])
    if name == "rankpairs.jsonl":
        n = len(rec["matrix_gbs"])
        return n * (n - 1)
    if name == "collective.jsonl":
        return 1
    if name == "stride.jsonl":
        return len(rec["points"])
    if name == "bandwidth.jsonl":
        return sum(len(k["rows"]) for k in rec["kernels"])
    if name == "profile.jsonl":
        return len(rec["p2p"]) + len(rec["collective_model"])
    raise AssertionError(name)


PROBES = ("pingpong", "rankpairs", "collective", "stride", "bandwidth", "profile")


@pytest.mark.parametrize("name", [f"{p}.jsonl" for p in PROBES])
def test_probes_and_profiles_export_a_row_per_point(name, capsys, tmp_path):
    path = FIGURES / name
    assert cli.main(["report", str(path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == expected_rows(name) > 0
    assert {r["record"] for r in rows} == {last(name)["app"]}
    assert cli.main(["report", str(path), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(table) == len(rows) and list(table[0])[:2] == ["record", "layout"]
    out = tmp_path / "t.md"
    assert cli.main(["report", str(path), "--format", "markdown", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == len(rows) + 2


def test_a_study_file_exports_its_runs_or_with_records_studies_its_rows(capsys):
    path = FIGURES / "study-allocation.jsonl"
    study = next(json.loads(line) for line in path.read_text().splitlines() if '"kind": "study"' in line)
    assert cli.main(["report", str(path), "--format", "json", "--records", "studies"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(study["rows"]) and rows[0]["record"] == "study-allocation"
    assert "bytes.inter_node" in rows[0]  # nested facts as dotted columns
    assert cli.main(["report", str(path), "--format", "csv", "--records", "probes"]) == 2
    assert "no probe records" in capsys.readouterr().err
    assert cli.main(["report", str(path), "--records", "studies"]) == 2  # a table is not an export
