"""`pxq compare`: ratios of medians with confidence, significance, references, exit codes."""

import json

from test_report import record, with_host, write

from pxq import cli
from pxq.analysis.verdicts import compare


def runs(times, host="n1", mode="flat"):
    return [dict(with_host(record(t, 6.0 / t), host), variant={**record(1, 1)["variant"], "mode": mode}) for t in times]


BASE = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03]


def test_a_clear_slowdown_is_a_significant_regression_and_exit_1(tmp_path, capsys):
    write(tmp_path / "base.jsonl", runs(BASE))
    write(tmp_path / "new.jsonl", runs([t * 1.5 for t in BASE]))
    assert cli.main(["compare", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl")]) == 1
    out = capsys.readouterr().out
    assert "regression" in out and "1.500" in out
    (c,) = compare.compare(runs(BASE), runs([t * 1.5 for t in BASE]), 0.95, 0.05)[0]
    assert c.verdict == "regression" and c.low > 1.3 and c.high < 1.7 and c.p < 0.01


def test_noise_a_small_change_an_improvement_and_too_few_runs_pass(tmp_path):
    same = compare.compare(runs(BASE), runs(list(reversed(BASE))), 0.95, 0.05)[0][0]
    assert same.verdict == "same" and same.low < 1 < same.high
    tight = [1 + (t - 1) / 10 for t in BASE]  # 0.5% noise: a 3% slowdown is real, but below 5%
    small = compare.compare(runs(tight), runs([t * 1.03 for t in tight]), 0.95, 0.05)[0][0]
    assert small.verdict == "within threshold"
    faster = compare.compare(runs(BASE), runs([t * 0.6 for t in BASE]), 0.95, 0.05)[0][0]
    assert faster.verdict == "improvement"
    few = compare.compare(runs(BASE[:3]), runs([t * 2 for t in BASE[:3]]), 0.95, 0.05)[0][0]
    assert few.verdict == "too few runs" and few.ratio == 2.0
    write(tmp_path / "b.jsonl", runs(BASE[:3]))
    write(tmp_path / "n.jsonl", runs([t * 2 for t in BASE[:3]]))
    assert cli.main(["compare", str(tmp_path / "b.jsonl"), str(tmp_path / "n.jsonl")]) == 0


def test_configurations_on_one_side_only_are_listed_and_none_in_common_is_bad_input(tmp_path, capsys):
    write(tmp_path / "b.jsonl", runs(BASE) + runs(BASE, mode="hybrid"))
    write(tmp_path / "n.jsonl", runs(BASE))
    assert cli.main(["compare", str(tmp_path / "b.jsonl"), str(tmp_path / "n.jsonl")]) == 0
    assert "only in BASE: cg" in capsys.readouterr().out
    write(tmp_path / "h.jsonl", runs(BASE, mode="tiled"))
    assert cli.main(["compare", str(tmp_path / "b.jsonl"), str(tmp_path / "h.jsonl")]) == 2
    assert "no configuration in common" in capsys.readouterr().err
    for bad in (["--confidence", "2"], ["--threshold", "-1"]):
        assert cli.main(["compare", str(tmp_path / "b.jsonl"), str(tmp_path / "n.jsonl"), *bad]) == 2
    assert cli.main(["compare", str(tmp_path / "b.jsonl")]) == 2


def test_references_per_system_pass_or_fail(tmp_path, capsys):
    write(tmp_path / "n.jsonl", runs(BASE, host="node7"))
    ref = tmp_path / "ref.json"
    entry = {"system": "node*", "app": "cg", "layout": "1x2", "mode": "flat", "lower": -0.1, "upper": 0.1}
    ref.write_text(json.dumps({"references": [dict(entry, median_s=1.0)]}))
    assert cli.main(["compare", str(tmp_path / "n.jsonl"), "--reference", str(ref)]) == 0
    ref.write_text(json.dumps({"references": [dict(entry, median_s=0.8)]}))
    assert cli.main(["compare", str(tmp_path / "n.jsonl"), "--reference", str(ref)]) == 1
    assert "FAIL" in capsys.readouterr().out
    ref.write_text(json.dumps({"references": [dict(entry, system="other", median_s=1.0)]}))
    assert cli.main(["compare", str(tmp_path / "n.jsonl"), "--reference", str(ref)]) == 2
    ref.write_text(json.dumps({"references": [dict(entry, median_s=1.0, lower=0.2)]}))
    assert cli.main(["compare", str(tmp_path / "n.jsonl"), "--reference", str(ref)]) == 2


def test_short_or_noisy_sides_get_no_verdict_but_what_one_would_need(tmp_path, capsys):
    # 2 ms runs with a 115% spread, 1.5x slower: the report flags them short and noisy, and
    # compare does not call that a regression.
    short = [0.002, 0.0021, 0.0043, 0.0019, 0.002, 0.0022]
    write(tmp_path / "b.jsonl", runs(short))
    write(tmp_path / "n.jsonl", runs([t * 1.5 for t in short]))
    assert cli.main(["compare", str(tmp_path / "b.jsonl"), str(tmp_path / "n.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "not judged" in out and "regression" not in out.split("significant:")[0]
    (c,) = compare.compare(runs(short), runs([t * 1.5 for t in short]), 0.95, 0.05)[0]
    assert c.verdict.startswith("not judged:") and "under 0.1 s" in c.verdict and "spread" in c.verdict
    # Long and tight on one side, noisy on the other: still no verdict, and it says which side.
    noisy = [1.0, 1.6, 0.9, 1.0, 1.5, 1.0]
    (c,) = compare.compare(runs(BASE), runs(noisy), 0.95, 0.05)[0]
    assert c.verdict.startswith("not judged: NEW spread") and "BASE" not in c.verdict


def test_a_reference_entry_that_matches_nothing_is_named(tmp_path, capsys):
    write(tmp_path / "n.jsonl", runs(BASE, host="node7"))
    ref = tmp_path / "ref.json"
    entry = {"system": "node*", "app": "cg", "layout": "1x2", "mode": "flat", "lower": -0.1, "upper": 0.1}
    ref.write_text(json.dumps({"references": [dict(entry, median_s=1.0), dict(entry, layout="4x4", median_s=2.0)]}))
    assert cli.main(["compare", str(tmp_path / "n.jsonl"), "--reference", str(ref)]) == 0
    out = capsys.readouterr().out
    assert "reference entry 1" in out and "layout=4x4" in out and "matches no configuration" in out
    assert cli.main(["compare", str(tmp_path / "n.jsonl"), "--reference", str(ref), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [u["entry"] for u in data["unmatched_references"]] == [1]


def swept(times, sweep="s1", side="a"):
    """Runs of one interleaved sweep, one a round (its repeat), on the side's host."""
    out = []
    for i, t in enumerate(times):
        r = with_host(record(t, 6.0 / t), f"n-{side}")
        r["driver"] = {"sweep_id": sweep, "repeat": i, "run_id": f"{side}{i}"}
        out.append(r)
    return out


# A machine that drifts between rounds far more than the difference between the sides.
DRIFT = [1.0, 2.1, 1.4, 3.0, 1.1, 2.6, 1.7, 1.2]


def test_runs_of_one_sweep_are_compared_round_by_round(tmp_path, capsys):
    """Unpaired, a 10% slowdown is lost in a drift of 3x between rounds; paired within the
    sweep's rounds it is a regression with a tight interval, and an unchanged side is shown
    equivalent within the threshold."""
    noise = [1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001]
    base = swept(DRIFT)
    slower = swept([t * 1.10 * e for t, e in zip(DRIFT, noise)], side="b")
    (c,) = compare.compare(base, slower, 0.95, 0.05)[0]
    assert c.paired == 8 and c.verdict == "regression" and 1.08 < c.low < c.ratio < c.high < 1.12
    unpaired = [dict(r, driver={}) for r in slower]
    (u,) = compare.compare(base, unpaired, 0.95, 0.05)[0]
    assert u.paired == 0 and u.verdict != "regression"  # the drift swamps it
    (same,) = compare.compare(base, swept([t * e for t, e in zip(DRIFT, noise)], side="b"), 0.95, 0.05)[0]
    assert same.paired == 8 and same.verdict == "equivalent" and same.low < 1 < same.high
    write(tmp_path / "b.jsonl", base)
    write(tmp_path / "n.jsonl", slower)
    assert cli.main(["compare", str(tmp_path / "b.jsonl"), str(tmp_path / "n.jsonl")]) == 1
    out = capsys.readouterr().out
    assert "8 paired" in out and "regression" in out


def test_pairs_need_one_sweep_one_run_a_side_a_round_and_never_a_run_with_itself():
    base = swept(DRIFT)
    other_sweep = swept([t * 1.1 for t in DRIFT], sweep="s2", side="b")
    (c,) = compare.compare(base, other_sweep, 0.95, 0.05)[0]
    assert c.paired == 0  # two sweeps: their rounds are not the same moments
    (itself,) = compare.compare(base, base, 0.95, 0.05)[0]
    assert itself.paired == 0  # a file given as both sides pairs no run with itself
    few = swept([t * 1.1 for t in DRIFT[:3]], side="b")
    (c,) = compare.compare(base, few, 0.95, 0.05)[0]
    assert c.paired == 0 and c.verdict.startswith("not judged")  # 3 rounds in common: under MIN_PAIRS, and noisy


def test_a_run_in_two_copies_of_one_file_counts_once_and_a_conflict_is_named(tmp_path, capsys):
    import pytest

    from pxq.core import paths, records
    from pxq.core.errors import InputError

    folder = tmp_path / "both"
    folder.mkdir()
    ided = [{**r, "driver": {**r.get("driver", {}), "run_id": f"run{k:02d}"}} for k, r in enumerate(runs(BASE))]
    write(folder / "base.jsonl", ided)
    (folder / "copy.jsonl").write_bytes((folder / "base.jsonl").read_bytes())
    once = records.read_files(paths.expand([str(folder)]))
    assert len(once) == len(BASE)
    write(tmp_path / "same.jsonl", runs(list(reversed(BASE))))
    assert cli.main(["compare", str(folder), str(tmp_path / "same.jsonl"), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert len(row["base"]) == len(BASE)
    lines = (folder / "copy.jsonl").read_text().splitlines()
    changed = json.loads(lines[0])
    changed["time"]["total"] *= 2
    (folder / "copy.jsonl").write_text("\n".join([json.dumps(changed), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match="with different contents"):
        records.read_files(paths.expand([str(folder)]))
    assert cli.main(["compare", str(folder), str(tmp_path / "same.jsonl")]) == 2


def test_more_repeats_never_turn_a_quiet_row_noisy_nor_many_rows_into_false_regressions():
    """At scale: the same 5% noise is not flagged noisy at 625 repeats when it is not at 10 (the
    range grows with the runs, the interquartile range does not); 200 configurations with no
    real change are not a gate's "regressions" (Holm's correction), and 625 runs a side are
    compared in seconds (the rank test's normal approximation, never an exact one that takes
    minutes or a NaN p turned into a verdict)."""
    import random
    import time

    from pxq.analysis.exports import report

    rng = random.Random(7)
    few = report.summarize(runs([rng.gauss(1.0, 0.05) for _ in range(10)]))[0]
    many = report.summarize(runs([rng.gauss(1.0, 0.05) for _ in range(625)]))[0]
    assert "noisy" not in few.flags and "noisy" not in many.flags and many.spread > report.MAX_SPREAD
    wild = report.summarize(runs([rng.gauss(1.0, 0.3) for _ in range(625)]))[0]
    assert "noisy" in wild.flags  # real noise still is
    t0 = time.monotonic()
    one, other = ([rng.gauss(1.0, 0.05) for _ in range(625)] for _ in range(2))
    (c,) = compare.compare(runs(one), runs(other), 0.95, 0.0)[0]
    assert time.monotonic() - t0 < 60 and c.p is not None
    base, new = [], []
    for i in range(200):
        base += runs([rng.gauss(1.0, 0.02) for _ in range(6)], host=f"h{i}")
        new += runs([rng.gauss(1.0, 0.02) for _ in range(6)], host=f"h{i}")
    rows = compare.compare(base, new, 0.95, 0.0)[0]
    assert len(rows) == 200 and all(r.p_adjusted is not None and r.p_adjusted >= r.p for r in rows)
    assert sum(r.verdict in ("regression", "improvement", "within threshold") for r in rows) == 0
    raw = sum(r.p < 0.05 for r in rows)  # what the gate would have said without the correction
    assert raw > 0
    taken_back = [r for r in rows if "after Holm's correction over 200 comparisons" in r.verdict]
    assert len(taken_back) == sum(r.p < 0.05 and (r.low > 1 or r.high < 1) for r in rows) <= raw
