"""pxq report --format caliper: one Caliper JSON (json-split) profile per completed run, the
tree and metadata Thicket reads (tests/ecosystem/test_thicket.py reads them with Thicket)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pxq import cli
from pxq.analysis.exports import caliper

DATA = Path(__file__).parent / "data" / "figures" / "runs.jsonl"


def run_pxq(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_completed_run_is_a_profile_with_its_phases_and_context(tmp_path, capsys):
    out = tmp_path / "cali"
    code, stdout, err = run_pxq(["report", str(DATA), "--format", "caliper", "--out", str(out)], capsys)
    assert code == 0, stdout + err
    recs = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    done = [r for r in recs if r["status"] == "ok"]
    files = sorted(out.glob("*.json"))
    assert len(files) == len(done) and f"{len(done)} profiles" in stdout
    over = [r for r in done if sum(v for k, v in r["time"].items() if k not in ("total", "setup")) > r["time"]["total"]]
    assert over, "the data holds a run whose slowest ranks' phases add up to more than its total"
    for rec, path in zip(done, files):
        prof = json.loads(path.read_text())
        nodes, cols = prof["nodes"], prof["columns"]
        assert nodes[0] == {"label": rec["app"], "column": "path"} and "parent" not in nodes[0]
        phases = {k: v for k, v in rec["time"].items() if k not in ("total", "setup")}
        assert [n["label"] for n in nodes[1:]] == list(phases) and all(n["parent"] == 0 for n in nodes[1:])
        by_node = {row[0]: dict(zip(cols, row)) for row in prof["data"]}
        # The root holds its children: the measured total, or the phases' sum where the slowest
        # ranks of different phases add up to more (said in the metadata).
        root = by_node[0]["inclusive#sum#time.duration"]
        assert root == max(rec["time"]["total"], sum(phases.values())) and prof["total_s"] == rec["time"]["total"]
        assert prof["phases_over_total_s"] == pytest.approx(max(0.0, sum(phases.values()) - rec["time"]["total"]))
        assert sum(by_node[i]["inclusive#sum#time.duration"] for i in range(1, len(nodes))) <= root + 1e-12
        for i, (phase, seconds) in enumerate(phases.items(), start=1):
            assert by_node[i]["sum#time.duration"] == seconds, phase
        assert by_node[0]["sum#time.duration"] >= 0
        lay = rec["layout"]
        assert prof["layout"].startswith(f"{lay['nodes']}x{lay['ranks_per_node']}")
        assert prof["mode"] == rec["variant"]["mode"] and prof["ranks"] == lay["ranks"]
        cpus = [t["cpu"] for p in rec["placement"] for t in p["threads"]]
        assert prof["placement"].count("@n") == len(rec["placement"]) and all(str(c) in prof["placement"] for c in cpus)
        assert prof["rank_pairs_same_l3"] == rec["placement_summary"]["rank_pairs_on_a_node"]["same_l3"]
        # The metadata never takes a name the reader keeps for the profile's own sections
        # (a layout's "nodes" once replaced the tree).
        assert not set(caliper.metadata(rec, str(DATA))) & {"data", "columns", "column_metadata", "nodes"}
        assert isinstance(prof["nodes"], list) and prof["node_count"] == lay["nodes"]


def test_bad_requests_exit_2_and_write_nothing(tmp_path, capsys):
    code, _, err = run_pxq(["report", str(DATA), "--format", "caliper"], capsys)
    assert code == 2 and "--out" in err
    afile = tmp_path / "file.json"
    afile.write_text("{}")
    code, _, err = run_pxq(["report", str(DATA), "--format", "caliper", "--out", str(afile)], capsys)
    assert code == 2 and "is a file" in err and afile.read_text() == "{}"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = run_pxq(["report", str(empty), "--format", "caliper", "--out", str(tmp_path / "c")], capsys)
    assert code == 2 and "no completed runs" in err and not (tmp_path / "c").exists()


def test_start_up_times_are_no_phases_of_the_tree():
    """MPI_Init, rank 0's seconds from main to its record and the launcher's share sit in a run's
    time block beside its phases; the profile's tree holds the timed iterations' phases only."""
    rec = next(r for r in map(json.loads, DATA.read_text().splitlines()) if r.get("status") == "ok")
    phases = [k for k in rec["time"] if k not in ("total", "setup")]
    rec["time"].update(mpi_init=0.2, app_wall=1.5, launch=0.3)
    labels = [n["label"] for n in caliper.profile(rec)["nodes"][1:]]
    assert labels == phases and phases
