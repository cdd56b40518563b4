"""The contention study's plan and summary, and the stride probe's checks, without MPI."""

from pathlib import Path

import pytest
from rich.console import Console

from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.experiments import study
from pxq.experiments.runner import RunSpec
from pxq.probes import memprobe


def test_contention_layouts_are_1xq_half_and_qx1_without_repeats():
    assert [str(x) for x in study.contention_layouts(2)] == ["1x2", "2x1"]
    assert [str(x) for x in study.contention_layouts(4)] == ["1x4", "2x2", "4x1"]
    assert [str(x) for x in study.contention_layouts(8)] == ["1x8", "4x2", "8x1"]
    assert [str(x) for x in study.contention_layouts(3)] == ["1x3", "3x1"]
    with pytest.raises(InputError):
        study.contention_layouts(1)


def test_plan_places_only_nodes_with_several_ranks():
    base = RunSpec(app="ring", layout=Layout(1, 1))
    configs = study.plan(base, 4, ["packed", "spread"])
    assert [(str(c.layout), c.placement, c.mode) for c in configs] == [
        ("1x4", "packed", "flat"),
        ("1x4", "spread", "flat"),
        ("2x2", "packed", "flat"),
        ("2x2", "spread", "flat"),
        ("4x1", "packed", "flat"),
    ]
    with pytest.raises(InputError, match="unknown placement"):
        study.plan(base, 4, ["nearest"])


def _rec(layout: str, placement: str, total: float, comm: float) -> dict:
    p, q = layout.split("x")
    return {
        "app": "ring",
        "status": "ok",
        "layout": {"nodes": int(p), "ranks_per_node": int(q)},
        "time": {"total": total, "comm": comm},
        "driver": {"placement": {"mode": placement, "warnings": []}},
        "placement_summary": {"rank_pairs_on_a_node": {"same_l2": 1 if q != "1" else 0}},
    }


def test_summary_normalises_to_the_one_rank_per_node_run():
    rows = study.summarize(
        [_rec("1x2", "packed", 3.0, 1.0), _rec("1x2", "packed", 5.0, 1.0), _rec("2x1", "packed", 2.0, 1.0)]
    )
    by = {r["layout"]: r for r in rows}
    assert by["1x2"]["median"] == 4.0
    assert by["1x2"]["normalised"] == 2.0
    assert by["1x2"]["compute_normalised"] == 3.0  # (4 - 1) / (2 - 1)
    assert by["1x2"]["sharing"] == "1 l2"
    assert by["2x1"]["normalised"] == 1.0


def test_stride_arguments_are_checked_before_running(tmp_path: Path):
    ok = memprobe.stride_argv("4K", "64K", "64", 100, 1, 2, "spread", None, 2, False, tmp_path / "r.jsonl", {})
    assert ok[ok.index("--stride") + 1] == "64" and ok[ok.index("--copies") + 1] == "2"
    for args, msg in [
        (("4K", "64K", "64K", 100, 1, 1, "packed", None), "larger than half"),
        (("4K", "64K", None, 0, 1, 1, "packed", None), "zero iterations"),
        (("4K", "64K", None, 100, 1, 0, "packed", None), "--copies"),
        (("64K", "4K", None, 100, 1, 1, "packed", None), "smaller than"),
        (("4K", "64K", None, 100, 1, 1, "custom", None), "custom"),
        (("4K", "64K", None, 100, 1, 1, "packed", [0]), "custom"),
    ]:
        with pytest.raises(InputError, match=msg):
            memprobe.stride_argv(*args, 2, False, tmp_path / "r.jsonl", {})


def test_the_bandwidth_summary_counts_in_words():
    """'saturates memory bandwidth at 1 thread', not '1 threads'."""
    rows = [
        {"cores": 1, "total_gbs": 10.0, "per_core_gbs": 10.0, "efficiency": 1.0},
        {"cores": 2, "total_gbs": 10.4, "per_core_gbs": 5.2, "efficiency": 0.52},
    ]
    recs = [
        {"size": {"workers": 2, "as": a}, "kernels": [{"kernel": "triad", "rows": rows, "saturation": 1}]}
        for a in ("threads", "ranks")
    ]
    console = Console(record=True, width=200)
    memprobe.bandwidth_summary(recs, console)
    text = console.export_text()
    assert "saturates memory bandwidth at 1 thread (" in text and "at 1 rank (" in text
    assert "1 threads" not in text and "1 ranks" not in text
