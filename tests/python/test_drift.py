"""The machine's drift between its ceilings and its runs: bandwidth references re-timed beside the
runs scale the ceilings to the machine as it was when each run started (pxq.analysis.models.drift), and
`pxq roofline` says the drift and predicts with it."""

import copy
import json
import uuid
from pathlib import Path

import pytest
from test_roofline import CEIL, M, ring_record, rows

from pxq import cli
from pxq.analysis.models import drift, roofline
from pxq.core.errors import InputError
from pxq.machine import ceilings
from pxq.probes import ceilprobe

K = 1 << 10


PROBE = json.loads((Path(__file__).parent / "data" / "bandwidth-record.json").read_text())


def reference(size: int, one: float, two: float, date: str, kind: str | None = None) -> dict:
    """A bandwidth probe record re-timing a ceilings' curve (the stream's update as ranks, or an
    access kind's kernel; a real record's frame) with these totals."""
    rec = copy.deepcopy(PROBE)
    rec["context"]["date"] = date
    rec["size"]["array_bytes"] = size
    for row, total in zip(rec["kernels"][0]["rows"], (one, two)):
        row["total_gbs"], row["per_core_gbs"] = total, total / row["cores"]
    if kind:
        rows = [
            {"cores": r["cores"], "seconds": 1.0, "total_gbs": r["total_gbs"], "total_gflops": r["total_gbs"]}
            for r in rec["kernels"][0]["rows"]
        ]
        rec["kernels"] = [{"kernel": kind, "kind": True, "rows": rows}]
    rec["driver"]["run_id"] = uuid.uuid4().hex
    return rec


def at_date(rec: dict, date: str) -> dict:
    rec["context"]["date"] = date
    return rec


def test_only_the_ceilings_curves_as_ranks_are_references():
    ref = reference(64 * M, 30, 50, "2026-11-27T10:00:00Z")
    assert drift.is_reference(ref) and drift.is_reference(reference(64 * M, 8, 16, "2026-11-27T10:00:00Z", "fft"))
    threads = copy.deepcopy(ref)
    threads["size"]["as"] = "threads"
    triad = copy.deepcopy(ref)
    triad["kernels"][0]["kernel"] = "triad"
    failed = {**ref, "status": "failed"}
    assert not any(drift.is_reference(r) for r in (threads, triad, failed, ring_record(64 * M, None)))


def test_the_drift_is_the_median_of_the_references_near_in_time_and_interpolates_in_size():
    # The ceilings' stream: 30/50 GB/s at 64M, 100/200 at 256K (CEIL's curve).
    refs = [
        reference(64 * M, 15, 25, "2026-11-27T10:00:00Z"),  # memory at half the ceilings'
        reference(64 * M, 30, 50, "2026-11-27T10:10:00Z"),  # then as measured
        reference(64 * M, 30, 50, "2026-11-27T10:40:00Z"),
        reference(256 * K, 100, 200, "2026-11-27T10:00:00Z"),  # the cache unmoved
        reference(64 * M, 15, 25, "2026-11-27T13:00:00Z"),  # later, memory at half and 0.6
        reference(64 * M, 18, 30, "2026-11-27T13:05:00Z"),
    ]
    fs = drift.factors(refs, CEIL)
    assert set(fs) == {"stream"}
    stream = fs["stream"]
    when = {m: drift._seconds(f"2026-11-27T{m}:00Z") for m in ("09:00", "10:05", "10:30", "11:30", "13:02")}
    # The two within 15 minutes of 13:02 agree the bus is slower: their median.
    assert drift.at(stream, when["13:02"], 64 * M, 2) == pytest.approx(0.55)
    # The two within 15 minutes of 10:05 (0.5 and 1) cannot tell a move from their own noise:
    # the kept ceiling stands.
    assert drift.at(stream, when["10:05"], 64 * M, 2) == pytest.approx(1.0)
    assert drift.at(stream, when["10:30"], 64 * M, 2) == pytest.approx(1.0)
    assert drift.at(stream, when["09:00"], 64 * M, 1) == pytest.approx(0.5)  # none near: the nearest one
    assert drift.at(stream, when["11:30"], 1024 * M, 2) == pytest.approx(1.0)  # beyond the sizes: the nearest's
    assert drift.at(stream, when["10:05"], 16 * K, 2) == pytest.approx(1.0)
    # Halfway between 256K and 64M on a log scale (4M), at 10:00: halfway between 1 and 0.5.
    assert drift.at(stream, drift._seconds("2026-11-27T09:50:00Z"), 4 * M, 2) == pytest.approx(0.75)
    s = {row["bytes"]: row for row in drift.summary(fs, 2)}
    assert s[64 * M]["references"] == 5 and (s[64 * M]["min"], s[64 * M]["max"]) == pytest.approx((0.5, 1.0))
    assert s[64 * M]["within_noise"] and s[256 * K]["within_noise"]  # 1 lies in [0.5, 1]; the cache at 1


def test_a_run_is_predicted_against_each_curve_scaled_by_its_own_references():
    gather = [{"bytes": 64 * M, "rate": [dict(r) for r in CEIL["curve"][3]["gbs"]]}]  # 30/50 GB/s
    c = {**CEIL, "kinds": {"gather": gather, "stencil": copy.deepcopy(gather)}}
    refs = [
        reference(64 * M, 15, 25, "2026-11-27T10:00:00Z"),  # the stream at half
        reference(64 * M, 36, 60, "2026-11-27T10:00:00Z", "gather"),  # the gather 20% faster
    ]
    fs = drift.factors(refs, c)
    run = at_date(ring_record(64 * M, None, total=1.0), "2026-11-27T10:01:00Z")
    scaled = drift.for_run(run, c, fs)
    assert ceilings.bandwidth(scaled, 64 * M, 2) == pytest.approx(25)
    assert ceilings.kind_rate(scaled, "gather", 64 * M, 2) == pytest.approx(60)
    assert ceilings.kind_rate(scaled, "stencil", 64 * M, 2) == 50, "a kind without references is kept"
    assert ceilings.bandwidth(c, 64 * M, 2) == 50, "the kept ceilings are not changed"
    assert drift.for_run(run, c, None) is c
    # The untiled ring streams from memory: at half the bandwidth it takes about twice as long.
    (plain,) = roofline.points([run], c)
    (drifted,) = roofline.points([run], c, fs)
    assert drifted["predicted"] == pytest.approx(2 * plain["predicted"], rel=0.05)


def test_a_reference_with_a_broken_date_is_refused_with_the_fix():
    with pytest.raises(InputError, match="not an ISO 8601 time"):
        drift.factors([reference(64 * M, 15, 25, "yesterday")], CEIL)


def test_pxq_roofline_says_the_drift_and_flags_a_machine_that_moved(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(ceilprobe, "here", lambda say, remeasure=False: CEIL)
    runs = [at_date(ring_record(64 * M, None, total=1.0), "2026-11-27T10:05:00Z")]
    refs = [
        reference(64 * M, 15, 25, "2026-11-27T10:00:00Z"),
        reference(64 * M, 30, 50, "2026-11-27T10:10:00Z"),
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs + refs))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr().out
    # Two references, 0.5 and 1: the kept ceiling within their range, so not applied (starred).
    assert "drift of stream, 2 cores busy, x the kept ceilings: 64M 0.75* (0.50 to 1.00)" in out
    assert "*: the kept ceiling lies within the references' quartiles" in out
    assert "moved more than 25%" in out and "stream 64M" in out
    plain = float(out.split("ring 64M 1x2x1 flat")[1].split("│")[6])
    # Two references that agree the bus is at half: applied, the untiled ring predicted slower.
    refs = [reference(64 * M, 15, 25, "2026-11-27T10:00:00Z"), reference(64 * M, 15, 26, "2026-11-27T10:10:00Z")]
    path.write_text("".join(json.dumps(r) + "\n" for r in runs + refs))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 0
    out = capsys.readouterr().out
    assert "64M 0.51 (0.50 to 0.52)" in out and "not applied" not in out
    assert float(out.split("ring 64M 1x2x1 flat")[1].split("│")[6]) > 1.5 * plain
    assert cli.main(["roofline", str(path), "--no-drift", "--plot", str(tmp_path / "r.png")]) == 0
    assert "drift of" not in capsys.readouterr().out
    # Without references the ceilings are used as kept, and the way to time them is named.
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    assert cli.main(["roofline", str(path), "--plot", str(tmp_path / "r.png")]) == 0
    assert "pxq probe reference" in capsys.readouterr().out


def test_pxq_probe_reference_retimes_the_ceilings_own_measurements(tmp_path, monkeypatch, capsys):
    """Every curve at its reference sizes, with the arguments the ceilings were measured with,
    appended to the results; each said against the kept ceilings."""
    asked = []

    def run(app, layout, args, mode, results):
        asked.append((app, str(layout), mode, results, args))
        size = int(args[args.index("--array") + 1])
        kind = args[args.index("--kind") + 1] if "--kind" in args else None
        return reference(size, 30, 50, "2026-11-27T10:00:00Z", kind)

    monkeypatch.setattr(ceilprobe, "_run", run)
    monkeypatch.setattr(ceilprobe.envinfo, "cores", lambda: 2)
    kept = {**CEIL, "kinds": {k: [{"bytes": 64 * K, "rate": rows(30, 100)}] for k in ceilings.kinds()}}
    monkeypatch.setattr(ceilings, "load", lambda machine: kept)
    out = tmp_path / "ref.jsonl"
    assert cli.main(["probe", "reference", "--results", str(out)]) == 0
    assert {(a[0], a[1], a[2], a[3]) for a in asked} == {("probe-bandwidth", "1x2", "flat", out)}
    stream = [a[4] for a in asked if "--kernels" in a[4]]
    assert [s[s.index("--array") + 1] for s in stream] == [str(256 * K), str(64 * M)] * ceilings.REPEATS
    assert stream[0] == ceilprobe._stream_args(256 * K)  # as the ceilings' curve was measured
    for kind in ceilings.kinds():
        mine = [a[4] for a in asked if "--kind" in a[4] and kind in a[4]]
        assert mine == [ceilprobe._kind_args(kind, s) for s in ceilprobe.REFERENCE_KINDS] * ceilings.REPEATS
    said = capsys.readouterr().out
    table = {line.split("│")[1].strip(): line.split("│")[2:-1] for line in said.splitlines() if line.count("│") > 2}
    assert [c.strip() for c in table["stream"]] == ["", "0.25", "", "1.00"]  # 64K, 256K, 4M, 64M: 50 / 200, 50 / 50
    assert [c.strip() for c in table["gather"]] == ["0.50", "", "0.50", "0.50"]  # 50 over the kept 100
    per_round = len(ceilprobe.REFERENCE_STREAM) + len(ceilings.kinds()) * len(ceilprobe.REFERENCE_KINDS)
    assert f"{per_round * ceilings.REPEATS} reference(s) appended to {out}" in said


def test_one_noisy_reference_among_many_is_not_a_machine_that_moved():
    steady = [reference(64 * M, 30, 50, f"2026-11-27T10:0{m}:00Z") for m in range(5)]
    glitch = reference(64 * M, 30, 10, "2026-11-27T10:05:00Z")
    (row,) = drift.summary(drift.factors([*steady, glitch], CEIL), 2)
    assert (row["min"], row["max"], row["median"]) == pytest.approx((0.2, 1.0, 1.0))
    assert row["quartiles"] == pytest.approx([0.8, 1.0])  # one glitch: the range is wide, the quartiles not
    moved = [reference(64 * M, 30, v, f"2026-11-27T10:0{m}:00Z") for m, v in enumerate((25, 25, 25, 50, 50, 50))]
    (row,) = drift.summary(drift.factors(moved, CEIL), 2)
    assert row["quartiles"][1] > 1.25 * row["quartiles"][0]
