"""A lab's prediction (pxq.teaching.prediction): the student's prediction.toml read through the
door and refused naming the line when it is not one, each answer graded against `pxq advise`'s
rows on fixed ceilings (the binding level, the time within its margin, hybrid against flat at
the 5% margin, the knee), and the grade's words, record and class-table cell."""

import os

import pytest
from rich.console import Console
from test_advice import declared
from test_roofline import CEIL, M

from pxq.analysis.models import advice
from pxq.core.errors import InputError
from pxq.labs import tiling
from pxq.teaching import grading, harness, prediction, sealing

PLAN = tiling.PREDICT


def rows() -> dict:
    """pxq advise's rows for the plan on CEIL, as model() returns them (no run)."""
    out = {}
    for name, cand, rec in (
        ("untiled", "1x2 flat", declared(32 * M, None)),
        ("tiled", "1x2 tiled 256K", declared(32 * M, 256 << 10)),
        ("hybrid", "1x1x2 hybrid", declared(32 * M, None, ranks=1, threads=2)),
    ):
        out[name] = {
            "name": cand,
            "tile_bytes": int(rec["variant"].get("tile_bytes") or 0),
            **advice.predict(rec, CEIL),
        }
    return out


def write(tmp_path, text: str):
    f = tmp_path / prediction.FILE
    f.write_text(text)
    return f


def answers(untiled=("", 0), tiled=("", 0), hybrid="", knee='""') -> str:
    return (
        f'[untiled]\nbinds = "{untiled[0]}"\nseconds = {untiled[1]}\n'
        f'[tiled]\nbinds = "{tiled[0]}"\nseconds = {tiled[1]}\n'
        f'[compare]\nhybrid_vs_flat = "{hybrid}"\nknee = {knee}\n'
    )


def test_the_starters_file_reads_as_a_prediction_not_made(tmp_path):
    pred = prediction.read(harness.folder(harness.get("4")) / "begin" / prediction.FILE, PLAN)
    assert pred is not None and all(prediction.given(pred, t, k) is None for t, k in prediction.questions(PLAN))
    console = Console(file=open(os.devnull, "w"))
    assert prediction.graded(PLAN, pred, CEIL, 2, console)["state"] == "not made"
    assert prediction.graded(PLAN, None, CEIL, 2, console)["state"] == "none"
    made = prediction.read(write(tmp_path, answers(untiled=("memory", 1.0))), PLAN)
    said = prediction.graded(PLAN, made, None, 2, console)
    assert said["state"] == "not graded" and "./pxq probe ceilings" in said["why"]
    assert prediction.read(tmp_path / "missing.toml", PLAN) is None


def test_each_answer_is_graded_against_the_models_reasoning(tmp_path):
    r = rows()
    assert (r["untiled"]["binding"], r["tiled"]["binding"]) == ("memory", "L2")
    flat_s, tiled_s = r["untiled"]["of_seconds"]["compute"], r["tiled"]["of_seconds"]["compute"]
    hybrid = prediction.order_of(flat_s / r["hybrid"]["of_seconds"]["compute"])
    wrong = {"alike": "faster", "faster": "slower", "slower": "alike"}[hybrid]
    text = answers(untiled=(" Memory", 1.2 * flat_s), tiled=("l3", 3 * tiled_s), hybrid=hybrid, knee='"none"')
    graded = prediction.grade(PLAN, prediction.read(write(tmp_path, text), PLAN), r, CEIL)
    by = {a["question"]: a for a in graded["answers"]}
    assert [q for q, a in by.items() if a["agrees"]] == [
        "untiled.binds",
        "untiled.seconds",
        "compare.hybrid_vs_flat",
        "compare.knee",
    ]
    assert by["tiled.binds"]["model"] == "l2" and "a pass sweeps 256K a rank" in by["tiled.binds"]["why"]
    assert by["tiled.seconds"]["model"] == pytest.approx(tiled_s) and not by["tiled.seconds"]["agrees"]
    assert "no knee within 2 core(s)" in by["compare.knee"]["why"]  # CEIL's bus grew 1.6x from 1 to 2 cores
    assert (graded["agree"], graded["of"]) == (4, 6)
    # The other way round: each answer can fail.
    text = answers(untiled=("l3", 1.4 * flat_s), tiled=("l2", tiled_s), hybrid=wrong, knee="2")
    graded = prediction.grade(PLAN, prediction.read(write(tmp_path, text), PLAN), r, CEIL)
    assert [a["question"] for a in graded["answers"] if a["agrees"]] == ["tiled.binds", "tiled.seconds"]
    # A blank answer is "not predicted", and a configuration the model could not price is not graded.
    text = answers(untiled=("memory", 0))
    graded = prediction.grade(PLAN, prediction.read(write(tmp_path, text), PLAN), {"untiled": r["untiled"]}, CEIL)
    by = {a["question"]: a for a in graded["answers"]}
    assert by["untiled.binds"]["agrees"] and by["untiled.seconds"]["why"] == "not predicted"
    assert by["tiled.binds"]["agrees"] is False and by["compare.knee"]["agrees"] is False
    assert by["compare.hybrid_vs_flat"]["agrees"] is False  # blank: not predicted, whatever the model can do
    assert graded["of"] == 6


def test_alike_means_within_the_settled_sweeps_5_percent():
    assert prediction.order_of(1.04) == prediction.order_of(1 / 1.04) == "alike"
    assert prediction.order_of(1.06) == "faster" and prediction.order_of(1 / 1.06) == "slower"


@pytest.mark.parametrize(
    "text, said",
    [
        ('[untiled]\nbinds = "memory"\nseconds = \n', "not valid TOML"),
        (
            '[untiled]\nbinds = "cache"\n',
            f"{prediction.FILE}:2: untiled.binds: not an answer it takes; it takes one of",
        ),
        ("[untiled]\nseconds = -1\n", "untiled.seconds: not an answer it takes; it takes seconds"),
        ('[untiled]\nseconds = "fast"\n', "untiled.seconds: not an answer it takes; it takes seconds"),
        ("[compare]\nknee = 0\n", "compare.knee: not an answer it takes; it takes 'none' or a number of cores"),
        ("untiled = 5\n", ":1: untiled: not an answer it takes; it is a table of answers"),
        ("[untiled]\nseconds = nan\n", ":2: untiled.seconds: not an answer it takes; it takes seconds"),
        (
            '[untiled]\nbinds = "l2"\nbindz = "x"\n',
            ":3: untiled.bindz: an unexpected key; the keys here are: binds, seconds",
        ),
        ('[tiles]\nbinds = "l2"\n', ":1: tiles: an unexpected key; the keys here are: compare, tiled, untiled"),
    ],
)
def test_a_file_that_is_no_prediction_is_refused_naming_the_line(tmp_path, text, said):
    with pytest.raises(InputError) as e:
        prediction.read(write(tmp_path, text), PLAN)
    assert said in str(e.value), str(e.value)
    assert "fast" not in str(e.value).replace("fastest", "")  # the student's value is never echoed


def test_a_link_a_folder_or_a_huge_file_is_refused(tmp_path):
    (tmp_path / "real.toml").write_text(answers())
    (tmp_path / prediction.FILE).symlink_to(tmp_path / "real.toml")
    with pytest.raises(InputError, match="a link"):
        prediction.read(tmp_path / prediction.FILE, PLAN)
    (tmp_path / prediction.FILE).unlink()
    (tmp_path / prediction.FILE).mkdir()
    with pytest.raises(InputError, match="is a folder"):
        prediction.read(tmp_path / prediction.FILE, PLAN)
    (tmp_path / prediction.FILE).rmdir()
    write(tmp_path, "# " + "x" * (1 << 17))
    with pytest.raises(InputError, match="more than such a file holds"):
        prediction.read(tmp_path / prediction.FILE, PLAN)


def test_a_copy_with_a_malformed_prediction_is_refused_before_anything_builds(tmp_path):
    lab = harness.get("4")
    for name in harness.student_files(lab):
        (tmp_path / name).write_bytes((harness.folder(lab) / "begin" / name).read_bytes())
    write(tmp_path, '[untiled]\nbinds = "L4"\n')
    with pytest.raises(InputError, match=f"{prediction.FILE}:2: untiled.binds"):
        harness.check(lab, "copy", tmp_path, 1, Console(file=open(os.devnull, "w")))
    assert not (tmp_path / "build").exists()


def test_the_grade_reads_in_words_and_in_the_class_table(tmp_path):
    r = rows()
    text = answers(untiled=("memory", r["untiled"]["of_seconds"]["compute"]), tiled=("l1", 0))
    block = prediction.grade(PLAN, prediction.read(write(tmp_path, text), PLAN), r, CEIL)
    block = prediction.with_measured(block, {"untiled.seconds": 0.5})
    said = prediction.lines(block)
    assert said[0].startswith(
        "prediction (prediction.toml): 2 of 6 answers agree with pxq advise (ceilings of test CPU"
    )
    assert any(ln.startswith("  untiled.seconds = ") and "agrees" in ln and "measured here: 0.5 s" in ln for ln in said)
    assert any(ln.startswith("  tiled.binds = l1: differs; the model: l2") for ln in said)
    assert any(ln.startswith("  tiled.seconds = -: not predicted") for ln in said)
    assert grading.predicted(block) == "2 of 6 agree with pxq advise"
    assert grading.predicted({"state": "not made"}) == "not made" and grading.predicted(None) == "-"
    assert prediction.lines({"state": "none", "why": "no file"}) == ["prediction: none: no file"]


def test_the_first_graded_prediction_is_sealed_and_graded_from_then_on(tmp_path, monkeypatch):
    r = rows()
    monkeypatch.setattr(prediction, "model", lambda *a: r)
    console = Console(file=open(os.devnull, "w"))
    schema = prediction.schema(PLAN)
    flat_s = r["untiled"]["of_seconds"]["compute"]
    guess = prediction.read(write(tmp_path, answers(untiled=("l3", 9 * flat_s))), PLAN)
    assert sealing.first(tmp_path, schema) == sealing.First()  # no seal yet
    block = prediction.graded(PLAN, guess, CEIL, 2, console, sealing.First())
    assert block["agree"] == 0 and "sealed" not in block
    harness.sealed(block, harness.Forecast(guess, sealing.First(), True), tmp_path)
    assert block["sealed_now"] and (tmp_path / sealing.SEAL).is_file()
    assert any("sealed now" in ln for ln in prediction.lines(block))
    first = sealing.first(tmp_path, schema)
    assert first.answers == guess and first.sealed == block["sealed"]
    # The model's answers seen, the file is changed to them: the first prediction is still graded.
    right = prediction.read(write(tmp_path, answers(untiled=("memory", flat_s))), PLAN)
    later = prediction.graded(PLAN, right, CEIL, 2, console, first)
    assert later["agree"] == 0 and later["revised"] == {"agree": 2, "of": 6} and later["sealed"] == first.sealed
    said = prediction.lines(later)
    changed = "was changed after the model's answers were shown: as it stands it would agree on 2 of 6"
    assert any(changed in ln for ln in said)
    assert grading.predicted(later) == (
        "0 of 6 agree with pxq advise (as first graded; changed after the model's answers: 2 of 6)"
    )
    # The file as it was sealed: graded, nothing revised; a blanked file is a revision to nothing.
    assert "revised" not in prediction.graded(PLAN, guess, CEIL, 2, console, first)
    assert prediction.graded(PLAN, None, CEIL, 2, console, first)["revised"] == {"agree": 0, "of": 6}
    # A seal is written once: never over one, even pxq's own.
    before = (tmp_path / sealing.SEAL).read_bytes()
    when, why = sealing.seal(tmp_path, right)
    assert when is None and "left as it is" in why and (tmp_path / sealing.SEAL).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pxq-seal-")] == []  # no temporary file left


def test_a_teachers_grade_reads_the_seal_and_writes_none(tmp_path, monkeypatch):
    monkeypatch.setattr(prediction, "model", lambda *a: rows())
    console = Console(file=open(os.devnull, "w"))
    pred = prediction.read(write(tmp_path, answers(untiled=("memory", 1.0))), PLAN)
    block = prediction.graded(PLAN, pred, CEIL, 2, console, sealing.First())
    harness.sealed(block, harness.Forecast(pred, sealing.First(), False), tmp_path)
    assert block["seal"].startswith("none: no check graded this prediction before")
    assert not (tmp_path / sealing.SEAL).exists()
    assert grading.predicted(block).endswith("(no seal: graded as it stands)")
    # Nothing graded (no ceilings): nothing sealed either.
    idle = prediction.graded(PLAN, pred, None, 2, console, sealing.First())
    harness.sealed(idle, harness.Forecast(pred, sealing.First(), True), tmp_path)
    assert idle["state"] == "not graded" and not (tmp_path / sealing.SEAL).exists()


@pytest.mark.parametrize(
    "content, said",
    [
        ("{not json", "not JSON"),
        ('{"sealed": "2026-12-03T06:00:00Z", "answers": {"untiled": {"binds": "l9"}}}', "not the shape"),
        ('{"sealed": "2026-12-03T06:00:00Z", "answers": {"untiled": {"seconds": NaN}}}', "not JSON"),
        ('{"sealed": "2026-12-03T06:00:00Z", "answers": {"untiled": {"seconds": 1e999}}}', "sealed prediction"),
        ('{"answers": {}}', "not the shape"),
        ("[]", "not the shape"),
        ("x" * (sealing.LIMIT + 1), "bytes"),
    ],
)
def test_a_seal_that_is_not_one_is_named_and_the_file_graded_as_it_stands(tmp_path, monkeypatch, content, said):
    monkeypatch.setattr(prediction, "model", lambda *a: rows())
    (tmp_path / sealing.SEAL).write_text(content)
    first = sealing.first(tmp_path, prediction.schema(PLAN))
    assert first.answers is None and said in first.problem and sealing.SEAL in first.problem
    pred = prediction.read(write(tmp_path, answers(untiled=("memory", 1.0))), PLAN)
    block = prediction.graded(PLAN, pred, CEIL, 2, Console(file=open(os.devnull, "w")), first)
    assert block["state"] == "graded" and block["seal"] == first.problem and "revised" not in block
    harness.sealed(block, harness.Forecast(pred, first, True), tmp_path)
    assert (tmp_path / sealing.SEAL).read_text() == content  # left as it is


def test_a_seal_that_is_a_link_is_not_followed(tmp_path):
    secret = tmp_path / "elsewhere.json"
    secret.write_text('{"sealed": "x", "answers": {}}')
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / sealing.SEAL).symlink_to(secret)
    first = sealing.first(copy, prediction.schema(PLAN))
    assert first.answers is None and "not a plain file" in first.problem
