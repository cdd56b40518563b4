"""The contention-aware roofline: the ceilings' curve and levels, the model's placement of a run
(binding ceiling, predicted time), the grouping into points, and `pxq roofline` end to end on
fixed ceilings (no measurement in a test)."""

import copy
import json
import math
import random
import statistics
import uuid
from pathlib import Path

import pytest

from pxq import cli
from pxq.analysis.models import drift, ordering, roofline, roofview
from pxq.analysis.verdicts import settle
from pxq.figures import roofline as draw
from pxq.labs import tiling
from pxq.machine import ceilings
from pxq.probes import ceilprobe
from pxq.studies import contention

K, M = 1 << 10, 1 << 20


def rows(one: float, two: float) -> list[dict]:
    return [{"cores": 1, "median": one, "min": one, "max": one}, {"cores": 2, "median": two, "min": two, "max": two}]


# A 2-core machine: L1 48K and L2 2M private, L3 24M shared; the in-place sweep's total GB/s
# with 1 and 2 cores busy per size per core; peak 50 GFlop/s per core (shared with the labs' tests).
CEIL = {
    **json.loads((Path(__file__).parent / "data" / "ceilings-test-cpu.json").read_text()),
    "format": ceilings.FORMAT,
}


BASE = json.loads((Path(__file__).parent / "data" / "run-record.json").read_text())


def ring_record(block: int, tile: int | None, ranks: int = 2, threads: int = 1, total: float = 1.0, comm=0.0):
    """A ring run's record as the proxy writes it (a real record's frame): K=8 passes, 10
    iterations, one update per element and pass."""
    K_, N = 8, 10
    per_rank = {
        "flops": threads * block / 8 * K_ * 2 * N,
        "bytes": threads * block * 2 * K_ * N,
        "memory_bytes": threads * block * 2 * N,
    }
    work = {k: v * ranks for k, v in per_rank.items()} | {
        "rank_max": per_rank,
        "footprint_bytes": (threads + 1) * block,
        "working_set_bytes": tile or block,
        "seconds": total - comm,
        "what": "",
    }
    rec = copy.deepcopy(BASE)
    rec["size"]["block_bytes"] = block
    rec["layout"].update(ranks_per_node=ranks, threads=threads, ranks=ranks, workers=ranks * threads)
    mode = "tiled" if tile else ("hybrid" if threads > 1 else "flat")
    rec["variant"].update(mode=mode, threads=threads, tile_bytes=tile or 0)
    rec["time"] = {"total": total, "compute": total - comm, "comm": comm}
    rec["work"] = {"compute": work}
    rec["driver"]["run_id"] = uuid.uuid4().hex  # each its own run
    return rec


def test_the_curve_interpolates_on_a_log_scale_and_holds_its_ends():
    assert ceilings.bandwidth(CEIL, 256 * K, 2) == 200
    assert ceilings.bandwidth(CEIL, 1 * K, 1) == 200  # below the smallest size: its figure
    assert ceilings.bandwidth(CEIL, 8 << 30, 2) == 40  # beyond the largest: its figure
    between = ceilings.bandwidth(CEIL, 1 * M, 1)  # halfway between 256K and 4M on a log scale
    assert between == pytest.approx(75.0)


def test_a_curves_spread_at_a_measured_size_is_that_sizes_own():
    # 16M measured wide (its runs 50 to 150, median 100), 64M narrow (54 to 66, median 60).
    curve = [
        {"bytes": 16 * M, "gbs": [{"cores": 1, "median": 100, "min": 50, "max": 150}]},
        {"bytes": 64 * M, "gbs": [{"cores": 1, "median": 60, "min": 54, "max": 66}]},
    ]
    assert ceilings.spread_on_curve(curve, "gbs", 64 * M, 1) == pytest.approx(0.1)  # 64M's alone
    assert ceilings.spread_on_curve(curve, "gbs", 16 * M, 1) == pytest.approx(0.5)
    assert ceilings.spread_on_curve(curve, "gbs", 32 * M, 1) == pytest.approx(0.5)  # between: the larger
    assert ceilings.spread_on_curve(curve, "gbs", 1 << 30, 1) == pytest.approx(0.1)  # beyond: the end's


def test_a_shared_level_splits_over_the_busy_cores():
    assert ceilings.level_of(CEIL, 1 * M, 2) == "L2"
    assert ceilings.level_of(CEIL, 16 * M, 1) == "L3"
    assert ceilings.level_of(CEIL, 16 * M, 2) == "memory"  # 24M shared by 2 cores: 12M each
    assert ceilings.level_of(CEIL, 16 * M, 2, owners=2) == "L3"  # a rank with both cores


def test_levels_are_named_by_the_level_each_step_matched_so_a_missed_l1_moves_no_name():
    """A VM whose L1 step the stride probe missed: its steps at 512K and 8M are its L2 (private)
    and its L3 (shared), as the cache profile matched them to hwloc's, not an "L1" and a private
    "L2"; a step matched to nothing takes the name after the one before it."""
    l2 = {"fits": 512 * K, "spills": 1 * M}
    l3 = {"fits": 8 * M, "spills": 24 * M}
    far = {"fits": 64 * M, "spills": 128 * M}
    rows = [{"level": "l1d", "step": None}, {"level": "l2", "step": l2}, {"level": "l3", "step": l3}]
    assert ceilings.levels({"steps": [l3, l2], "levels": rows}) == [
        {"name": "L2", "bytes": 512 * K, "shared": False},
        {"name": "L3", "bytes": 8 * M, "shared": True},
    ]
    assert [lv["name"] for lv in ceilings.levels({"steps": [l2, far, l3], "levels": rows})] == ["L2", "L3", "L4"]
    # Nothing matched (a profile without its rows): in order, as before.
    assert [lv["name"] for lv in ceilings.levels({"steps": [l2, l3]})] == ["L1", "L2"]
    # Nothing measured: hwloc's sizes.
    assert ceilings.levels({"hwloc": {"l1d": 32 * K, "l2": 1 * M, "l3": 32 * M}})[2] == {
        "name": "L3",
        "bytes": 32 * M,
        "shared": True,
    }


def test_an_untiled_block_that_spills_is_bound_by_memory_and_its_tile_by_l2():
    untiled = roofline.predict(ring_record(64 * M, None), CEIL)
    tiled = roofline.predict(ring_record(64 * M, 256 * K), CEIL)
    assert untiled["binding"] == "memory" and tiled["binding"] == "L2"
    # Untiled: every pass's bytes from memory: the compulsory ones at the rate of a sweep of the
    # rank's footprint (two blocks: 128M, 23.75 GB/s per core interpolated), the other passes' at
    # the 64M block's 25 GB/s per core.
    per_rank_bytes = 64 * M * 2 * 8 * 10
    compulsory = 64 * M * 2 * 10
    assert ceilings.bandwidth(CEIL, 128 * M, 2) == pytest.approx(47.5)
    expected = compulsory / 23.75e9 + (per_rank_bytes - compulsory) / 25e9
    assert untiled["predicted"] == pytest.approx(expected)
    # Tiled: the compulsory bytes at memory's rate, the other 7 passes at 100 GB/s per core (L2).
    # The larger names the binding ceiling; one core does both in turn, so their times add.
    on_memory, on_l2 = compulsory / 23.75e9, (per_rank_bytes - compulsory) / 100e9
    assert on_l2 > on_memory
    assert tiled["phases"]["compute"]["times"]["memory"] == pytest.approx(on_memory)
    assert tiled["predicted"] == pytest.approx(on_memory + on_l2)
    # The intensity drawn is flops over the bytes the model sends to memory: the tile moves it.
    assert tiled["intensity"] == pytest.approx(8 * untiled["intensity"])


def test_what_was_measured_outside_the_declared_phases_is_added_as_measured():
    rec = ring_record(64 * M, 256 * K, total=2.0, comm=0.5)
    pred = roofline.predict(rec, CEIL)
    assert pred["outside"] == pytest.approx(0.5)
    assert pred["predicted"] == pytest.approx(pred["phases"]["compute"]["seconds"] + 0.5)


def test_a_compute_bound_phase_is_named_compute():
    rec = ring_record(16 * K, None, ranks=1)
    rec["work"]["compute"]["rank_max"]["flops"] *= 1000
    pred = roofline.predict(rec, CEIL)
    assert pred["binding"] == "compute"
    # The loads overlap the arithmetic: the phase takes the compute time alone.
    times = pred["phases"]["compute"]["times"]
    assert pred["phases"]["compute"]["seconds"] == pytest.approx(times["compute"])
    assert sum(times.values()) > times["compute"]


def test_points_take_the_median_of_repeats_and_skip_failed_runs():
    recs = [ring_record(64 * M, None, total=t) for t in (1.0, 3.0, 2.0)]
    recs.append({**ring_record(64 * M, None, total=9.0), "status": "failed"})
    (p,) = roofline.points(recs, CEIL)
    assert p["runs"] == 3 and p["median"] == 2.0 and p["spread"] == pytest.approx(1.0)
    assert p["ratio"] == pytest.approx(p["predicted"] / 2.0)


def test_phases_of_one_kind_are_grouped_measured_beside_predicted(tmp_path, fixed_ceilings, capsys):
    # A ring record with two levels of each of two phases, as MG names them, and 0.1 s outside.
    rec = ring_record(64 * M, None, total=1.0)
    w = rec["work"]["compute"]
    rec["work"] = {
        "L8.smooth": {**w, "seconds": 0.4},
        "L7.smooth": {**w, "seconds": 0.1},
        "L8.residual": {**w, "seconds": 0.3},
        "L7.residual": {**w, "seconds": 0.1},
    }
    (p,) = roofline.points([rec], CEIL)
    rows = roofline.phase_groups(p)
    assert [r["phase"] for r in rows] == ["smooth", "residual", "outside"]
    each = p["phases"]["L8.smooth"]["seconds"]
    assert rows[0]["measured"] == pytest.approx(0.5) and rows[0]["predicted"] == pytest.approx(2 * each)
    assert rows[1]["measured"] == pytest.approx(0.4) and rows[0]["binding"] == "memory"
    assert rows[2] == {
        "phase": "outside",
        "measured": pytest.approx(0.1),
        "predicted": pytest.approx(0.1),
        "binding": "measured",
    }
    # The phases' rows add up to the configuration's prediction and to the run's time.
    assert sum(r["predicted"] for r in rows) == pytest.approx(p["predicted"])
    assert sum(r["measured"] for r in rows) == pytest.approx(p["median"])
    # A phase named by its short description (FT's steps), a long one left to the record.
    rec["work"]["L8.smooth"]["what"] = "x-FFT"
    rec["work"]["L8.residual"]["what"] = "every array of the sweep read or written once per call, halos included"
    p = roofline.points([rec], CEIL)[0]
    assert [r["phase"] for r in roofline.phase_groups(p)][:2] == ["smooth", "residual"]
    rec["work"] = {"F1": {**w, "seconds": 0.5, "what": "x-FFT"}, "F2": {**w, "seconds": 0.4, "what": "y" * 80}}
    p = roofline.points([rec], CEIL)[0]
    assert [r["phase"] for r in roofline.phase_groups(p)] == ["F1 x-FFT", "F2", "outside"]
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    assert cli.main(["roofline", str(path), "--phases", "--plot", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr().out
    assert "per phase" in out and "F1 x-FFT" in out and "outside" in out


def test_kendall_needs_three_points_per_app():
    recs = [
        ring_record(64 * M, None, total=1.0),
        ring_record(64 * M, 256 * K, total=0.4),
        ring_record(64 * M, None, threads=2, ranks=1, total=0.9),
    ]
    pts = roofline.points(recs, CEIL)
    assert len(pts) == 3
    assert ordering.kendall_per_app(pts[:2]) == {"ring": None}
    assert ordering.kendall_per_app(pts)["ring"] is not None


@pytest.fixture
def fixed_ceilings(monkeypatch):
    monkeypatch.setattr(ceilprobe, "here", lambda say, remeasure=False: CEIL)


def test_pxq_roofline_places_runs_and_draws_a_labelled_figure(tmp_path, fixed_ceilings, saved_figures, capsys):
    path = tmp_path / "ring.jsonl"
    runs = [ring_record(64 * M, None, total=1.0), ring_record(64 * M, 256 * K, total=0.4)]
    integer = ring_record(64 * M, None, total=1.0)
    integer["app"], integer["work"]["compute"]["flops"] = "is", 0.0  # no flops: in the table, not drawn
    integer["work"]["compute"]["rank_max"]["flops"] = 0.0
    runs.append(integer)
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr().out
    assert "memory" in out and "L2" in out and "predicted within 25%" in out
    assert (tmp_path / "r.png").exists()
    (fig,) = saved_figures
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "intensity" in ax.get_xlabel() and "GFlop/s" in ax.get_ylabel()
    assert "test CPU" in ax.get_title() and "[" not in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "untiled -> tiled" in legend and "ring" in legend
    labels = [t.get_text() for t in ax.texts]
    assert any("memory" in t and "2 core(s)" in t for t in labels), labels
    assert any(a.arrow_patch is not None for a in ax.texts if hasattr(a, "arrow_patch")), "no untiled -> tiled arrow"
    assert any("not drawn: is" in t.get_text() for t in fig.texts)
    assert "is 64M" in out
    # IS alone: its rows in the table, and no figure of roofs without a point (it was drawn empty).
    only = tmp_path / "is.jsonl"
    only.write_text(json.dumps(integer) + "\n")
    assert cli.main(["roofline", str(only), "--plot", str(tmp_path / "is.png")]) == 0
    out = capsys.readouterr().out
    assert "is 64M" in out and "figure: none drawn: no configuration of is has a place" in out
    assert not (tmp_path / "is.png").exists() and len(saved_figures) == 1


def test_roofs_whose_lines_coincide_share_one_label(tmp_path, saved_figures):
    # L2 and L3 4% apart (this VM's 349 and 337 GB/s) share a label; L1 and memory keep theirs.
    assert draw._label_groups([("L1", 454.0), ("L2", 349.0), ("L3", 337.0), ("memory", 57.0)]) == [
        (["L1"], [454.0]),
        (["L2", "L3"], [349.0, 337.0]),
        (["memory"], [57.0]),
    ]
    c = {**CEIL, "curve": [{**row, "gbs": rows(30, 50)} for row in CEIL["curve"]]}
    draw.plot(roofline.points([ring_record(64 * M, None, total=1.0)], c), c, tmp_path / "r.png")
    labels = [t.get_text() for t in saved_figures[-1].axes[0].texts]
    # Every level and memory at 30 GB/s alone, 50 with both cores busy: one label per core count.
    assert "L1 50, L2 50, L3 50, memory 50 GB/s (2 core(s))" in labels, labels
    assert "L1 30, L2 30, L3 30, memory 30 GB/s (1 core(s))" in labels, labels
    assert not any(t.startswith(("L2", "L3", "memory")) for t in labels), labels


def test_the_figure_draws_the_flop_ceilings_of_the_access_kinds(tmp_path, saved_figures):
    # A run with a stencil phase and an FFT phase (a ring's record, its phase declared twice).
    rec = ring_record(64 * M, None, total=1.0)
    rec["work"] = {"s": {**rec["work"]["compute"], "kind": "stencil"}, "f": {**rec["work"]["compute"], "kind": "fft"}}
    c = {**CEIL, "kinds": KINDS}
    draw.plot(roofline.points([rec], c), c, tmp_path / "k.png")
    labels = [t.get_text() for t in saved_figures[-1].axes[0].texts]
    # The stencil and FFT rates with both cores busy, in cache (64K) and from memory (64M);
    # the gather's is in bytes, not drawn against flops.
    for text in ("stencil, 64K per core, 2 core(s): 24", "stencil, 64M per core, 2 core(s): 12", "fft, 64M"):
        assert any(t.startswith(text) for t in labels), (text, labels)
    assert not any(t.startswith("gather") for t in labels)
    # Lines a few percent apart (restrict 25 by stencil 24 in cache, 15 by fft 16 from memory):
    # every kind's label in its own place, none written over another.
    c["kinds"] = {
        **KINDS,
        "restrict": [{"bytes": 64 * K, "rate": rows(13, 25)}, {"bytes": 64 * M, "rate": rows(8, 15)}],
    }
    rec["work"]["r"] = {**rec["work"]["s"], "kind": "restrict"}
    draw.plot(roofline.points([rec], c), c, tmp_path / "k.png")
    ax = saved_figures[-1].axes[0]
    kinds = [t for t in ax.texts if t.get_text().startswith(("stencil", "fft", "restrict"))]
    assert len(kinds) == 6
    boxes = [t.get_window_extent() for t in kinds]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), [t.get_text() for t in kinds]
    # A figure of streams alone draws no access kind's ceiling.
    draw.plot(roofline.points([ring_record(64 * M, None, total=1.0)], c), c, tmp_path / "r.png")
    labels = [t.get_text() for t in saved_figures[-1].axes[0].texts]
    assert not any(t.startswith(("stencil", "fft")) for t in labels), labels


def test_pxq_roofline_refuses_runs_without_declared_work(tmp_path, fixed_ceilings, capsys):
    old = ring_record(64 * M, None)
    del old["work"]
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n")
    assert cli.main(["roofline", str(path)]) == 2
    assert "declare no work" in capsys.readouterr().err
    assert cli.main(["roofline", str(tmp_path / "missing.jsonl")]) == 2


def test_runs_or_references_from_another_machine_are_refused(tmp_path, monkeypatch, capsys):
    ctx = BASE["context"]
    here = {**CEIL, "key": ceilings.caches.key(ctx)}
    monkeypatch.setattr(ceilprobe, "here", lambda say, remeasure=False: here)
    ours = [ring_record(64 * M, None, total=1.0), ring_record(64 * M, 256 * K, total=0.4)]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ours))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 0
    capsys.readouterr()
    # Another processor or other cache sizes: never predicted against these ceilings.
    for change in (
        {"cpu_model": "AMD EPYC 9654"},
        {"caches": {**ctx["caches"], "l2": {**ctx["caches"]["l2"], "bytes": 1 << 20}}},
    ):
        theirs = copy.deepcopy(ours[0])
        theirs["context"].update(change, host="node7")
        path.write_text("".join(json.dumps(r) + "\n" for r in [*ours, theirs]))
        assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 2
        err = capsys.readouterr().err
        assert "1 record(s) ran on another machine (host node7" in err and "on the machine that ran them" in err
        assert "Traceback" not in err
    # A drift reference taken on another machine (the bandwidth record is an AMD EPYC's).
    probe = json.loads((Path(__file__).parent / "data" / "bandwidth-record.json").read_text())
    assert drift.is_reference(probe) and probe["context"]["cpu_model"] != ctx["cpu_model"]
    path.write_text("".join(json.dumps(r) + "\n" for r in [*ours, probe]))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 2
    assert "1 record(s) ran on another machine (host vm: AMD EPYC" in capsys.readouterr().err
    # The host's name or the CPUs online alone do not make another machine (identical nodes share
    # ceilings; an affinity mask changes what was used, not the machine).
    same = copy.deepcopy(ours[0])
    same["context"].update(host="node8", logical_cpus=192)
    path.write_text("".join(json.dumps(r) + "\n" for r in [*ours, same]))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 0


def test_ceilings_of_another_machine_or_format_are_measured_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PXQ_CEILINGS", str(tmp_path / "c.json"))
    machine = {"host": "h", "cpu_model": "m", "caches": {}}
    stored = {**CEIL, "key": ceilings.caches.key(machine)}
    assert ceilings.save(stored) == tmp_path / "c.json"
    assert ceilings.load(machine)["cpu_model"] == "test CPU"
    assert ceilings.load({**machine, "host": "other"}) is None
    (tmp_path / "c.json").write_text(json.dumps({**stored, "format": ceilings.FORMAT - 1}))
    assert ceilings.load(machine) is None
    (tmp_path / "c.json").write_text("{ torn")
    assert ceilings.load(machine) is None
    assert not math.isnan(ceilings.bandwidth(stored, 3 * M, 1))


def test_the_tiling_study_names_the_ceilings_its_tiles_moved_the_ring_between(monkeypatch):
    from pxq.studies import tiling

    monkeypatch.setattr(tiling.envinfo, "machine", lambda: {})
    recs = [ring_record(64 * M, None, total=1.0), ring_record(64 * M, 256 * K, total=0.4)]
    monkeypatch.setattr(tiling.ceilings, "load", lambda machine: None)
    (pointer,) = tiling.ceiling_notes(recs)
    assert "pxq roofline" in pointer
    monkeypatch.setattr(tiling.ceilings, "load", lambda machine: CEIL)
    (note,) = tiling.ceiling_notes(recs)
    assert "untiled bound by memory, tiled by L2" in note and "measured 60%" in note, note


def test_virtual_nodes_of_one_machine_share_its_memory_bus():
    """2x1 on virtual nodes (or the emulated cluster): two nodes of one host, so both of its cores
    are busy; on two real hosts, one core on each."""
    rec = ring_record(64 * M, None, ranks=1)
    rec["layout"].update(nodes=2, ranks_per_node=1, ranks=2, observed_nodes=2, virtual_nodes=True)
    assert roofline.cores_used(rec, CEIL) == (2, 2, 1)
    rec["layout"].update(virtual_nodes=False, launcher="cluster")
    assert roofline.cores_used(rec, CEIL) == (2, 2, 1)
    rec["layout"]["launcher"] = "hostfile"
    assert roofline.cores_used(rec, CEIL) == (1, 1, 1)


def test_ceilings_measured_on_a_busy_machine_are_flagged_and_not_kept(tmp_path, monkeypatch, capsys):
    """All cores giving less than one alone is what a loaded machine measures: said, not kept."""
    busy = copy.deepcopy(CEIL)
    busy["peak_gflops"] = rows(50, 39)
    assert ceilings.implausible(CEIL) == []
    (problem,) = ceilings.implausible(busy)
    assert "peak flop rate" in problem and "39.0" in problem
    monkeypatch.setenv("PXQ_CEILINGS", str(tmp_path / "c.json"))
    monkeypatch.setattr(ceilprobe.envinfo, "machine", lambda: {})
    monkeypatch.setattr(ceilprobe, "measure", lambda say: busy)
    assert ceilprobe.here(print, remeasure=True) is busy
    assert not (tmp_path / "c.json").exists()
    monkeypatch.setattr(ceilprobe, "measure", lambda say: CEIL)
    ceilprobe.here(print, remeasure=True)
    assert (tmp_path / "c.json").exists()
    # An access kind's largest size giving less with both cores than with one: flagged too.
    slow = {**CEIL, "kinds": {**KINDS, "gather": [KINDS["gather"][0], {"bytes": 64 * M, "rate": rows(10, 8)}]}}
    assert ceilings.implausible({**CEIL, "kinds": KINDS}) == []
    (problem,) = ceilings.implausible(slow)
    assert problem.startswith("gather at 64M per core: 8.0 in total with 2 cores busy")


def test_an_all_to_all_is_priced_per_rank_and_its_one_rank_copy_is_not_compared():
    # MPI's all-to-all among the node's ranks: 4 GB/s in total with both busy on 64M buffers
    # each (2 per rank), a copy to itself at 20 alone. A rank sending 1 GB takes 0.5 s, however
    # many threads it has (the exchange is the rank's, not split over them).
    a2a = [{"bytes": 64 * K, "rate": rows(30, 16)}, {"bytes": 64 * M, "rate": rows(20, 4)}]
    c = {**CEIL, "kinds": {**KINDS, "alltoall": a2a}}
    sent = phase("alltoall", 0.0, 1e9, 1e9, 64 * M, 64 * M)
    assert roofline.phase_prediction(sent, c, 2, 1)["seconds"] == pytest.approx(0.5)
    assert roofline.phase_prediction(sent, c, 2, 2)["seconds"] == pytest.approx(0.5)
    assert roofline.phase_prediction(sent, c, 2, 1)["binding"] == "alltoall (memory)"
    # Below one core's copy with both busy: what an exchange is, not a disturbed measurement.
    assert ceilings.implausible(c) == []
    # Runs spread over more than their median are flagged for it as for any kind.
    wide = {
        **c,
        "kinds": {
            **c["kinds"],
            "alltoall": [
                a2a[0],
                {"bytes": 64 * M, "rate": [a2a[1]["rate"][0], {"cores": 2, "median": 4, "min": 1, "max": 9}]},
            ],
        },
    }
    (problem,) = ceilings.implausible(wide)
    assert problem.startswith("alltoall at 64M per core: runs spread over more than their median")


def test_a_nearer_level_slower_than_a_farther_one_is_implausible():
    """L1 measured below L2 (a busy moment during the L1 sweep): flagged, with both figures."""
    inverted = copy.deepcopy(CEIL)
    inverted["curve"][0]["gbs"] = rows(60, 400)  # 16K, L1's sweep, alone: 60 GB/s against L2's 100
    (problem,) = ceilings.implausible(inverted)
    assert problem.startswith("L1 at ") and "below L2's" in problem and "a nearer level cannot be slower" in problem
    near = copy.deepcopy(CEIL)
    near["curve"][0]["gbs"] = rows(95, 400)  # within the slack: noise, not flagged
    assert ceilings.implausible(near) == []
    loaded = {**CEIL, "busy_before": 0.8}  # other work kept 80% of the cores busy: not kept
    (problem,) = ceilings.implausible(loaded)
    assert "80% busy" in problem
    assert ceilings.implausible({**CEIL, "busy_before": 0.05}) == []


def test_lab4_names_the_roof_each_loop_runs_under():
    def result(seconds: float, tile: int, span: int | None = None) -> dict:
        touched = (tile or 32 * M) if span is None else span  # what each update() call covered
        return {
            "compute_s": seconds,
            "block_bytes": 32 * M,
            "tile_bytes": tile,
            "largest_span_bytes": touched,
            "passes": 8,
            "iterations": 4,
        }

    runs = {
        "untiled (the harness's loop)": [result(s, 0) for s in (0.9, 1.0, 1.1)],
        "yours": [result(s, 256 * K) for s in (0.3, 0.25, 0.35)],
    }
    # The untiled starter asked for 256K tiles touches the whole block: the roof is the block's.
    starter = {**runs, "yours": [result(s, 256 * K, 32 * M) for s in (0.9, 1.0, 1.1)]}
    assert tiling.ceiling_note(CEIL, starter, 2).endswith(
        "both loops sweep from memory: the tiles did not change the roof"
    )
    note = tiling.ceiling_note(CEIL, runs, 2)
    # The untiled median: 32 MiB read and written by 8 passes x 4 iterations in 1.0 s, against the
    # test curve's 32M sweep with 2 cores busy (beyond L3's 12M share each: memory), per core.
    moved = 2 * 32 * M * 8 * 4 / 1e9
    untiled_roof = ceilings.bandwidth(CEIL, 32 * M, 2) / 2
    untiled = f"untiled {moved:.1f} GB/s per rank, {moved / untiled_roof:.0%}"
    assert f"{untiled} of the 32M sweep's {untiled_roof:.1f} (memory)" in note
    tiled_roof = ceilings.bandwidth(CEIL, 256 * K, 2) / 2
    tiled = f"yours {moved / 0.3:.1f} GB/s per rank, {moved / 0.3 / tiled_roof:.0%}"
    assert f"{tiled} of the 256K sweep's {tiled_roof:.1f} (L2)" in note
    assert note.endswith("the tiles moved the ring from the memory roof to the L2 roof")
    # A tile as large as the block sweeps from where the block does: no move is claimed.
    same = {k: [{**r, "tile_bytes": 32 * M, "largest_span_bytes": 32 * M} for r in v] for k, v in runs.items()}
    assert tiling.ceiling_note(CEIL, same, 2).endswith(
        "both loops sweep from memory: the tiles did not change the roof"
    )
    assert "./pxq roofline measures" in tiling.ceiling_note(None, runs, 2)


def test_the_contention_study_shows_the_shared_memory_roof():
    note = contention.memory_roof_note(CEIL, 2)
    # The test curve's largest size: 25 GB/s with one core, 40 in total with two (20 each, 80%).
    assert "1 core(s) 25.0 (25.0-25.0) in total, 25.0 each (100% of one alone)" in note
    assert "2 core(s) 40.0 (40.0-40.0) in total, 20.0 each (80% of one alone)" in note
    assert "3 core(s)" not in contention.memory_roof_note(CEIL, 8)  # only the cores measured
    assert "./pxq roofline measures" in contention.memory_roof_note(None, 2)


# Access kinds on the test machine: a gather curve (declared GB/s) and a stencil and FFT curve
# (GFlop/s), each at 64K and 64M per core, with 1 and 2 cores busy.
KINDS = {
    "gather": [{"bytes": 64 * K, "rate": rows(20, 40)}, {"bytes": 64 * M, "rate": rows(10, 16)}],
    "stencil": [{"bytes": 64 * K, "rate": rows(12, 24)}, {"bytes": 64 * M, "rate": rows(8, 12)}],
    "fft": [{"bytes": 64 * K, "rate": rows(16, 32)}, {"bytes": 64 * M, "rate": rows(10, 16)}],
}


def phase(kind: str, flops: float, core: float, memory: float, footprint: float, working_set: float) -> dict:
    return {
        "kind": kind,
        "rank_max": {"flops": flops, "bytes": core, "memory_bytes": memory},
        "footprint_bytes": footprint,
        "working_set_bytes": working_set,
    }


def test_the_kind_curves_interpolate_and_are_absent_without_a_measurement():
    c = {**CEIL, "kinds": KINDS}
    assert ceilings.kind_rate(c, "gather", 64 * K, 1) == 20
    assert ceilings.kind_rate(c, "gather", 1024 * M, 2) == 16  # beyond the curve: its end
    # 2M per core is halfway (on a log scale) from 64K to 64M.
    assert ceilings.kind_rate(c, "stencil", 2 * M, 2) == pytest.approx((24 + 12) / 2)
    assert ceilings.kind_rate(CEIL, "gather", 64 * K, 1) is None
    assert ceilings.kind_rate(c, "update", 64 * K, 1) is None


def test_a_phase_of_an_access_kind_runs_at_its_kinds_ceiling_and_names_it():
    c = {**CEIL, "kinds": KINDS}
    # A gather phase: 8 GB declared at the cores over a 64M footprint with both cores busy:
    # 16 GB/s in total, 8 per core.
    g = roofline.phase_prediction(phase("gather", 1e9, 8e9, 4e9, 64 * M, 112 * K), c, 2, 1)
    assert g["seconds"] == pytest.approx(8e9 / 8e9)
    assert g["binding"] == "gather (memory)"
    assert g["memory_bytes"] == 4e9  # the footprint spills its share of L3: its compulsory bytes
    # The same phase without a gather curve: a stream (its bytes at the stream curve), faster.
    assert roofline.phase_prediction(phase("gather", 1e9, 8e9, 4e9, 64 * M, 112 * K), CEIL, 2, 1)["seconds"] < 1.0
    # A stencil of the kind's own flops per byte (the residual's 1.6 B from memory a flop) runs
    # at its flop rate for its footprint: 12e9 flops at 6 GFlop/s per core.
    s = roofline.phase_prediction(phase("stencil", 12e9, 19.2e9, 19.2e9, 64 * M, 64 * M), c, 2, 1)
    assert s["seconds"] == pytest.approx(2.0)
    assert s["binding"] == "stencil (memory)"
    # FFTs of the strided lines of a 64M grid (8 GFlop/s per core with both busy), whatever
    # their batch: the kind's kernel gathers and scatters its lines as FT does.
    f = roofline.phase_prediction(phase("fft", 16e9, 64e9, 12.8e9, 64 * M, 64 * K), c, 2, 1)
    assert f["times"] == {
        "compute": pytest.approx(16e9 / 50e9),
        "fft (memory)": pytest.approx(2.0),
        "memory": pytest.approx(12.8e9 / 25e9),  # its compulsory bytes at the stream's roof: not binding
    }
    assert f["seconds"] == pytest.approx(2.0) and f["binding"] == "fft (memory)"
    assert f["memory_bytes"] == 12.8e9
    # A stencil phase with few flops per byte whose kind runs as fast on 64M as in cache (so its
    # kernel says nothing of waiting for memory): its compulsory 50 GB at the stream's 25 GB/s
    # per core outlast 1.2e9 flops at 12.
    flat = {
        **c,
        "kinds": {"stencil": [{"bytes": 64 * K, "rate": rows(12, 24)}, {"bytes": 64 * M, "rate": rows(12, 24)}]},
    }
    lean = roofline.phase_prediction(phase("stencil", 1.2e9, 50e9, 50e9, 64 * M, 64 * M), flat, 2, 1)
    assert lean["binding"] == "memory" and lean["seconds"] == pytest.approx(2.0)
    # A grid that fits in L2 runs at the kind's in-cache rate (16 per core at 64K).
    f = roofline.phase_prediction(phase("fft", 16e9, 9.6e9, 3.2e9, 64 * K, 64 * K), c, 2, 1)
    assert f["seconds"] == pytest.approx(1.0) and f["binding"] == "fft (L2)"
    # Two threads of one rank share its phase: each core does half, at the per-core rate.
    s2 = roofline.phase_prediction(phase("stencil", 12e9, 19.2e9, 19.2e9, 128 * M, 128 * M), c, 2, 2)
    assert s2["seconds"] == pytest.approx(1.0)


def test_a_phase_fusing_two_kinds_takes_each_share_at_its_kinds_rate():
    c = {
        **CEIL,
        "kinds": {**KINDS, "restrict": [{"bytes": 64 * K, "rate": rows(8, 16)}, {"bytes": 64 * M, "rate": rows(2, 3)}]},
    }
    # MG's residual fused with the restriction: 12e9 flops over a 64M footprint with both cores
    # busy, a quarter of them the restriction's, the rest the stencil's, each at its kind's pace
    # in cache (8 and 12 GFlop/s per core), and the 19.2 GB the pass streams at what a byte costs
    # the stencil's kernel on 64M (12 GFlop/s in cache, 6 on 64M at 1.6 B a flop: 1 s per 19.2 GB).
    fused = {**phase("stencil", 12e9, 19.2e9, 19.2e9, 64 * M, 64 * M), "also": {"kind": "restrict", "share": 0.25}}
    f = roofline.phase_prediction(fused, c, 2, 1)
    assert f["seconds"] == pytest.approx(9e9 / 12e9 + 3e9 / 8e9 + 1.0)
    assert f["binding"] == "stencil (memory)"
    # Without the restriction's curve (older ceilings), the whole phase at the stencil's rate.
    assert roofline.phase_prediction(fused, {**CEIL, "kinds": KINDS}, 2, 1)["seconds"] == pytest.approx(2.0)
    # A share of a kind in other units (a gather's bytes against a stencil's flops) is not mixed in.
    odd = {**fused, "also": {"kind": "gather", "share": 0.25}}
    assert roofline.phase_prediction(odd, c, 2, 1)["seconds"] == pytest.approx(2.0)


def test_a_gflops_kind_is_arithmetic_in_cache_plus_the_bytes_its_kernel_waits_for(monkeypatch):
    c = {**CEIL, "kinds": KINDS}
    # The stencil's kernel: 12 GFlop/s per core in cache, 6 on 64M, at 1.6 B from memory a flop:
    # a flop takes 1/12 ns in the core and each byte it streams 1/19.2 ns on top.
    assert roofline.kind_split(c, "stencil", 64 * M, 2) == (pytest.approx(1 / 12e9), pytest.approx(1 / 19.2e9))
    assert roofline.kind_split(c, "stencil", 64 * K, 2) == (pytest.approx(1 / 12e9), 0.0)
    # Two sweeps fused into one pass (MG's residual and smoothing): twice the plain sweep's flops
    # over the same bytes take 2 s of arithmetic and 1 s of waiting, not twice the plain 2 s.
    plain = roofline.phase_prediction(phase("stencil", 12e9, 19.2e9, 19.2e9, 64 * M, 64 * M), c, 2, 1)
    fused = roofline.phase_prediction(phase("stencil", 24e9, 19.2e9, 19.2e9, 64 * M, 64 * M), c, 2, 1)
    assert plain["seconds"] == pytest.approx(2.0) and fused["seconds"] == pytest.approx(3.0)
    # In cache, nothing to wait for: the fused pass at the in-cache rate.
    cached = roofline.phase_prediction(phase("stencil", 24e9, 19.2e9, 19.2e9, 64 * K, 64 * K), c, 2, 1)
    assert cached["seconds"] == pytest.approx(2.0)
    # A curve faster on 64M than in cache (a noisy measurement): the size's own rate, no waiting.
    odd = {**c, "kinds": {"stencil": [{"bytes": 64 * K, "rate": rows(6, 12)}, {"bytes": 64 * M, "rate": rows(8, 16)}]}}
    assert roofline.kind_split(odd, "stencil", 64 * M, 2) == (pytest.approx(1 / 8e9), 0.0)
    # A registry without the kernel's bytes per flop (an older build): the whole at the kind's rate.
    monkeypatch.setattr(
        ceilings, "kinds", lambda: {"stencil": {"unit": "gflops", "size": "footprint", "memory_bytes_per_flop": 0.0}}
    )
    assert roofline.phase_prediction(phase("stencil", 24e9, 19.2e9, 19.2e9, 64 * M, 64 * M), c, 2, 1)[
        "seconds"
    ] == pytest.approx(4.0)


def test_the_registry_gives_each_gflops_kind_its_kernels_bytes_from_memory_per_flop():
    kinds = ceilings.kinds()
    # The residual (3 arrays, 15 flops a point), the restriction (9 B, 4 flops a fine point),
    # the interpolation (17 B, 3 flops), the FFT (32 B from memory, 5 log2 256 flops a point).
    assert kinds["stencil"]["memory_bytes_per_flop"] == pytest.approx(24 / 15)
    assert kinds["restrict"]["memory_bytes_per_flop"] == pytest.approx(9 / 4)
    assert kinds["interp"]["memory_bytes_per_flop"] == pytest.approx(17 / 3)
    assert kinds["fft"]["memory_bytes_per_flop"] == pytest.approx(32 / 40)
    assert all(k["memory_bytes_per_flop"] == 0.0 for k in kinds.values() if k["unit"] == "gbs")


def test_a_tiles_edge_bytes_are_priced_at_the_stream_on_top_of_the_kinds_time():
    c = {**CEIL, "kinds": KINDS}
    # A stencil phase at the kind's 6 GFlop/s per core (2 s) whose tile moves 5 GB again at the
    # edges of its blocks: those at the stream's 25 GB/s per core for a 64M footprint, 0.2 s more.
    plain = phase("stencil", 12e9, 19.2e9, 19.2e9, 64 * M, 64 * M)
    more = {"bytes": 24.2e9, "memory_bytes": 24.2e9, "edge_bytes": 5e9}  # its bytes count its edges
    edged = {**plain, "rank_max": {**plain["rank_max"], **more}, "edge_bytes": 10e9}
    assert roofline.phase_prediction(plain, c, 2, 1)["seconds"] == pytest.approx(2.0)
    e = roofline.phase_prediction(edged, c, 2, 1)
    assert e["seconds"] == pytest.approx(2.2) and e["binding"] == "stencil (memory)"


def test_row_starts_are_priced_from_the_two_window_kinds_on_top_of_the_kinds_time():
    # With 2 cores busy on 64M each, a row of the window kind (8 entries: 176 B) takes 18 ns a
    # core and one of window64 (64 entries: 1296 B) 74 ns: so an entry costs 1 ns and a row's
    # start 10 ns. Rates are totals over the busy cores.
    two = {"window": 2 * 176 / 18, "window64": 2 * 1296 / 74}
    windows = {
        k: [{"bytes": 64 * K, "rate": rows(r, r)}, {"bytes": 64 * M, "rate": rows(r, r)}] for k, r in two.items()
    }
    c = {**CEIL, "kinds": {**KINDS, **windows}}
    entry, start = roofline.window_costs(c, 64 * M, 2)
    assert (entry, start) == (pytest.approx(1e-9), pytest.approx(10e-9))
    # A gather phase at the gather's 8 GB/s per core (1 s for 8 GB) whose kernel starts 1e7 rows:
    # 0.1 s more, split over the rank's threads.
    plain = phase("gather", 1e9, 8e9, 8e9, 64 * M, 64 * M)
    visited = {**plain, "rank_max": {**plain["rank_max"], "row_visits": 1e7}, "row_visits": 2e7}
    assert roofline.phase_prediction(plain, c, 2, 1)["seconds"] == pytest.approx(1.0)
    v = roofline.phase_prediction(visited, c, 2, 1)
    assert v["seconds"] == pytest.approx(1.1) and v["binding"] == "gather (memory)"
    both = {**visited, "footprint_bytes": 128 * M}  # two threads, 64M each
    assert roofline.phase_prediction(both, c, 2, 2)["seconds"] == pytest.approx(0.5 + 0.05)
    # Ceilings without both window curves (kept before they were measured) price no starts.
    one = {**CEIL, "kinds": {**KINDS, "window": windows["window"]}}
    assert roofline.window_costs(one, 64 * M, 2) is None
    assert roofline.phase_prediction(visited, one, 2, 1)["seconds"] == pytest.approx(1.0)
    # A window that runs as fast per row as its entries alone allow: no start priced.
    flat = {**c, "kinds": {**c["kinds"], "window": [{"bytes": 64 * K, "rate": rows(2 * 176 / 8, 2 * 176 / 8)}]}}
    assert roofline.window_costs(flat, 64 * M, 2)[1] == 0.0


def test_the_access_kinds_are_measured_from_64k_to_past_four_times_the_last_level(monkeypatch):
    monkeypatch.setattr(ceilprobe.caches, "available_memory", lambda: 64 << 30)
    assert ceilprobe.kind_sizes({"last_level_bytes": 16 * M}, 2) == [64 * K * 4**i for i in range(6)]  # to 64M
    assert ceilprobe.kind_sizes({"last_level_bytes": 48 * M}, 2)[-1] == 256 * M  # past 4 x 48M
    assert ceilprobe.sizes({"last_level_bytes": 16 * M}, 2)[-1] == 1024 * M  # the stream curve: at least 1G
    monkeypatch.setattr(ceilprobe.caches, "available_memory", lambda: 512 * M)
    assert ceilprobe.kind_sizes({"last_level_bytes": 16 * M}, 2)[-1] == 64 * M  # a quarter of 512M over 2 cores


def test_a_pair_is_ordered_by_its_runs_only_when_they_tell_it_apart():
    # Three runs each: ranges that do not overlap (no rank-sum test reaches 5% with 3 against 3).
    assert ordering.ordered_by_runs([1.0, 1.1, 1.2], [1.3, 1.4, 1.5])
    assert not ordering.ordered_by_runs([1.0, 1.1, 1.35], [1.3, 1.4, 1.5])
    # Seven each: a rank-sum test, which one outlier does not defeat and a shift within the noise
    # does not pass.
    fast, slow = [1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.6], [1.1, 1.11, 1.12, 1.13, 1.14, 1.15, 1.16]
    assert ordering.ordered_by_runs(fast, slow)
    assert not ordering.ordered_by_runs(fast, [t + 0.01 for t in fast])
    # Per app: the pairs the runs order, and how many the prediction orders the same way.
    pts = [
        {"app": "ring", "times": fast, "median": 1.03, "predicted": 1.0},
        {"app": "ring", "times": slow, "median": 1.13, "predicted": 0.9},  # predicted the wrong way
        {"app": "ring", "times": [t + 0.001 for t in fast], "median": 1.031, "predicted": 0.5},
    ]
    pairs = ordering.pairs_per_app(pts)["ring"]
    assert (pairs["ordered"], pairs["agree"]) == (2, 1)
    assert pairs["unordered"] == [(pts[0], pts[2])]
    # One pair concordant, one discordant, one tied by the runs: tau-b 0 over 2 by 3 pairs.
    assert pairs["tau_b"] == pytest.approx(0.0)


def test_tau_b_counts_a_pair_the_runs_do_not_order_as_a_tie():
    from scipy.stats import kendalltau

    fast, slow = [1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06], [1.2, 1.21, 1.22, 1.23, 1.24, 1.25, 1.26]
    # Two pairs the runs cannot tell apart, the prediction ordering all four strictly: the medians
    # alone put the first pair against the prediction (tau 0.67), the runs measured a tie.
    pts = [
        {"app": "cg", "times": [t + 0.001 for t in fast], "median": 1.031, "predicted": 1.0},
        {"app": "cg", "times": fast, "median": 1.03, "predicted": 1.1},
        {"app": "cg", "times": slow, "median": 1.23, "predicted": 1.2},
        {"app": "cg", "times": [t + 0.001 for t in slow], "median": 1.231, "predicted": 1.3},
    ]
    assert ordering.kendall_per_app(pts)["cg"] == pytest.approx(2 / 3)
    pairs = ordering.pairs_per_app(pts)["cg"]
    assert pairs["tau_b"] == pytest.approx(kendalltau([1, 2, 3, 4], [1, 1, 2, 2]).statistic)
    assert pairs["tau_b"] == pytest.approx(4 / math.sqrt(6 * 4))
    # The same pairs predicted against the runs' order: -1; nothing ordered by the runs: not judged.
    flipped = [dict(p, predicted=-p["predicted"]) for p in pts]
    assert ordering.pairs_per_app(flipped)["cg"]["tau_b"] == pytest.approx(-4 / math.sqrt(6 * 4))
    same = [dict(p, times=fast) for p in pts]
    assert ordering.pairs_per_app(same)["cg"]["tau_b"] is None
    # As `pxq roofline` says them: tau-b first, the medians' tau beside it, or why tau-b is not judged.
    pts = [dict(p, layout="1x2x1", mode="flat", tile=None, runs=7) for p in pts]
    said = roofview.order_text(2 / 3, ordering.pairs_per_app(pts)["cg"])
    assert said.startswith("Kendall's tau-b 0.82 against the order the runs measure")
    assert "tau 0.67 on the medians" in said
    assert "of the 4 pair(s) the runs order, 4 predicted in that order" in said and "rank-sum p >= 0.05" in said
    same = [dict(p, times=fast) for p in pts]
    said = roofview.order_text(2 / 3, ordering.pairs_per_app(same)["cg"])
    assert said.startswith("Kendall's tau-b not judged: the runs order no pair")
    assert ordering.tau_b_by_runs(pts[:2]) is None


def test_runs_of_one_sweep_order_a_pair_on_their_paired_rounds():
    """A machine that drifts 3x between rounds hides a 10% difference from any test on the two
    sides' times; paired round by round within the sweep it is ordered, and a pair within its
    noise is a tie (as a settled sweep's "equivalent"), counted so by tau-b."""
    drift_ = [1.0, 2.1, 1.4, 3.0, 1.1, 2.6, 1.7, 1.2]
    jitter = [1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001]

    def point(name, factor, predicted, sweep="s1"):
        times = [t * factor * e for t, e in zip(drift_, jitter[::-1] if name == "c" else jitter)]
        rounds = [(t, (sweep, i, f"{name}{i}")) for i, t in enumerate(times)]
        return {
            "app": "cg",
            "times": sorted(times),
            "rounds": rounds,
            "median": sorted(times)[4],
            "predicted": predicted,
        }

    a, b, c = point("a", 1.0, 1.0), point("b", 1.1, 1.2), point("c", 1.0, 0.9)
    assert not ordering.ordered_by_runs(a["times"], b["times"])  # the sides' times alone: a tie
    assert ordering.measured_order(a, b) == (1, True)  # paired: b slower
    assert ordering.measured_order(a, c) == (0, True)  # paired, within the noise: a tie
    pairs = ordering.pairs_per_app([a, b, c])["cg"]
    assert (pairs["ordered"], pairs["agree"], pairs["paired"]) == (2, 2, 3)
    assert pairs["tau_b"] == pytest.approx(2 / math.sqrt(3 * 2))  # a-c tied by the runs, not by the prediction
    other = point("b", 1.1, 1.2, sweep="s2")  # another sweep: its rounds are other moments
    assert ordering.measured_order(a, other) == (0, False)
    said = roofview.order_text(
        0.33, ordering.pairs_per_app([dict(p, layout="1x2x1", mode="flat", tile=None, runs=8) for p in (a, b, c)])["cg"]
    )
    assert "3 of 3 pair(s) judged on paired rounds of one sweep" in said
    assert "paired rounds show them equivalent within +-5%" in said


def test_a_pair_its_paired_rounds_leave_unsettled_is_in_neither_ranking():
    """Paired rounds that neither order a pair nor show it equivalent within +-5% (a spread of
    +-30% over 6 rounds) leave it unsettled: tau-b is taken over the settled pairs alone and the
    line names the unsettled one, instead of counting the noise as a tie against the prediction."""
    noise = [1.0, 1.3, 0.75, 1.25, 0.8, 1.02]

    def point(name, ratios, predicted):
        rounds = [(r, ("s1", i, f"{name}{i}")) for i, r in enumerate(ratios)]
        times = sorted(r for r, _ in rounds)
        return {
            "app": "cg",
            "times": times,
            "rounds": rounds,
            "median": statistics.median(times),
            "predicted": predicted,
        }

    a = point("a", [1.0] * 6, 1.0)
    b = point("b", [2.0 * (1 + 0.002 * i) for i in range(6)], 2.0)  # clearly slower
    c = point("c", [3.0 * (1 - 0.002 * i) for i in range(6)], 3.0)  # slower still
    d = point("d", noise, 0.9)  # against a: unsettled
    assert ordering.measured_order(a, d) == (None, True)
    assert ordering.measured_order(a, b) == (1, True) and ordering.measured_order(b, c) == (1, True)
    pairs = ordering.pairs_per_app([a, b, c, d])["cg"]
    assert pairs["unsettled"] == [(a, d)]
    # Five settled pairs, all predicted in their order: tau-b 1 (counting a-d as a tie would give 0.91).
    assert pairs["tau_b"] == pytest.approx(1.0)
    said = roofview.order_text(
        1.0,
        ordering.pairs_per_app(
            [
                dict(p, layout="1x2x1", mode=m, tile=None, runs=6)
                for p, m in zip((a, b, c, d), ("flat", "hybrid", "tiled", "x"))
            ]
        )["cg"],
    )
    assert "unsettled on their paired rounds" in said and "left out of tau-b" in said and "1x2x1 flat / 1x2x1 x" in said


def test_every_run_says_how_close_it_came_to_the_physical_roof():
    """The physical roof: the declared phases' flops at the peak rate or their compulsory bytes at
    the memory bandwidth with the run's cores busy, whichever is longer, over the time they took.
    The untiled ring streams every pass from memory, so it reaches an eighth of it; a run faster
    than the limits allow is above 100% (data that stayed in a cache)."""
    compulsory = 64 * M * 2 * 10  # per rank: one read and one write of the block per iteration
    memory_per_core = 40e9 / 2  # the largest sweep with 2 cores busy: 40 GB/s in total
    roof = compulsory / memory_per_core  # the flops (1/8 flop per byte) take less at 50 GFlop/s
    slow = roofline.predict(ring_record(64 * M, None, total=8 * roof), CEIL)
    assert slow["roof"] == pytest.approx(roof) and slow["of_roof"] == pytest.approx(1 / 8)
    fast = roofline.predict(ring_record(64 * M, 256 * K, total=roof / 2), CEIL)
    assert fast["of_roof"] == pytest.approx(2.0) and fast["of_roof"] > roofline.ROOF_SLACK
    busy = ring_record(16 * K, None, ranks=1, total=1.0)
    busy["work"]["compute"]["rank_max"]["flops"] = 25e9  # half a second at one core's 50 GFlop/s
    assert roofline.predict(busy, CEIL)["of_roof"] == pytest.approx(0.5)


def test_a_tile_that_cannot_pay_is_named_below_the_table(tmp_path):
    """A tile asked for that cuts a buffer already in the cache its share targets (CG's x at class
    A) carries the run's note; the roofline names those runs and why, below its table, and keeps
    nothing else of the record's notes."""
    why = "the buffer it would cut (109.4K) fits in one core's L2 (512K), so tiling cannot cut memory traffic"
    cut = ring_record(256 * K, 16 * K)
    cut["notes"] = ["launcher said 1 node(s), observed 1", roofline.NO_PAY + why]
    plain = ring_record(64 * M, 256 * K)
    plain["notes"] = ["launcher said 1 node(s), observed 1"]
    assert roofline.held(cut)["notes"] == [roofline.NO_PAY + why] and "notes" not in roofline.held(plain)
    pts = roofline.points([roofline.held(cut), roofline.held(plain)], CEIL)
    lines = [line for line in roofview.summary_lines(pts) if line.startswith("tiles that cannot pay here")]
    assert len(lines) == 1 and why in lines[0] and "tiled 16K" in lines[0], lines


def test_a_kokkos_run_and_its_openmp_twin_are_told_apart_in_the_labels():
    one = {"app": "cg", "size": "A", "layout": "1x1x2", "mode": "hybrid", "tile": None, "backend": "openmp"}
    assert roofview.label(one) == "cg A 1x1x2 hybrid"
    assert roofview.label(dict(one, backend="kokkos")) == "cg A 1x1x2 hybrid kokkos"


def test_a_tiled_run_that_tile_auto_left_untiled_is_labelled_so_not_as_a_tile():
    auto_off = {"app": "cg", "size": "A", "layout": "1x2", "mode": "tiled", "tile": 0, "backend": "openmp"}
    assert roofview.label(auto_off) == "cg A 1x2 tiled auto: off"
    assert roofview.label(dict(auto_off, tile=256 * K)) == "cg A 1x2 tiled 256K"
    rec = ring_record(64 * M, 256 * K)
    rec["variant"].update(tile_bytes=0, tile_source="auto:untiled")
    assert roofline.group_key(rec)[3:5] == ("tiled", 0)  # its own group: never a tiled run's


def _bus(totals: list[float], spread: float = 0.02) -> dict:
    """Ceilings whose largest sweep gives these total GB/s with 1..N cores busy (SYNTHETIC: a
    shape to test the detection with, not any machine's measurement)."""
    gbs = [
        {"cores": i + 1, "median": t, "min": t * (1 - spread), "max": t * (1 + spread)} for i, t in enumerate(totals)
    ]
    return {**CEIL, "cores": len(totals), "curve": [*CEIL["curve"][:-1], {"bytes": 1024 * M, "gbs": gbs}]}


def test_the_knee_is_where_the_memory_bus_stops_growing():
    # Synthetic 16-core node: 12 GB/s a core up to 6 cores, then a saturated 72-75 GB/s.
    wide = _bus([12.0 * min(k, 6) + (0.2 * (k - 6) if k > 6 else 0) for k in range(1, 17)])
    assert ceilings.knee(wide) == 6
    assert "saturated at 6 core(s)" in ceilings.knee_text(wide) and "threads" in ceilings.knee_text(wide)
    assert ceilings.knee(_bus([20.0, 21.0, 21.5, 21.0])) == 1  # one core already fills it
    growing = _bus([27.8, 50.6])  # this VM's shape on 2026-11-27: no knee within 2 cores
    assert ceilings.knee(growing) is None
    assert "no knee within 2 core(s)" in ceilings.knee_text(growing) and "1.82x" in ceilings.knee_text(growing)
    # A late core count 30% up, but its range overlapping: noise, not growth; clearly apart: growth.
    assert ceilings.knee(_bus([40.0, 52.0, 41.0], spread=0.2)) == 1
    assert ceilings.knee(_bus([40.0, 52.0, 41.0], spread=0.01)) == 2


# Measured, not synthetic: the in-place update's total GB/s with 1..16 ranks busy on the 16-core
# Intel Xeon node of 2026-12-04 (docs/PERFORMANCE.md, "A 16-core node"), one run a size.
NODE16_256M = [17.5, 34.2, 48.8, 60.4, 71.6, 83.6, 76.6, 83.3, 95.6, 110.6, 105.7, 119.6, 124.7, 129.7, 129.8, 127.8]
NODE16_64M = [20.5, 34.5, 49.4, 64.4, 77.5, 71.4, 81.8, 88.9, 97.4, 102.7, 105.6, 114.4, 114.5, 123.4, 129.3, 129.9]


def test_the_knee_of_a_measured_16_core_node_is_where_its_bus_stops_growing_by_a_tenth():
    """On a real wide curve the bus keeps gaining a few % a core long after each core's share
    has fallen (below 80% of one core's from 4-7 cores): the knee is the core count from which
    every later one adds at most 10%, not where the per-core share first drops."""
    big = _bus(NODE16_256M, spread=0.0)
    assert ceilings.knee(big) == 12  # 119.6 GB/s; every later count within 131.6
    assert "saturated at 12 core(s) (119.6 GB/s; 127.8 with all 16)" in ceilings.knee_text(big)
    assert ceilings.knee(_bus(NODE16_64M, spread=0.0)) == 14  # 12 and 13 (114.4, 114.5) still see 129.9 beyond 10%
    # A spread of 5% a count does not move it: 11's high end (111.0) stays below 12's low end (113.6).
    assert ceilings.knee(_bus(NODE16_256M, spread=0.05)) == 12


def test_the_roofline_pairs_a_settled_sweep_without_the_blocks_it_left_out_and_names_wider_ties():
    """A block whose host reference moved is left out of the sweep's verdicts; the roofline's
    pairing leaves it out too (the same rule, from the records' references). A tie the rounds
    prove only within a wider margin than +-5% says that margin."""

    def rec(block, gbs, sweep="s1"):
        return {"driver": {"sweep_id": sweep, "run_id": f"r{block}", "settle": {"block": block, "host_gbs": gbs}}}

    recs = [rec(b, g) for b, g in enumerate([20.0, 20.5, 19.8, 9.0, 20.2, 20.1])] + [rec(0, 9.0, "s2")]
    moved = settle.moved_rounds(recs)
    assert moved == {("s1", 3)}  # s2 has one block: no spread to judge a move by
    assert roofline._kept_round(recs[3], moved) is None
    assert roofline._kept_round(recs[2], moved) == ("s1", 2, "r2")
    assert settle.moved_rounds([rec(b, None) for b in range(6)]) == set()  # no references: none moved

    rng = random.Random(1)
    ratios = [1.03 * math.exp(rng.gauss(0, 0.08)) for _ in range(20)]  # equivalent, proved within +-6.8%

    def point(name, times, predicted):
        return {
            "app": "cg",
            "times": sorted(times),
            "rounds": [(t, ("s1", i, f"{name}{i}")) for i, t in enumerate(times)],
            "median": statistics.median(times),
            "predicted": predicted,
            "layout": "1x2x1",
            "mode": name,
            "tile": None,
            "runs": len(times),
        }

    a, b = point("flat", [1.0] * 20, 1.0), point("tiled", ratios, 1.2)
    assert ordering.measured_order(a, b) == (0, True)
    assert ordering.tie_margin(a, b) == pytest.approx(0.068, abs=0.001)
    said = roofview.order_text(1.0, ordering.pairs_per_app([a, b])["cg"])
    assert "1x2x1 flat / 1x2x1 tiled (+-6.8%)" in said and "or the wider margin named" in said


def test_predictions_closer_than_the_ceilings_spread_could_move_them_are_a_predicted_tie():
    """Ceilings measured with a spread (their runs' range, 75% confidence for the median with 3
    runs) cannot order two predictions closer than that spread could move them: tau-b counts the
    pair as a tie of the predicted ranking. A ceiling both predictions take the same time at moves
    both alike, so it cannot reorder them; with no spread every difference orders."""
    wide = dict(CEIL, curve=[dict(pt, gbs=spread(pt["gbs"], 0.1)) for pt in CEIL["curve"]])
    wide["peak_gflops"] = spread(CEIL["peak_gflops"], 0.1)
    pred = roofline.predict(ring_record(64 * M, None), wide)
    assert pred["sources"] and all(err == pytest.approx(0.1) for _, err in pred["sources"].values())
    assert all(err == 0 for _, err in roofline.predict(ring_record(64 * M, None), CEIL)["sources"].values())

    def pt(predicted, sources, times):
        return {"app": "cg", "predicted": predicted, "sources": sources, "times": times, "median": times[3]}

    same_roof = pt(1.0, {"memory @ 2": [1.0, 0.1]}, [1.0] * 7), pt(1.08, {"memory @ 2": [1.08, 0.1]}, [1.0] * 7)
    assert ordering.prediction_margin(*same_roof) == pytest.approx(0.008)
    assert ordering.predicted_order(*same_roof) == 1  # 8% apart on one ceiling: still ordered
    other_roof = same_roof[0], pt(1.08, {"L2 @ 2": [1.08, 0.1]}, [1.0] * 7)
    assert ordering.prediction_margin(*other_roof) == pytest.approx(math.hypot(0.1, 0.108))
    assert ordering.predicted_order(*other_roof) == 0  # each could be 10% off the other way
    exact = pt(1.0, {"memory @ 2": [1.0, 0.0]}, [1.0] * 7), pt(1.06, {"L2 @ 2": [1.06, 0.0]}, [1.0] * 7)
    assert ordering.predicted_order(*exact) == 1

    # Three variants: the runs tie a and b and put c above both; the prediction ties a and b
    # within the spread: tau-b 1 (2 / sqrt(3 x 2) when the prediction ordered a and b strictly).
    fast, slow = [1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06], [1.5, 1.51, 1.52, 1.53, 1.54, 1.55, 1.56]
    a = pt(1.0, {"memory @ 2": [1.0, 0.1]}, fast)
    b = pt(1.07, {"gather (memory) @ 2": [1.07, 0.1]}, [t + 0.001 for t in fast])
    c = pt(1.6, {"memory @ 2": [1.6, 0.1]}, slow)
    pairs = ordering.pairs_per_app([a, b, c])["cg"]
    assert pairs["predicted_alike"] == [(a, b)]
    assert pairs["tau_b"] == pytest.approx(1.0)
    strict = [dict(p, sources={k: [v[0], 0.0] for k, v in p["sources"].items()}) for p in (a, b, c)]
    assert ordering.pairs_per_app(strict)["cg"]["tau_b"] == pytest.approx(2 / math.sqrt(3 * 2))
    named = [dict(p, layout="1x2x1", mode=m, tile=None, runs=7) for p, m in zip((a, b, c), ("flat", "hybrid", "tiled"))]
    said = roofview.order_text(1.0, ordering.pairs_per_app(named)["cg"])
    alike = "predicted alike (within +-5%, or closer than the spread of the ceilings' own runs could move them)"
    assert f"{alike}: 1x2x1 flat" in said
    assert "of the 2 pair(s) the runs order, 2 predicted in that order;" in said
    runs_order_all = [dict(p, times=[t * (1 + i) for t in p["times"]]) for i, p in enumerate(named)]
    said = roofview.order_text(1.0, ordering.pairs_per_app(runs_order_all)["cg"])
    assert "of the 3 pair(s) the runs order, 2 predicted in that order and 1 predicted alike" in said


def test_predictions_within_the_runs_equivalence_margin_are_a_predicted_tie():
    """The runs call a pair within +-5% equivalent, so the prediction is read at the same
    resolution: predictions 3% apart are alike even on exact ceilings. Where both tie a pair it
    counts for tau-b; where the runs order a pair the prediction puts within 5%, it counts against
    (a prediction must separate the two by more than the margin to claim their order)."""

    def pt(predicted, times):
        return {"app": "mg", "predicted": predicted, "sources": {}, "times": times, "median": times[3]}

    base = [1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06]
    a, b, c = pt(1.0, base), pt(1.03, [t + 0.001 for t in base]), pt(1.5, [t * 1.5 for t in base])
    assert ordering.predicted_order(a, b) == 0 and ordering.predicted_order(a, c) == 1
    both_tie = ordering.pairs_per_app([a, b, c])["mg"]
    assert both_tie["predicted_alike"] == [(a, b)] and both_tie["tau_b"] == pytest.approx(1.0)
    apart = dict(b, times=[t * 1.3 for t in base], median=base[3] * 1.3)  # the runs order it; 3% predicted
    judged = ordering.pairs_per_app([a, apart, c])["mg"]
    assert judged["ordered_alike"] == 1 and judged["tau_b"] == pytest.approx(2 / math.sqrt(3 * 2))
    close = [a, b, dict(c, predicted=1.04)]  # every prediction within 5%: nothing predicted to judge
    pairs = ordering.pairs_per_app(close)["mg"]
    assert pairs["tau_b"] is None and pairs["alike_all"]
    named = [dict(p, layout="1x2x1", mode=m, tile=None, runs=7) for p, m in zip(close, ("flat", "hybrid", "tiled"))]
    said = roofview.order_text(0.5, ordering.pairs_per_app(named)["mg"])
    assert "tau-b not judged: the prediction puts every settled pair within +-5%" in said


def spread(rows_: list[dict], half: float) -> list[dict]:
    """Ceiling rows whose runs spread +-HALF around their median."""
    return [dict(r, min=r["median"] * (1 - half), max=r["median"] * (1 + half)) for r in rows_]


def test_a_ceiling_row_whose_min_exceeds_its_max_is_as_unsure_as_its_range():
    """A hostile or hand-edited ceilings file with min and max swapped must not read as exact
    (a spread of 0 would let any difference order two predictions)."""
    row = {"cores": 1, "median": 10.0, "min": 9.0, "max": 11.0}
    swapped = dict(row, min=11.0, max=9.0)
    assert ceilings.spread_at([row], 1) == pytest.approx(0.1)
    assert ceilings.spread_at([swapped], 1) == pytest.approx(0.1)


def test_what_the_roofline_holds_of_each_run_places_it_as_the_whole_record_does():
    """pxq roofline keeps of each run only what it reads (roofline.held), so that 100,000 runs
    fit in memory: the points, predictions and orders from the held records are the whole ones',
    and runs alike share their configuration's parts."""
    recs = []
    for i in range(24):
        rec = ring_record(64 * M, [None, 256 * K, 1 * M][i % 3], total=1.0 + (i % 5) / 50)
        rec["driver"].update(sweep_id="s" * 32, repeat=i // 3, sweep_key=f"k{i}")
        rec["work"]["compute"].update(gbs=1.0, gflops=2.0, intensity=0.5)  # rendered rates: not read
        recs.append(rec)
    kept = [roofline.held(copy.deepcopy(r)) for r in recs]
    assert all(len(json.dumps(k)) < len(json.dumps(r)) for k, r in zip(kept, recs))
    assert "gbs" not in kept[0]["work"]["compute"] and "flops" in kept[0]["work"]["compute"]
    assert kept[0]["layout"] is kept[3]["layout"] and kept[0]["variant"] is kept[3]["variant"]
    assert kept[0]["variant"] is not kept[1]["variant"]  # another tile: another part
    assert kept[0]["context"]["caches"] is kept[1]["context"]["caches"]

    whole, held = roofline.points(recs, CEIL), roofline.points(kept, CEIL)
    assert len(whole) == 3 and held == whole and all(p["rounds"][0][1] for p in held)
    assert roofline.held(BASE | {"kind": "probe"}) == BASE | {"kind": "probe"}  # a reference: whole
