import shlex
from pathlib import Path

import pytest
from conftest import complete
from rich.console import Console

from pxq.analysis.exports import report
from pxq.core import paths, procs, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, parse_layouts
from pxq.experiments import runner, sweep
from pxq.experiments.runner import RunResult, RunSpec


def base(tmp_path: Path) -> RunSpec:
    return RunSpec(app="ring", layout=Layout(1, 1), results=tmp_path / "r.jsonl", cores=2)


def test_plan_skips_modes_that_contradict_the_layout(tmp_path):
    specs, notes = sweep.plan(
        base(tmp_path), parse_layouts("1x2,2x1,1x1x2"), ["flat", "hybrid", "tiled"], ["64K", "256K"], ["openmp"], None
    )
    got = [f"{s.layout} {s.resolved()[0]} {s.resolved()[2]}" for s in specs]
    assert got == (
        ["1x2 flat off", "1x2 tiled 64K", "1x2 tiled 256K"]
        + ["2x1 flat off", "2x1 tiled 64K", "2x1 tiled 256K"]
        + ["1x1x2 hybrid off", "1x1x2 tiled 64K", "1x1x2 tiled 256K"]
    )
    assert any("1x2 hybrid" in n for n in notes) and any("1x1x2 flat" in n for n in notes)


def test_repeats_are_interleaved(tmp_path):
    specs, _ = sweep.plan(base(tmp_path), parse_layouts("1x2,2x1"), ["flat"], ["256K"], ["openmp"], None)
    runs = sweep.interleave(specs, 3)
    assert [(str(r.layout), r.repeat) for r in runs] == [
        ("1x2", 0),
        ("2x1", 0),
        ("1x2", 1),
        ("2x1", 1),
        ("1x2", 2),
        ("2x1", 2),
    ]
    assert len({r.sweep_key for r in runs}) == 6


def fake_record(spec: RunSpec, seconds: float, status: str = "ok") -> dict:
    mode, threads, tile = spec.resolved()
    return complete(
        {
            "app": "ring",
            "status": status,
            "size": {"block_bytes": 1 << 20, "passes": 8, "flops": 1, "iterations": 3},
            "variant": {
                "mode": mode,
                "threads": threads,
                "tile_bytes": 0 if tile == "off" else 262144,
                "backend": spec.backend,
            },
            "layout": {
                "nodes": spec.layout.nodes,
                "ranks_per_node": spec.layout.ranks_per_node,
                "threads": threads,
                "alloc": spec.alloc,
            },
            "time": {"total": seconds, "comm": 0.0},
            "metrics": {"effective_gbs": 1.0},
            "driver": {"sweep_key": spec.sweep_key, "sweep_id": spec.sweep_id, "sweep_plan": spec.sweep_plan},
        }
    )


def test_failures_are_recorded_and_resume_skips_finished_runs(tmp_path, monkeypatch):
    specs, _ = sweep.plan(base(tmp_path), parse_layouts("1x2,2x1"), ["flat"], ["256K"], ["openmp"], None)
    runs = sweep.interleave(specs, 2)
    calls = []

    def fake_execute(spec, echo=False):
        calls.append(spec.sweep_key)
        if str(spec.layout) == "2x1" and spec.repeat == 1 and len(calls) <= 4:
            rec = runner.error_record(spec, "timeout", "r1")  # what execute() appends
            rec["error"] = runner._error_block(procs.Finished(-1, "killed\n", 1.0, True), "timeout")
            records.append(spec.results, rec)
            return RunResult("timeout", -1, 1.0, "killed", rec)
        rec = fake_record(spec, 1.0)
        records.append(spec.results, rec)
        return RunResult("ok", 0, 1.0, "", rec)

    monkeypatch.setattr(runner, "execute", fake_execute)
    console = Console(quiet=True)
    sweep.run(runs, tmp_path / "r.jsonl", resume=False, console=console)
    assert len(calls) == 4
    statuses = sorted(r["status"] for r in records.read(tmp_path / "r.jsonl"))
    assert statuses == ["ok", "ok", "ok", "timeout"]
    calls.clear()
    sweep.run(runs, tmp_path / "r.jsonl", resume=True, console=console)
    assert len(calls) == 1  # only the run that timed out


BANNER = "-" * 74 + "\nPrimary job  terminated normally, but 1 process returned\n" + "-" * 74 + "\n"


def test_a_configuration_the_app_refuses_is_skipped_and_the_others_run(tmp_path, monkeypatch):
    specs, _ = sweep.plan(base(tmp_path), parse_layouts("1x2,2x1"), ["flat"], ["256K"], ["openmp"], None)
    runs = sweep.interleave(specs, 3)
    calls = []

    def fake_execute(spec, echo=False):
        calls.append(str(spec.layout))
        if str(spec.layout) == "2x1":  # the app's message sits between the launcher's banners
            return RunResult("bad-input", 2, 0.1, f"pxq-ring: error: not on 2 nodes: use 1x2\n{BANNER}", None)
        rec = fake_record(spec, 1.0)
        records.append(spec.results, rec)
        return RunResult("ok", 0, 1.0, "", rec)

    monkeypatch.setattr(runner, "execute", fake_execute)
    refused: dict[str, str] = {}
    recs = sweep.run(runs, tmp_path / "r.jsonl", resume=False, console=Console(quiet=True), refused=refused)
    assert calls.count("2x1") == 1 and calls.count("1x2") == 3  # its other repeats never start
    assert len(recs) == 3 and all(r["layout"]["nodes"] == 1 for r in recs)
    assert list(refused.values()) == ["2x1 flat: pxq-ring: error: not on 2 nodes: use 1x2"]
    assert [sweep.configuration_key(r) for r in runs if str(r.layout) == "2x1"] == list(refused) * 3
    # Without `refused` (and when every configuration is refused) the sweep stops at once.
    with pytest.raises(InputError, match="refused 2x1 flat: pxq-ring: error: not on 2 nodes"):
        sweep.run([r for r in runs if str(r.layout) == "2x1"], tmp_path / "r2.jsonl", False, Console(quiet=True), {})
    with pytest.raises(InputError, match="the sweep stopped"):
        sweep.run(runs, tmp_path / "r3.jsonl", resume=False, console=Console(quiet=True))


def test_summary_speedup_is_against_flat_with_the_same_cores_per_node(tmp_path):
    specs, _ = sweep.plan(
        base(tmp_path), parse_layouts("1x2,1x1x2"), ["flat", "hybrid", "tiled"], ["256K"], ["openmp"], None
    )
    times = {("1x2", "flat"): 2.0, ("1x2", "tiled"): 1.0, ("1x1x2", "hybrid"): 1.6, ("1x1x2", "tiled"): 0.8}
    recs = []
    for spec in sweep.interleave(specs, 1):
        recs.append(fake_record(spec, times[(str(spec.layout), spec.resolved()[0])]))
    recs.append(fake_record(sweep.interleave(specs, 1)[0], 2.2))  # second flat run: median 2.1
    rows = {(str(r.layout), r.mode): r for r in report.summarize(recs)}
    assert rows[("1x2", "flat")].median == 2.1
    assert abs(rows[("1x2", "tiled")].speedup - 2.1) < 1e-12
    assert abs(rows[("1x1x2", "hybrid")].speedup - 2.1 / 1.6) < 1e-12
    assert abs(rows[("1x2", "flat")].spread - 0.2 / 2.1) < 1e-12


def test_bar_chart_writes_a_png(tmp_path):
    spec = sweep.interleave(
        sweep.plan(base(tmp_path), parse_layouts("1x2"), ["flat", "tiled"], ["256K"], ["openmp"], None)[0], 1
    )
    rows = report.summarize([fake_record(spec[0], 2.0), fake_record(spec[1], 1.0)])
    out = report.bar_chart(rows, tmp_path / "c.png", "test")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table_shows_the_comm_share_and_keeps_decompositions_apart(tmp_path):
    spec = sweep.interleave(
        sweep.plan(base(tmp_path), parse_layouts("1x2"), ["flat"], ["256K"], ["openmp"], None)[0], 1
    )[0]
    recs = []
    for decomp, total, comm in (("1d", 2.0, 0.5), ("2d", 4.0, 2.0)):
        rec = fake_record(spec, total)
        rec.update(app="ft", size={"class": "A", "decomp": decomp})
        rec["time"]["comm"] = comm
        rec["metrics"] = {"mops_total": 100.0}  # FT reports no bandwidth
        recs.append(rec)
    rows = report.summarize(recs)
    assert sorted(r.size for r in rows) == ["A 1d", "A 2d"]
    console = Console(record=True, width=200)
    report.print_table(rows, console=console)
    text = console.export_text()
    assert "25.0%" in text and "50.0%" in text
    rows_text = [line for line in text.splitlines() if line.startswith("│") and ("A 1d" in line or "A 2d" in line)]
    assert len(rows_text) == 2 and all(line.count(" - ") >= 1 for line in rows_text)
    assert "ft 1x2 flat A 1d, ft 1x2 flat A 2d" in text  # the note names the size that tells them apart


def test_submit_collect_manifests_damaged_or_of_another_app_are_refused(tmp_path, capsys):
    from pxq import cli

    results = tmp_path / "ring.jsonl"
    jobs = tmp_path / "ring.jobs"
    jobs.mkdir()
    (jobs / "manifest.json").write_text("{not json")
    assert cli.main(["sweep", "ring", "--collect", "--results", str(results)]) == 2
    assert "is damaged" in capsys.readouterr().err and not results.exists()
    (jobs / "manifest.json").write_text('{"app": "cg", "results": "x", "jobs": []}')
    assert cli.main(["sweep", "ring", "--collect", "--results", str(results)]) == 2
    assert "sweep of cg" in capsys.readouterr().err


def test_submit_dry_run_prints_one_script_per_layout_and_writes_nothing(tmp_path, fake_build, capsys):
    from pxq import cli

    results = tmp_path / "mg.jsonl"
    argv = ["sweep", "mg", "--layouts", "1x2,2x1x2", "--modes", "flat,tiled", "--repeat", "3", "--results"]
    assert cli.main([*argv, str(results), "--submit", "--dry-run", "--", "--class", "W"]) == 0
    out = capsys.readouterr().out
    assert out.count("#!/bin/bash") == 2
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2" in out
    assert "--layouts 2x1x2 --modes flat,tiled" in out and "--repeat 3" in out and "-- --class W" in out
    assert "--resume" in out and "(6 runs)" in out and "(3 runs)" in out  # 1x2: flat+tiled; 2x1x2: tiled
    assert not (tmp_path / "mg.jobs").exists() and not results.exists()


def test_a_job_script_carries_hostile_options_as_data(tmp_path, fake_build, capsys, monkeypatch):
    """App options with shell syntax, quotes and newlines reach the sweep in the job script as
    the very words given: the script, run by bash, executes none of them."""
    import json
    import subprocess
    import sys

    from pxq import cli

    fake = tmp_path / "fake-python"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    hostile = ["--block", "$(touch PWNED)", "`touch PWNED`; touch PWNED", "a\nb' \"c", "--x=$HOME"]
    results = tmp_path / "ring.jsonl"
    argv = ["sweep", "ring", "--layouts", "1x2", "--modes", "flat", "--results", str(results)]
    assert cli.main([*argv, "--submit", "--dry-run", "--", *hostile]) == 0
    script = capsys.readouterr().out.split("\n", 1)[1]  # after the "# path" line
    assert script.startswith("#!/bin/bash")
    assert len([ln for ln in script.splitlines() if ln.startswith("#SBATCH")]) == 5
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got[-len(hostile) - 1 :] == ["--", *hostile]
    assert not (tmp_path / "PWNED").exists()


def test_batch_scripts_carry_the_sites_options(tmp_path, fake_build, capsys):
    from pxq import cli

    argv = ["sweep", "ring", "--layouts", "2x1", "--modes", "flat", "--results", str(tmp_path / "r.jsonl"), "--submit"]
    site = ["--time", "1:30:00", "--account", "proj42", "--partition", "debug", "--exclusive"]
    assert cli.main([*argv, "--dry-run", *site, "--sbatch=--qos=short", "--sbatch=--mem=4G"]) == 0
    out = capsys.readouterr().out
    for line in ("--time=1:30:00", "--account=proj42", "--partition=debug", "--exclusive", "--qos=short", "--mem=4G"):
        assert f"#SBATCH {line}\n" in out
    bad = [  # the options as typed, and what the refusal names
        ("--time '90 min'", "--time"),
        ("--account 'a b'", "--account"),
        ("--partition '$(id)'", "--partition"),
        ("--sbatch '--qos=x y'", "one word"),
        ("--sbatch qos=x", "one word"),
    ]
    for typed, needle in bad:
        assert cli.main([*argv, "--dry-run", *shlex.split(typed)]) == 2
        assert needle in capsys.readouterr().err
    # Without --submit they mean nothing: refused rather than ignored.
    assert cli.main(["sweep", "ring", "--layouts", "1x2", "--time", "10", "--results", str(tmp_path / "x.jsonl")]) == 2
    assert "go with --submit" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def test_the_commit_is_read_once_so_a_sweep_s_runs_carry_one(monkeypatch):
    """A commit made while a sweep runs must not split its configurations (reports keep
    commits apart): the checkout's commit is read once per command."""
    asked = []

    def describe(cmd, **kw):
        asked.append(cmd)
        return paths.subprocess.CompletedProcess(cmd, 0, stdout=f"abc{len(asked)}\n", stderr="")

    paths.git_commit.cache_clear()
    monkeypatch.setattr(paths.subprocess, "run", describe)
    monkeypatch.setattr(paths, "IN_CHECKOUT", True)
    try:
        assert [paths.git_commit() for _ in range(3)] == ["abc1"] * 3
        assert len(asked) == 1
    finally:
        paths.git_commit.cache_clear()
