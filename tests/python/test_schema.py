"""The record schemas (schemas/) and `pxq validate`: every kind has a valid schema, what the
driver writes matches it, damaged records are caught and named."""

import copy
import json
import sys
from pathlib import Path

from pxq import cli
from pxq.analysis.models import tiles
from pxq.analysis.verdicts.findings import Comparison, Finding
from pxq.core import procs, schemas
from pxq.core.layout import Layout
from pxq.experiments import runner, study
from pxq.experiments import studykit as studies
from pxq.experiments.studykit import Outcome

RUN = json.loads((Path(__file__).parent / "data" / "run-record.json").read_text())


def messages(rec):
    return [p.message for p in schemas.problems(rec, "x")]


def test_every_kind_has_a_valid_schema_of_the_current_version():
    import jsonschema

    for kind in schemas.KINDS:
        doc = json.loads((schemas.SCHEMA_DIR / f"{kind}.schema.json").read_text())
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$id"] == f"urn:pxq:schema:{kind}:{schemas.VERSION}"
        assert doc["properties"]["kind"] == {"const": kind}


def test_a_run_record_from_a_real_run_is_valid_and_damage_is_named():
    assert messages(RUN) == []
    wrong = copy.deepcopy(RUN)
    wrong["verification"]["passed"] = False  # status ok, but did not verify
    assert any("verification/passed" in m for m in messages(wrong))
    no_time = {k: v for k, v in RUN.items() if k != "time"}
    assert any("'time' is a required property" in m for m in messages(no_time))
    zero = copy.deepcopy(RUN)
    zero["layout"]["nodes"] = 0
    assert any(m.startswith("layout/nodes") for m in messages(zero))
    assert messages(dict(RUN, kind="runs")) == [
        'unknown kind "runs" (pxq writes run, probe, profile, tile-profile, study, lab-grade, advice)'
    ]
    assert "not a pxq record" in messages({"app": "ring"})[0]


def test_a_run_s_message_rows_are_four_counts_each():
    """The rows the message profile writes (by_rank, by_peer, by_channel) are described by the
    schema, so a count written as a word, a negative count or a short row is named."""
    good = copy.deepcopy(RUN)
    good["messages"]["by_rank"] = [[0, 1, 10, 671088640], [1, 1, 10, 671088640]]
    good["messages"]["by_rank_columns"] = ["rank", "peers", "messages", "bytes"]
    assert messages(good) == []
    for where, bad in (
        ("by_rank", [[0, 1, "many", 671088640]]),
        ("by_rank", [[0, 1, 10]]),
        ("by_peer", [[0, 1, -10, 671088640]]),
        ("by_channel", {"intra_cmp": {"bytes": 1.5, "messages": 20}}),
        ("by_rank_columns", ["rank", "bytes"]),
    ):
        wrong = copy.deepcopy(good)
        wrong["messages"][where] = bad
        assert any(m.startswith(f"messages/{where}") for m in messages(wrong)), (where, messages(wrong))


def test_version_one_records_are_read_as_their_kind_and_not_checked():
    old = {k: v for k, v in RUN.items() if k != "kind"} | {"schema": 1}
    assert schemas.kind_of(old) == "run" and messages(old) == []
    assert schemas.kind_of({"schema": 1, "app": "probe-stride"}) == "probe"
    assert schemas.kind_of({"schema": 1, "app": "msgprof"}) == "profile"
    assert schemas.kind_of({"schema": tiles.PROFILE_LEGACY}) == "tile-profile"


def test_the_driver_s_failure_record_is_a_valid_run_and_probe_record():
    for app, kind in (("ring", "run"), ("probe-stride", "probe")):
        spec = runner.RunSpec(app=app, layout=Layout(2, 1), mode="flat", tile="off")
        rec = runner.error_record(spec, "timeout", "abc")
        rec["status"] = "timeout"
        rec["error"] = runner._error_block(procs.Finished(-1, "killed\n", 1.5, True), "timeout")
        assert rec["kind"] == kind and messages(rec) == []
        del rec["error"]
        assert any("'error' is a required property" in m for m in messages(rec))


def test_study_and_tile_profile_records_are_valid(tmp_path):
    runs = [
        dict(RUN, layout=dict(RUN["layout"], nodes=n, ranks_per_node=2 // n), driver={"run_id": f"r{n}{i}"})
        for n in (1, 2)
        for i in range(2)
    ]
    rows = study.summarize(runs)
    found = [Finding("f", "1x", "2x", "not reproduced", "why", "contention/two/vs_nodes")]
    out = Outcome("t", rows, [Comparison("q", "1", "2")], found, runs)
    rec = json.loads(json.dumps(studies.record("contention", "ring", out)))
    assert messages(rec) == [] and rec["status"] == "ok" and len(rec["run_ids"]) == 4
    rec["findings"][0]["verdict"] = "maybe"
    assert any("maybe" in m for m in messages(rec))
    rec["findings"][0]["verdict"] = "passed"  # a check's verdict, not a part's
    assert messages(rec)
    machine = {"host": "h", "cpu_model": "c", "caches": {k: {"bytes": 1 << 20} for k in ("l1d", "l2", "l3")}}
    best = [tiles.Best("ring_pass", 1, 262144, 50.0, 0.02, 3, 50.0, None, None)]
    profile, _ = tiles.write_profile(tmp_path / "tiles.json", machine, best, Path("bench.json"))
    assert messages(profile) == []
    assert any("tile" in m for m in messages(json.loads(json.dumps(profile).replace("262144", "0"))))


def test_validate_exits_0_1_2_and_names_the_line(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(RUN) + "\n")
    assert cli.main(["validate", str(good)]) == 0
    assert cli.main(["validate", str(good), "--require", "run,probe"]) == 1
    assert "no probe record" in capsys.readouterr().out
    bad = tmp_path / "sub" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_text(json.dumps(RUN) + "\n" + json.dumps(dict(RUN, status="done")) + "\n{half\n")
    assert cli.main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2" in out and "status: 'done' is not one of" in out and f"{bad}:3" in out and "2 invalid" in out
    assert cli.main(["validate", str(tmp_path / "none.jsonl")]) == 2
    assert cli.main(["validate", str(good), "--require", "runs"]) == 2


def test_validate_names_what_the_records_door_refuses(tmp_path, capsys):
    """validate and every reader agree: a line that is not UTF-8, nested too deep, or of the
    wrong types is invalid, named by its line and the reason."""
    path = tmp_path / "r.jsonl"
    good = json.dumps(RUN).encode()
    path.write_bytes(good + b"\n" + good[:-1] + b', "x": "\xff"}\n' + b"[" * 50 + b"]" * 50 + b"\n")
    assert cli.main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "r.jsonl:2" in out and "not UTF-8" in out
    assert "r.jsonl:3" in out and "nested deeper than 32" in out and "1 run (version 2); 2 invalid" in out


def _with_registry(monkeypatch, tmp_path, edit):
    """The driver's schemas and labels over a registry whose apps' choices `edit` changed."""
    reg = json.loads(schemas.REGISTRY_SNAPSHOT.read_text())
    edit(reg)
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(reg))
    monkeypatch.setattr(schemas, "REGISTRY_SNAPSHOT", path)
    for cached in (schemas.app_choices, schemas.access_kinds, schemas._loaded, schemas._validators, schemas._fast):
        cached.cache_clear()


def test_the_apps_choices_give_the_schema_its_enums_and_the_report_its_labels(monkeypatch, tmp_path):
    from pxq.analysis.exports import report

    rec = json.loads((Path(__file__).parent / "data" / "run-record.json").read_text())
    assert rec["app"] == "ring"
    mirror = copy.deepcopy(rec)
    mirror["variant"]["exchange"] = "mirror"
    assert messages(mirror) and not messages(rec)  # not a value of the registry's

    def add_mirror(reg):
        ring = next(a for a in reg["apps"] if a["name"] == "ring")
        next(c for c in ring["choices"] if c["name"] == "exchange")["values"].append("mirror")

    try:
        _with_registry(monkeypatch, tmp_path, add_mirror)
        assert not messages(mirror)  # the schema follows the registry
        modes = sorted(r.mode for r in report.summarize([mirror, rec]))
        assert len(modes) == 2 and modes[1] == modes[0] + "+mirror"  # the report labels it
    finally:
        monkeypatch.undo()
        for cached in (schemas.app_choices, schemas.access_kinds, schemas._loaded, schemas._validators, schemas._fast):
            cached.cache_clear()


def test_a_phases_access_kind_is_one_the_registry_lists(monkeypatch, tmp_path):
    """The schema's values of a phase's kind (and of a fused phase's second kind) come from the
    registry's access_kinds (pxq/probes/kinds.hpp), "stream" beside them."""
    rec = json.loads((Path(__file__).parent / "data" / "run-record.json").read_text())
    counts = {"flops": 1.0, "bytes": 8.0, "memory_bytes": 8.0}
    phase = {**counts, "rank_max": counts, "footprint_bytes": 8, "working_set_bytes": 8, "seconds": 0.1, "what": ""}
    rec["work"] = {"compute": dict(phase, kind="stream"), "spmv": dict(phase, kind="gather")}
    assert messages(rec) == []
    rec["work"]["spmv"]["also"] = {"kind": "gather2", "share": 0.5}
    rec["work"]["compute"]["kind"] = "gather2"
    assert len([m for m in messages(rec) if "gather2" in m]) == 2  # not a kind of the registry's

    def add_kind(reg):
        reg["access_kinds"].append({"name": "gather2", "unit": "gbs", "size": "footprint", "what": "a second gather"})

    try:
        _with_registry(monkeypatch, tmp_path, add_kind)
        assert messages(rec) == [] and schemas.access_kinds()[-1] == "gather2"  # the schema follows the registry
    finally:
        monkeypatch.undo()
        for cached in (schemas.app_choices, schemas.access_kinds, schemas._loaded, schemas._validators, schemas._fast):
            cached.cache_clear()


def test_a_lab_grade_has_its_schema_and_older_grades_are_read():
    grade = {
        "kind": "lab-grade",
        "schema": schemas.VERSION,
        "lab": "01-channels",
        "number": 1,
        "source": "labs/01-channels/solution",
        "confined": False,
        "checks": [{"name": "every payload intact", "passed": True}],
        "effects": [{"sentence": "x", "ratio": 2.0, "spread": 0.1, "repeats": 3, "counted": True, "verdict": "shows"}],
        "outcome": "done",
        "exit": 0,
    }
    assert messages(grade) == []
    assert any(m.startswith("exit") for m in messages(dict(grade, exit="0")))
    assert any(
        "'outcome' is a required property" in m for m in messages({k: v for k, v in grade.items() if k != "outcome"})
    )
    older = {k: v for k, v in grade.items() if k != "schema"}  # written before lab grades had a schema
    assert messages(older) == [] and messages(dict(older, checks=[{"name": "x"}])) != []


def test_the_quick_yes_agrees_with_jsonschema_whichever_library_compiles_it(monkeypatch):
    """The door's quick yes is jsonschema_rs, or fastjsonschema where jsonschema_rs is not
    installed: either passes a valid record and leaves a damaged one to jsonschema, which names
    the problem. A value jsonschema_rs cannot convert (an integer past 64 bits) is no error."""
    bad = copy.deepcopy(RUN)
    bad["layout"]["ranks"] = "two"
    huge = copy.deepcopy(RUN)
    huge["layout"]["ranks"] = 1 << 70
    for missing in (False, True):
        if missing:
            monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # its import fails
        schemas._fast.cache_clear()
        assert schemas._valid_fast("run", RUN)
        assert not schemas._valid_fast("run", bad)
        assert schemas.problems(RUN, "f:1") == []
        assert any("ranks" in p.message or "two" in p.message for p in schemas.problems(bad, "f:1"))
        schemas._valid_fast("run", huge)  # either answer; never an exception
    schemas._fast.cache_clear()


def test_declared_work_that_contradicts_itself_is_named_by_the_door():
    """What the schema cannot check of a run's work: the largest rank above the sum, a tile's edge
    bytes above the memory bytes they are part of, more row starts than bytes. Each is named with
    its field; the consistent declaration passes."""
    spmv = {
        "flops": 2e9,
        "bytes": 1.2e10,
        "memory_bytes": 8e9,
        "row_visits": 3e7,
        "edge_bytes": 1e8,
        "rank_max": {"flops": 1e9, "bytes": 6e9, "memory_bytes": 4e9, "row_visits": 1.5e7, "edge_bytes": 5e7},
        "footprint_bytes": 1e8,
        "working_set_bytes": 1e6,
        "seconds": 0.5,
        "what": "the SpMV",
        "kind": "gather",
    }
    good = dict(RUN, work={"spmv": spmv})
    assert messages(good) == []
    for change, named in (
        ({"rank_max": dict(spmv["rank_max"], flops=3e9)}, "work/spmv/rank_max/flops: 3e+09 is above the sum"),
        (
            {"row_visits": 1e300, "rank_max": dict(spmv["rank_max"], row_visits=1e300)},
            "work/spmv/row_visits: 1e+300 is above bytes",
        ),
        ({"edge_bytes": 9e9}, "work/spmv/edge_bytes: 9e+09 is above memory_bytes"),
    ):
        found = messages(dict(RUN, work={"spmv": dict(spmv, **change)}))
        assert any(m.startswith(named) for m in found), found
