import copy

import pytest
from rich.console import Console
from test_roofline import CEIL, ring_record

from pxq.analysis.exports import report
from pxq.analysis.models import roofline, roofmark
from pxq.core import schemas
from pxq.machine import caches
from pxq.machine import ceilings as ceil


def test_the_roof_block_is_the_physical_roof_of_the_declared_phases():
    # The largest sweep of the curve with both cores busy: 40 GB/s (20 per core); peak 100 (50 per core).
    rec = ring_record(64 << 20, None, total=2.0)
    block = roofmark.mark(rec, CEIL)
    w = rec["work"]["compute"]["rank_max"]
    by_hand = max(w["flops"] / 50e9, w["memory_bytes"] / 20e9)
    assert block["roof_s"] == pytest.approx(by_hand, rel=1e-5)
    assert block["phases_s"] == pytest.approx(2.0)
    assert block["of_roof"] == pytest.approx(by_hand / 2.0, rel=1e-3)
    assert block["of_roof"] == pytest.approx(roofline.predict(rec, CEIL)["of_roof"], rel=1e-3)  # the roofline's column
    assert block["model_s"] == pytest.approx(roofline.predict(rec, CEIL)["predicted"], rel=1e-3)
    assert (block["binds"], block["cores"], block["memory_gbs"], block["peak_gflops"]) == ("memory", 2, 40, 100)
    # The limit the access-kind model binds the heaviest phase at, named with that phase.
    binding = roofline.phase_prediction(rec["work"]["compute"], CEIL, 2, 1)["binding"]
    assert block["model_binds"] == f"{binding} (compute)"
    assert schemas.problems({**rec, "roof": block}, "t") == []
    assert schemas.problems({**rec, "roof": {**block, "model_binds": 3}}, "t")


def test_a_run_faster_than_the_limits_allow_is_above_its_roof():
    fast = roofmark.mark(ring_record(64 << 20, None, total=0.001), CEIL)
    assert fast["of_roof"] > roofmark.ROOF_SLACK and roofmark.above(fast)
    assert not roofmark.above(roofmark.mark(ring_record(64 << 20, None, total=100.0), CEIL))


def test_without_ceilings_or_work_the_block_says_why_and_the_schema_wants_the_reason():
    rec = ring_record(64 << 20, None)
    none = roofmark.mark(rec, None)
    assert none["of_roof"] is None and "pxq roofline" in none["why"]
    assert schemas.problems({**rec, "roof": none}, "t") == []
    assert schemas.problems({**rec, "roof": {"of_roof": None}}, "t")  # no reason: refused
    assert schemas.problems({**rec, "roof": {"of_roof": 0.5}}, "t")  # a fraction without its parts: refused
    assert schemas.problems({**rec, "roof": {**roofmark.mark(rec, CEIL), "of_roof": -1}}, "t")
    undeclared = copy.deepcopy(rec)
    del undeclared["work"]
    assert roofmark.mark(undeclared, CEIL) == {"of_roof": None, "why": "the run declares no work"}
    broken = {k: v for k, v in CEIL.items() if k != "peak_gflops"}
    assert "--remeasure" in roofmark.mark(rec, broken)["why"]


def test_attach_uses_the_ceilings_kept_for_the_records_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("PXQ_CEILINGS", str(tmp_path / "ceilings.json"))
    rec = ring_record(64 << 20, None, total=2.0)
    roofmark.attach(rec)
    assert rec["roof"]["of_roof"] is None  # nothing kept yet
    assert not (tmp_path / "ceilings.json").exists()  # and nothing measured
    ceil.save({**CEIL, "key": caches.key(rec["context"])})
    roofmark.attach(rec)
    assert rec["roof"]["of_roof"] == pytest.approx(roofmark.mark(rec, CEIL)["of_roof"])
    other = copy.deepcopy(rec)
    other["context"]["cpu_model"] = "another processor"
    roofmark.attach(other)
    assert other["roof"]["of_roof"] is None  # another machine's ceilings never judge it


def _runs(total: float, n: int = 3) -> list[dict]:
    out = []
    for i in range(n):
        rec = ring_record(64 << 20, None, total=total * (1 + 0.01 * i))
        rec["status"] = "ok"
        rec["roof"] = roofmark.mark(rec, CEIL)
        out.append(rec)
    return out


def test_the_report_shows_the_median_runs_share_of_its_roof_and_flags_one_above():
    (row,) = report.summarize(_runs(2.0))
    assert row.median_roof == pytest.approx(roofmark.mark(ring_record(64 << 20, None, total=2.02), CEIL)["of_roof"])
    assert "above-roof" not in row.flags
    (fast,) = report.summarize(_runs(0.001))
    assert "above-roof" in fast.flags
    console = Console(record=True, width=250)
    report.print_table([fast], console=console)
    text = console.export_text()
    assert "of roof" in text and "(!)" in text and "physical roof" in text
    assert report.flat_rows([row])[0]["of_roof"] == pytest.approx(row.median_roof)


def test_a_report_of_records_without_a_roof_or_with_a_hostile_one_shows_none():
    plain = _runs(2.0)
    for rec in plain:
        del rec["roof"]
    (row,) = report.summarize(plain)
    assert row.median_roof is None and report.flat_rows([row])[0]["of_roof"] is None
    console = Console(record=True, width=250)
    report.print_table([row], console=console)
    assert "of roof" not in console.export_text()  # no column where no record has one
    hostile = _runs(2.0)
    for rec, bad in zip(hostile, ["1.5", True, {"of_roof": "x"}]):
        rec["roof"] = {"of_roof": bad} if not isinstance(bad, dict) else bad
    (row,) = report.summarize(hostile)
    assert row.median_roof is None and "above-roof" not in row.flags
