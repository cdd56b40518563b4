"""pxq report --format extrap: a sweep as Extra-P's text input (tests/ecosystem/test_extrap.py
has Extra-P read it and fit the law the runs were made from)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pxq import cli
from pxq.analysis.exports import extrap, extrapfit
from pxq.core.errors import InputError

DATA = Path(__file__).parent / "data" / "figures" / "runs.jsonl"
RANKS = (1, 2, 4, 8, 16)


def law_runs(noise: float = 0.01) -> list[dict]:
    """Ring runs over 1..16 ranks, 3 repeats: flat takes 1 + 0.5 p s, tiled 3.2 + 0.01 p s, so the
    tiled variant is slower up to 4 ranks and faster from 8 on."""
    base = next(json.loads(ln) for ln in DATA.read_text().splitlines() if json.loads(ln)["status"] == "ok")
    out = []
    for p in RANKS:
        for mode, law in (("flat", lambda p: 1 + 0.5 * p), ("tiled", lambda p: 3.2 + 0.01 * p)):
            for k, wobble in enumerate((1 - noise, 1.0, 1 + noise)):
                rec = copy.deepcopy(base)
                rec["app"] = "ring"
                rec["layout"].update(nodes=1, ranks=p, ranks_per_node=p, threads=1)
                rec["variant"].update(mode=mode, backend="openmp", tile_bytes=262144)
                rec["size"] = {"block_bytes": 1 << 26}
                rec["time"] = {"total": law(p) * wobble}
                rec["driver"]["run_id"] = f"{mode}-{p}-{k}"
                out.append(rec)
    return out


def test_a_sweep_becomes_one_region_per_variant_over_its_points_with_every_repeat():
    export = extrap.build(law_runs())
    assert export.params == ["ranks"] and [p[0] for p in export.points] == list(RANKS)
    text = export.text()
    assert text.startswith("PARAMETER ranks\n") and "POINTS 1 2 4 8 16\n" in text and "METRIC time" in text
    regions = [ln.split(" ", 1)[1] for ln in text.splitlines() if ln.startswith("REGION ")]
    assert regions == [
        "ring.flat.openmp.threads=1.nodes=1.n=67108864",
        "ring.tiled.openmp.threads=1.nodes=1.tile=262144.n=67108864",
    ]
    data = [ln for ln in text.splitlines() if ln.startswith("DATA ")]
    assert len(data) == 10 and all(len(ln.split()) == 4 for ln in data)  # 3 repeats per point
    assert [float(v) for v in data[0].split()[1:]] == pytest.approx([1.485, 1.5, 1.515])
    assert extrap.crossings(export) == [
        "ring.flat.openmp.threads=1.nodes=1.n=67108864 and ring.tiled.openmp.threads=1.nodes=1.tile=262144.n=67108864 "
        "cross between ranks=4 and 8: ring.flat.openmp.threads=1.nodes=1.n=67108864 faster below"
    ]


def test_noise_that_overlaps_names_no_crossing_and_missing_points_are_said():
    runs = law_runs(noise=0.5)  # ranges overlap near the crossing: noise cannot order them there
    assert extrap.crossings(extrap.build(runs)) == []
    runs = [r for r in law_runs() if not (r["variant"]["mode"] == "tiled" and r["layout"]["ranks"] == 16)]
    export = extrap.build(runs)
    assert [p[0] for p in export.points] == [1, 2, 4, 8]
    assert export.left_out == ["point (16) left out: not every variant ran it"]
    hybrid = copy.deepcopy(runs[0])
    hybrid["variant"]["mode"] = "hybrid"
    export = extrap.build([*runs, hybrid], "ranks")
    assert any("ring.hybrid" in note and "left out" in note for note in export.left_out)


@pytest.mark.parametrize(
    ("params", "needle"),
    [("ranks,bogus", "give 1 to 4 of"), ("ranks,ranks", "each once"), ("threads", "no variant ran at 2")],
)
def test_bad_parameters_are_refused(params, needle):
    with pytest.raises(InputError, match=needle):
        extrap.build(law_runs(), params)


def test_the_command_writes_the_file_and_refuses_what_it_cannot_write(tmp_path, capsys):
    results = tmp_path / "sweep.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in law_runs()))
    out = tmp_path / "model.txt"
    assert cli.main(["report", str(results), "--format", "extrap", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert out.read_text() == extrap.build(law_runs()).text()
    assert "2 regions over 5 points of ranks" in stdout and "cross between ranks=4 and 8" in stdout
    for argv, needle in (
        (["--format", "extrap"], "give it, e.g. --out"),
        (["--format", "extrap", "--out", str(tmp_path)], "give it, e.g. --out"),
        (["--format", "csv", "--params", "ranks"], "--params goes with --format extrap"),
    ):
        assert cli.main(["report", str(results), *argv]) == 2
        assert needle in capsys.readouterr().err


def test_model_needs_extrap_and_the_extrap_format(tmp_path, capsys, monkeypatch):
    results = tmp_path / "sweep.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in law_runs()))
    out = tmp_path / "model.txt"
    assert cli.main(["report", str(results), "--format", "csv", "--model"]) == 2
    assert "--model goes with --format extrap" in capsys.readouterr().err
    monkeypatch.setattr(extrapfit, "interpreter", lambda: None)
    assert cli.main(["report", str(results), "--format", "extrap", "--out", str(out), "--model"]) == 2
    assert "./pxq setup --ecosystem" in capsys.readouterr().err and not out.exists()


def test_few_points_are_warned_about():
    runs = [r for r in law_runs() if r["layout"]["ranks"] in (1, 2)]
    (warning,) = extrap.few_points(extrap.build(runs))
    assert "ranks has 2 point(s)" in warning and "5 or more" in warning
    assert extrap.few_points(extrap.build(law_runs())) == []  # five points


def test_model_crossings_are_found_inside_the_measured_range():
    grid = [1 + 31 * k / 399 for k in range(400)]
    fitted = {
        "params": ["ranks"],
        "grid": grid,
        "models": {
            "ring.flat": {
                "text": "1 + 0.5 * ranks^(1)",
                "smape": 0.1,
                "ar2": 0.99,
                "values": [1 + 0.5 * x for x in grid],
            },
            "ring.tiled": {
                "text": "3.2 + 0.01 * ranks^(1)",
                "smape": 0.2,
                "ar2": 0.9,
                "values": [3.2 + 0.01 * x for x in grid],
            },
            "cg.flat": {"text": "2", "smape": 0.0, "ar2": 1.0, "values": [2.0] * 400},  # another app: never paired
        },
    }
    (cross,) = extrapfit.crossings(fitted)
    assert "ring.flat and ring.tiled cross at ranks=4.49: ring.flat faster below" in cross
    assert extrapfit.formula("1.0000000000000009 + 0.010000000000000045 * ranks^(1)") == "1 + 0.01 * ranks^(1)"
    shown = extrapfit.lines(fitted)
    assert any("SMAPE 0.1%, adjusted R^2 0.990" in line for line in shown) and shown[-1] == cross
    # Two values of the parameter fit any term: no model, no crossing claimed.
    (few,) = extrapfit.lines({**fitted, "values_per_param": [2]})
    assert few.startswith("not modelled: 2 value(s) of ranks") and "cross" not in few
    assert extrapfit.lines({**fitted, "values_per_param": [5]}) == shown
