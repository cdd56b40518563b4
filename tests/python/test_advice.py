"""`pxq advise`'s reasoning without runs: the candidates filling a node, the tiles proposed, the
prediction from declared work (the roofline's, on fixed ceilings), the proof's outcome and the
hit rate, the check of another machine's ceilings file, and its bad inputs."""

import copy
import json
import math
from io import StringIO

import pytest
from rich.console import Console
from test_roofline import CEIL, M, ring_record

from pxq import cli
from pxq.analysis.models import advice
from pxq.analysis.verdicts.settle import Verdict
from pxq.core import schemas
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.machine import ceilings


def kept(c: dict) -> dict:
    """CEIL as a kept file holds it (its rows with their range)."""
    return copy.deepcopy(c)


def test_the_candidates_fill_the_node_untiled_and_with_each_tile():
    names = [c.name for c in advice.candidates(1, 2, ["256K", "auto"])]
    assert names == [
        "1x2 flat",
        "1x2 tiled 256K",
        "1x2 tiled auto",
        "1x1x2 hybrid",
        "1x1x2 tiled 256K",
        "1x1x2 tiled auto",
    ]
    wide = advice.candidates(2, 16, [])
    assert [str(c.layout) for c in wide] == ["2x16", "2x8x2", "2x4x4", "2x2x8", "2x1x16"]
    assert all(c.layout.ranks_per_node * c.layout.threads == 16 and c.layout.nodes == 2 for c in wide)
    assert {c.mode for c in wide} == {"flat", "hybrid"}


def test_the_tiles_proposed_are_pxqs_default_and_the_apps_cache_share():
    levels = [
        {"name": "L1", "bytes": 48 << 10, "shared": False},
        {"name": "L2", "bytes": 2 << 20, "shared": False},
        {"name": "L3", "bytes": 32 << 20, "shared": True},
    ]
    assert advice.share_tile(levels, "L2/4", 16) == 512 << 10
    assert advice.share_tile(levels, "L3/2", 16) == 1 << 20  # a shared level split over the node's cores
    assert advice.share_tile(levels, "L4/2", 16) is None
    assert advice.tiles_for("L2/4", levels, 16, here=True) == ["256K", "auto"]  # this machine: its own --tile auto
    assert advice.tiles_for("L2/4", levels, 16, here=False) == ["256K", "512K"]  # another's, in bytes
    assert advice.tiles_for("L2/8", levels, 16, here=False) == ["256K"]  # the same as the default: once


def declared(block: int, tile: int | None, ranks: int = 2, threads: int = 1) -> dict:
    """A ring's declared record: the run record's frame and work, no time."""
    rec = ring_record(block, tile, ranks=ranks, threads=threads)
    rec.pop("time")
    for w in rec["work"].values():
        w["seconds"] = 0.0
    return dict(rec, kind="declared", status="declared")


def test_the_prediction_is_the_declared_phases_at_their_binding_ceilings():
    untiled = advice.predict(declared(64 * M, None), CEIL)
    tiled = advice.predict(declared(64 * M, 256 << 10), CEIL)
    assert untiled["binding"] == "memory" and tiled["binding"] == "L2"
    assert tiled["predicted_s"] < untiled["predicted_s"]
    assert untiled["binding_phase"] == "compute" and untiled["cores"] == 2
    assert 0 <= untiled["error"] < 1
    rows = [
        {"name": "1x2 flat", **untiled},
        {"name": "1x2 tiled 256K", **tiled},
        {"name": "1x1x2 tiled 9M", "refused": "no"},
    ]
    assert [r["name"] for r in advice.ranked(rows)] == ["1x2 tiled 256K", "1x2 flat", "1x1x2 tiled 9M"]
    assert advice.proof_set(rows, "1x2 flat") == ["1x2 tiled 256K", "1x2 flat"]
    with pytest.raises(ValueError):
        advice.predict(dict(declared(64 * M, None), work={}), CEIL)


def test_the_advice_says_when_the_model_does_not_separate_the_best():
    rows = [
        {"name": "a", "predicted_s": 1.0, "error": 0.1},
        {"name": "b", "predicted_s": 1.05, "error": 0.1},
        {"name": "c", "predicted_s": 2.0, "error": 0.1},
    ]
    assert advice.separation_text(rows).startswith("2 configurations are predicted within the ceilings' spread (+-10%)")
    assert "separates a from the next" in advice.separation_text([rows[0], rows[2]])
    assert advice.separation_text(rows[:1]) == ""


def candidate(name: str, tile_bytes: int, predicted_s: float) -> dict:
    """A predicted candidate as `advice.same_tile` reads it: its layout and mode from its name."""
    layout, *rest = name.split()
    mode = rest[0] if rest else "flat"
    return {"name": name, "layout": layout, "mode": mode, "tile_bytes": tile_bytes, "predicted_s": predicted_s}


def test_tiles_that_resolved_alike_are_one_configuration():
    rows = [
        candidate("1x2 tiled 256K", 262144, 1.0),
        candidate("1x2 tiled auto", 262144, 1.0),
        candidate("1x1x2 tiled auto", 262144, 2.0),
    ]
    out = advice.same_tile(rows)
    assert out[1] == {k: v for k, v in rows[1].items() if k != "predicted_s"} | {"same_as": "1x2 tiled 256K"}
    assert "predicted_s" in out[2]  # another layout: its own configuration
    assert [r["name"] for r in advice.ranked(out) if "predicted_s" in r] == ["1x2 tiled 256K", "1x1x2 tiled auto"]


def test_an_auto_tile_left_off_is_the_untiled_run_of_its_layout():
    rows = [candidate("1x2", 0, 1.0), candidate("1x2 tiled auto", 0, 1.0), candidate("1x2 tiled 256K", 262144, 1.1)]
    out = advice.same_tile(rows)
    assert out[1]["same_as"] == "1x2" and "predicted_s" not in out[1]  # not predicted or proved twice
    assert "predicted_s" in out[2]


def v(kind: str, lo: float = 0.9, hi: float = 1.1, margin: float | None = None) -> Verdict:
    """A verdict as the settled sweep gives it: an equivalent one carries the margin it holds (5%)."""
    if kind == "equivalent" and margin is None:
        margin = 0.05
    return Verdict(kind, (lo * hi) ** 0.5, lo, hi, 4, margin=margin)


def test_the_prediction_holds_only_when_no_configuration_is_settled_faster():
    assert advice.outcome([v("slower"), v("equivalent")], 0.05) == "held"
    assert advice.outcome([v("slower"), v("faster", 0.8, 0.9)], 0.05) == "not held"
    assert advice.outcome([v("slower"), v("unsettled")], 0.05) == "unsettled"
    assert advice.outcome([v("unsettled"), v("faster", 0.8, 0.9)], 0.05) == "not held"
    assert advice.outcome([], 0.05) == "not proved"


def test_a_best_within_the_margin_of_the_measured_best_holds():
    # other/best: an unsettled pair whose interval's lower end is above 1/(1 + margin) shows the
    # other configuration no more than the margin faster: the predicted best is within it
    assert advice.outcome([v("slower"), v("unsettled", 0.97, 1.10)], 0.05) == "held"
    assert advice.outcome([v("unsettled", 0.94, 1.10)], 0.05) == "unsettled"  # 1/0.94 > 1.05
    assert advice.outcome([v("unsettled", 0.94, 1.10)], 0.07) == "held"
    # settled faster, but by less than the margin over its whole interval: still within it
    assert advice.outcome([v("faster", 0.96, 0.99)], 0.05) == "held"
    # settled faster with its far end beyond the margin: the best is not shown within it
    assert advice.outcome([v("faster", 0.93, 0.99)], 0.05) == "not held"
    # equivalent only within the wider margin its interval proved (11%): not shown within 5%
    assert advice.outcome([v("equivalent", 0.88, 1.01, margin=0.112)], 0.05) == "unsettled"
    assert advice.outcome([v("equivalent", 0.96, 1.10, margin=0.112)], 0.05) == "held"  # yet above the bound
    # fewer than the first look's blocks: no interval, nothing shown
    assert advice.outcome([Verdict("unsettled", None, None, None, 2)], 0.05) == "unsettled"
    assert not advice.within_margin(v("unsettled", 1 / 1.05 - 1e-6, 1.2), 0.05)
    assert advice.within_margin(v("unsettled", 1 / 1.05 + 1e-6, 1.2), 0.05)


def test_the_margin_line_names_each_pair_held_only_by_it():
    out = StringIO()
    pairs = [
        {"configuration": "1x2", "against": "1x1x2", "verdict": "unsettled", "lo": 0.97, "best_within_margin": True},
        {"configuration": "1x2 tiled", "against": "1x1x2", "verdict": "slower", "lo": 1.2, "best_within_margin": True},
        {"configuration": "1x2 x", "against": "1x1x2", "verdict": "unsettled", "lo": 0.9, "best_within_margin": False},
    ]
    advice.print_margins(pairs, 0.05, Console(file=out, width=400))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("1x2: not faster than 1x1x2 by more than 5% (its time at least 0.97x")
    rec = {"predicted_best": "1x1x2", "outcome": "held", "proof": {"precision": 0.07, "stopped": "blocks"}}
    assert "within 7% of every other" in advice.outcome_text(rec)


def test_the_order_is_checked_on_the_settled_pairs_only():
    predicted = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 1.5}
    pairs = [
        {"configuration": "b", "against": "a", "verdict": "slower"},  # predicted slower: right
        {"configuration": "c", "against": "a", "verdict": "faster"},  # predicted slower: wrong
        {"configuration": "d", "against": "a", "verdict": "equivalent"},  # orders nothing
        {"configuration": "d", "against": "a", "verdict": "unsettled"},
    ]
    assert advice.order_checks(pairs, predicted) == (1, 2)


def test_the_hit_rate_counts_the_held_among_the_settled_proofs():
    recs = [
        {"outcome": "held", "order": {"right": 2, "settled": 2}},
        {"outcome": "held", "order": {"right": 1, "settled": 2}},
        {"outcome": "not held", "order": {"right": 0, "settled": 1}},
        {"outcome": "unsettled"},
        {"outcome": "not proved"},
    ]
    h = advice.hit_rate(recs)
    assert (h["held"], h["not held"], h["unsettled"], h["not proved"]) == (2, 1, 1, 1)
    assert h["rate"] == pytest.approx(2 / 3)
    text = advice.hit_rate_text(h)
    assert "hit rate 67% of the settled proofs" in text and "held in 3 of 5 settled pairs" in text
    assert "no proof settled" in advice.hit_rate_text(advice.hit_rate([{"outcome": "unsettled"}]))


def good() -> dict:
    c = kept(CEIL)
    c["kinds"] = {"gather": [{"bytes": 64 << 10, "rate": c["curve"][0]["gbs"]}]}
    return c


def test_a_ceilings_file_is_checked_whole_before_it_predicts():
    assert ceilings.problem(good()) is None
    bad = [
        ([], "not a JSON object"),
        ({**good(), "format": 1}, "format 1"),
        ({**good(), "cores": "2"}, "cores"),
        ({**good(), "levels": [{"name": "L1"}]}, "levels"),
        ({**good(), "curve": []}, "the bandwidth curve"),
        ({**good(), "curve": [good()["curve"][1], good()["curve"][0]]}, "growing"),
        ({**good(), "peak_gflops": [{"cores": 1, "median": "fast", "min": 1, "max": 1}]}, "peak flop rate"),
        ({**good(), "peak_gflops": good()["peak_gflops"][:1]}, "do not reach the 2 cores"),
        ({**good(), "kinds": {"gather": [{"bytes": 1, "rate": [{"cores": 2}]}]}}, "the gather curve"),
        ({**good(), "kinds": []}, "kinds"),
        ({**good(), "curve": [{"bytes": float("inf"), "gbs": good()["curve"][0]["gbs"]}]}, "growing"),
    ]
    for data, said in bad:
        assert said in ceilings.problem(data), (data, ceilings.problem(data))


def test_another_machines_ceilings_file_passes_the_door(tmp_path):
    f = tmp_path / "node.json"
    f.write_text(json.dumps(good()))
    assert ceilings.read_file(f)["cores"] == 2
    f.write_text("{not json")
    with pytest.raises(InputError, match="--ceilings"):
        ceilings.read_file(f)
    f.write_text(json.dumps({**good(), "curve": "fast"}))
    with pytest.raises(InputError, match="the bandwidth curve is not a list of sizes"):
        ceilings.read_file(f)
    with pytest.raises(InputError):
        ceilings.read_file(tmp_path / "missing.json")


def test_an_advice_record_is_a_kind_the_door_knows():
    rec = {
        "kind": "advice",
        "schema": schemas.VERSION,
        "app": "ring",
        "nodes": 1,
        "cores_per_node": 2,
        "ceilings": {"source": "this machine"},
        "knee": {"cores": None, "text": "memory bus: no knee"},
        "candidates": [{"name": "1x2 flat", "layout": "1x2", "mode": "flat", "predicted_s": 1.0}],
        "outcome": "not proved",
        "context": {"host": "h", "date": "2026-11-29T00:00:00+00:00"},
    }
    assert schemas.problems(rec, "x:1") == []
    assert schemas.problems(dict(rec, outcome="maybe"), "x:1")
    assert schemas.problems(dict(rec, candidates=[{"name": "x", "layout": "1x2", "mode": "fast"}]), "x:1")


@pytest.mark.parametrize(
    "argv, said",
    [
        (["advise", "nosuch"], "unknown app 'nosuch'"),
        (["advise", "ring", "--nodes", "0"], "--nodes 0"),
        (["advise", "ring", "--cores", "0", "--no-prove"], "--cores 0"),
        (["advise", "ring", "--budget", "soon"], "soon"),
        (["advise", "ring", "--precision", "2"], "--precision 2"),
        (["advise", "ring", "--max-blocks", "3"], "--max-blocks 3"),
        (["advise", "ring", "--", "--declare", "x"], "--declare after --"),
        (["advise", "ring", "--class", "A"], "--class: ring has no problem classes"),
        (["advise", "ring", "--no-prove", "--", "--block", "-5"], "ring refused every configuration: --block"),
    ],
)
def test_bad_input_is_named_before_anything_runs(argv, said, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PXQ_CEILINGS", str(tmp_path / "none.json"))
    monkeypatch.setattr("pxq.probes.ceilprobe.here", lambda say, remeasure=False: CEIL)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_ceilings_file_of_garbage_is_refused_naming_it(tmp_path, capsys):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"format": ceilings.FORMAT, "cores": 2}))
    assert cli.main(["advise", "ring", "--ceilings", str(f), "--no-prove"]) == 2
    err = capsys.readouterr().err
    assert f"--ceilings {f}: levels is not a list of cache levels" in err


def test_layouts_are_whole_nodes():
    assert all(isinstance(c.layout, Layout) for c in advice.candidates(1, 3, []))
    assert [str(c.layout) for c in advice.candidates(1, 3, [])] == ["1x3", "1x1x3"]


def test_probe_ceilings_shows_them_and_writes_the_file_advise_reads(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("pxq.probes.ceilprobe.here", lambda say, remeasure=False: good())
    out = tmp_path / "node.json"
    assert cli.main(["probe", "ceilings", "--out", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "memory bus" in said and f"pxq advise APP --ceilings {out}" in said
    assert ceilings.read_file(out)["cores"] == 2
    foreign = tmp_path / "notes.txt"
    foreign.write_text("my notes\n")
    assert cli.main(["probe", "ceilings", "--out", str(foreign)]) == 2  # never replaces what pxq did not write
    assert foreign.read_text() == "my notes\n"


def test_an_unsettled_or_missed_prediction_names_the_pairs_that_keep_it_so():
    wide = {
        "configuration": "1x2 flat",
        "verdict": "equivalent",
        "margin": 0.086,
        "ratio": 0.96,
        "lo": 0.91,
        "hi": 1.02,
    }
    open_pair = {"configuration": "1x2 tiled", "verdict": "unsettled", "ratio": 1.03, "lo": 0.93, "hi": 1.13}
    held = {"configuration": "1x2 tiled 256K", "verdict": "slower", "best_within_margin": True, "lo": 1.1, "hi": 1.3}
    rec = {
        "predicted_best": "1x1x2 hybrid",
        "outcome": "unsettled",
        "proof": {
            "precision": 0.05,
            "stopped": "settled",
            "pairs": [wide, held, open_pair | {"blocks": 29, "needed": 82}],
        },
    }
    text = advice.outcome_text(rec)
    assert text.startswith("prediction unsettled (every pair reached its verdict): 1x1x2 hybrid is not shown")
    assert "1x2 flat (equivalent only within +-8.6%, 0.96x [0.91-1.02] of the best's time" in text
    assert "1x2 tiled (unsettled after 29 blocks, 1.03x [0.93-1.13]; about 82 would settle it)" in text
    assert "256K" not in text  # a pair that holds is not named
    fast = {"configuration": "1x2 flat", "verdict": "faster", "ratio": 0.8, "lo": 0.75, "hi": 0.86, "blocks": 6}
    missed = rec | {"outcome": "not held", "proof": {"precision": 0.05, "stopped": "settled", "pairs": [fast, held]}}
    assert advice.outcome_text(missed).endswith("by more than 5%: 1x2 flat (faster after 6 blocks, 0.80x [0.75-0.86])")


def test_the_blocks_an_equivalence_needs_to_clear_the_bound_follow_its_interval():
    """CG B's proof: 0.964x [0.911-1.019] over 14 blocks; the bound 1/1.05 lies 1.2% (in log)
    under the estimate, the interval's half-width is 5.6%: about 14 x (5.6 / 1.2)^2 blocks."""
    pair = {"ratio": 0.964, "lo": 0.911, "hi": 1.019, "blocks": 14}
    half, room = (math.log(1.019) - math.log(0.911)) / 2, math.log(0.964) + math.log(1.05)
    need = math.ceil(14 * (half / room) ** 2)
    assert advice.blocks_to_bound(pair, 0.05) == f"; about {need} blocks would show it within 5%"
    assert 250 < need < 350
    cleared = advice.blocks_to_bound(pair | {"lo": 0.955, "hi": 0.973}, 0.05)  # its lower end above the bound
    assert int(cleared.split()[2]) <= 14  # no more than the blocks that cleared it
    assert "would not show it" in advice.blocks_to_bound(pair | {"ratio": 0.94}, 0.05)  # the estimate beyond the bound
    assert advice.blocks_to_bound({"ratio": 0.96}, 0.05) == ""  # no interval: nothing to scale
    wide = pair | {"configuration": "1x2 flat", "verdict": "equivalent", "margin": 0.086}
    rec = {"predicted_best": "1x1x2 hybrid", "outcome": "unsettled", "proof": {"precision": 0.05, "pairs": [wide]}}
    assert f"it may be more than 5% faster; about {need} blocks would show it within 5%)" in advice.outcome_text(rec)
