"""ReFrame runs pxq's test library (packaging/reframe) on this machine: every proxy in every
variant passes with the record's performance variables; a run whose messages are corrupted
fails in sanity; a site's reference that the run misses fails in performance."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import BUILD, ROOT, eco_env, eco_tool, run

RFM = ROOT / "packaging" / "reframe"
APPS = ["ring", "cg", "mg", "ft", "is"]
MODES = ["flat", "tiled", "hybrid"]


def reframe(tmp: Path, checks: str, *extra: str, env_extra: dict[str, str] | None = None):
    argv = [str(eco_tool("reframe")), "-C", str(RFM / "settings.py"), "-c", str(RFM / "checks" / checks)]
    argv += ["--prefix", str(tmp / "rfm"), "--report-file", str(tmp / "report.json"), *extra, "-r"]
    proc = run(argv, cwd=tmp, env=eco_env(tmp, **(env_extra or {})))
    report = json.loads((tmp / "report.json").read_text()) if (tmp / "report.json").exists() else {}
    cases = [case for r in report.get("runs", [])[:1] for case in r["testcases"]]
    return proc, cases


def perfvars(case: dict) -> dict[str, float]:
    """{variable: value} from the report's perfvalues ({system:partition:variable: [value, ...]})."""
    return {key.rsplit(":", 1)[1]: value[0] for key, value in (case.get("perfvalues") or {}).items()}


def test_every_proxy_and_variant_passes_with_the_records_figures(tmp_path):
    proc, cases = reframe(tmp_path, "pxq_local.py")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    names = {c["name"] for c in cases}
    assert names == {f"pxq_proxy_local %app={a} %mode={m}" for a in APPS for m in MODES} | {
        "pxq_osu_local %benchmark=latency",
        "pxq_osu_local %benchmark=bw",
    }
    assert all(c["result"] == "pass" for c in cases), [(c["name"], c.get("fail_reason")) for c in cases]
    for case in cases:
        values = perfvars(case)
        if case["name"].startswith("pxq_osu_local"):
            assert list(values) == [case["name"].split("=")[1]] and values[list(values)[0]] > 0
            continue
        app = case["name"].split("%app=")[1].split()[0]
        assert set(values) == {"time_total", "rate"} and values["time_total"] > 0, case["name"]
        # The figures are the record's own: pxq's record is kept beside ReFrame's outputs.
        kept = Path(case["outputdir"]) / "record.jsonl"
        assert kept.is_relative_to(tmp_path / "rfm" / "output") and kept.exists(), case["name"]
        record = json.loads(kept.read_text().splitlines()[-1])
        assert record["app"] == app and record["variant"]["mode"] == case["name"].split("%mode=")[1]
        assert values["time_total"] == record["time"]["total"]
        assert values["rate"] == record["metrics"]["effective_gbs" if app == "ring" else "mops_total"]
    # ReFrame's default performance log, kept whole: the result, the job id, the references and
    # thresholds, with pxq's variables among the check's loggable fields.
    perflog = tmp_path / "rfm" / "perflogs" / "pxq-local" / "default" / "pxq_proxy_local.log"
    header, *lines = perflog.read_text().splitlines()
    fields = header.split("|")
    assert fields[:2] == ["result", "job_completion_time"]
    assert {"jobid", "time_total_value", "time_total_ref", "time_total_lower_thres", "rate_unit", "app", "mode"} <= set(
        fields
    )
    assert lines and all(ln.split("|")[0] == "pass" and len(ln.split("|")) == len(fields) for ln in lines)


def test_corrupted_messages_fail_the_check_in_sanity(tmp_path):
    lib = BUILD / "lib" / "libpxq-test-corrupt-doubles.so"
    assert lib.exists(), f"{lib} is missing: ./pxq build makes it"
    proc, cases = reframe(tmp_path, "pxq_faults.py")
    assert proc.returncode != 0
    assert [c["name"] for c in cases] == ["pxq_corrupted_cg %app=cg %mode=flat"]
    case = cases[0]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", case
    assert "exited 1" in case["fail_reason"], case["fail_reason"]


def test_a_sites_reference_is_applied_and_can_fail(tmp_path):
    # A reference no run can meet: 1 microsecond, at most 10% above.
    name = "pxq_proxy_local %app=ring %mode=flat"
    refs = {"pxq-local:default": {name: {"time_total": [1e-6, None, 0.1, "s"]}}}
    (tmp_path / "refs.json").write_text(json.dumps(refs))
    env = {"PXQ_REFRAME_REFERENCES": str(tmp_path / "refs.json")}
    proc, cases = reframe(tmp_path, "pxq_local.py", "-n", "pxq_proxy_local.*ring.*flat", env_extra=env)
    assert proc.returncode != 0
    assert [c["name"] for c in cases] == [name]
    assert cases[0]["result"] == "fail" and cases[0]["fail_phase"] == "performance", cases[0]
