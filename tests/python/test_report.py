"""The report's figures come from the median time, never from a median of rates."""

from pxq import report


def record(seconds: float, gbs: float, mops: float | None = None, metric: str = "effective_gbs") -> dict:
    metrics = {metric: gbs, **({"mops_total": mops} if mops is not None else {})}
    return {
        "app": "cg",
        "status": "ok",
        "size": {"class": "S"},
        "variant": {"mode": "flat", "threads": 1, "tile_bytes": 0, "backend": "openmp"},
        "layout": {"nodes": 1, "ranks_per_node": 2, "threads": 1, "alloc": "block"},
        "time": {"total": seconds, "comm": 0.0},
        "metrics": metrics,
    }


def test_rates_over_the_whole_run_come_from_the_median_time():
    # 6 GB and 600 Mop in each run: 1 s and 3 s. The median time is 2 s, so 3 GB/s and 300 Mop/s;
    # the median of the rates would say 4 GB/s and 400 Mop/s.
    (row,) = report.summarize([record(1.0, 6.0, 600.0), record(3.0, 2.0, 200.0)])
    assert row.median == 2.0
    assert row.median_gbs == 3.0
    assert row.median_mops == 300.0


def test_a_phase_bandwidth_is_the_median_run_s():
    rows = report.summarize([record(t, g, metric="spmv_gbs") for t, g in ((1.0, 9.0), (2.0, 5.0), (3.0, 1.0))])
    assert rows[0].median_gbs == 5.0


def test_a_faster_configuration_never_shows_a_lower_whole_run_bandwidth():
    slow = [record(t, 6.0 / t) for t in (2.0, 2.1, 5.0, 5.2)]
    fast = [
        dict(record(t, 6.0 / t), variant={**record(1, 1)["variant"], "mode": "hybrid"}) for t in (1.0, 1.1, 1.2, 9.0)
    ]
    by_mode = {r.mode: r for r in report.summarize(slow + fast)}
    assert by_mode["hybrid"].median < by_mode["flat"].median
    assert by_mode["hybrid"].median_gbs > by_mode["flat"].median_gbs
