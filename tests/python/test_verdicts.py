"""Verdicts a referee would sign: the catalogue of published findings (every condition marked),
findings split into parts and combined, self-checks apart, plausibility guards that no verdict
rests on, and working sets grown past the measured last cache level."""

from __future__ import annotations

import json

import pytest

from pxq.analysis.verdicts import findings, paired, plausible
from pxq.experiments import study, studykit
from pxq.experiments.studykit import registry
from pxq.machine import caches
from pxq.studies import contention, counters, scalability, stride, tiling

MIB = 1 << 20


# ---- the catalogue ----


def walk(node, path=""):
    """Every (path, dict) in published.json."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from walk(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")


def test_every_condition_finding_and_part_carries_its_mark():
    data = findings.published()
    marked = 0
    for key, sec in data.items():
        if not isinstance(sec, dict) or "findings" not in sec:
            continue
        assert sec.get("conditions"), f"{key}: no conditions"
        for c in sec["conditions"]:
            assert isinstance(c, dict) and c["mark"] in findings.MARKS, f"{key}: unmarked condition {c}"
            assert c["mark"] == "published" or c.get("why"), f"{key}: {c['mark']} without its reason"
            marked += 1
    for path, node in walk(data):
        if "text" in node or "claim" in node:
            assert node.get("mark") in findings.MARKS, f"{path}: no mark"
            if node["mark"] != "published":
                assert node.get("why"), f"{path}: an assumption or a correction says why"
    assert marked >= 25


def test_the_audits_conditions_are_there_with_the_right_marks():
    md = findings.section("message_distribution")
    block = [c for c in md["conditions"] if "block" in c["text"]]
    assert block and block[0]["mark"] == "assumption"
    assert md["even_distribution_mark"]["mark"] == "correction" and "15" in md["even_distribution_mark"]["why"]
    tiling_marks = {c["mark"] for c in findings.section("tiling")["conditions"] if "execution time" in c["text"]}
    assert tiling_marks == {"assumption"}
    assert any("no injected" in c["text"] for c in findings.section("collective_variability")["conditions"])
    assert any("500 MB" in c["text"] for c in findings.section("rank_pair_throughput")["conditions"])
    ft = findings.entry("allocation/ft_is")
    assert {p["id"] for p in ft.parts} == {"time", "network_time", "bytes"}


def test_pxqs_own_readings_are_marked_with_the_papers_words_beside_them():
    """The ring's passes, the stride axis and the cause given for MG's result are pxq's, not the
    papers': marked as assumptions, the paper's words quoted, and said in the studies' notes."""
    tiling = findings.readings(["tiling"])
    assert any("8 read-modify-write passes" in r and 'the paper: "each process owns 64 MB' in r for r in tiling)
    assert any("2^14 = 16 KiB" in r and "2^13-2^14" in r for r in findings.readings(["memory_stride"]))
    mg = next(f for f in findings.section("allocation")["findings"] if f["text"].startswith("MG slower"))
    assert "power-of-two" not in mg["text"]
    assert any("power-of-two" in r and r.startswith("pxq's assumption") for r in findings.readings(["allocation"]))


def test_refs_are_unique_and_every_finding_has_parts():
    refs = [e.ref for e in findings.catalogue()]
    assert len(refs) == len(set(refs))
    for e in findings.catalogue():
        ids = [p["id"] for p in e.parts]
        assert ids and len(ids) == len(set(ids)), e.ref
        assert e.kind in ("finding", "arithmetic"), e.ref


def test_the_studies_cover_every_distinct_finding():
    covered = {sec for mod in registry() for sec in mod.sections}
    assert {e.section for e in findings.distinct()} <= covered
    for mod in registry():
        for sec in mod.sections:
            assert sec in findings.published(), f"{mod.name}: {sec}"


# ---- parts, combination, tally ----


def res(ref: str, verdict: str, study: str = "s") -> dict:
    return {"ref": ref, "verdict": verdict, "why": f"because {verdict}", "kind": "part", "study": study}


def test_a_finding_is_reproduced_only_when_every_part_is():
    got = findings.assess(
        [res("allocation/cg/bytes", "reproduced"), res("allocation/cg/time", "cannot be tested here")], {"allocation"}
    )
    cg = next(a for a in got if a["ref"] == "allocation/cg")
    assert cg["verdict"] == "partly tested" and "time" in cg["why"] and "bytes" in cg["why"]
    mg = next(a for a in got if a["ref"] == "allocation/mg")
    assert mg["verdict"] == "cannot be tested here" and all(p["verdict"] == "not tested" for p in mg["parts"])
    both = findings.assess([res("allocation/cg/bytes", "reproduced"), res("allocation/cg/time", "reproduced")])
    assert next(a for a in both if a["ref"] == "allocation/cg")["verdict"] == "reproduced"
    assert findings.combine(["reproduced", "inconclusive", "cannot be tested here"]) == "inconclusive"
    assert findings.combine(["reproduced", "not reproduced"]) == "not reproduced"


def test_two_studies_measuring_one_part_count_once_and_disagreeing_is_inconclusive():
    same = [
        res("allocation/cg/bytes", "reproduced", "allocation"),
        res("allocation/cg/bytes", "reproduced", "placement"),
    ]
    got = findings.assess(same, {"allocation"})
    assert len(got) == len(findings.distinct({"allocation"})) == 3
    part = next(a for a in got if a["ref"] == "allocation/cg")["parts"][1]
    assert part["id"] == "bytes" and len(part["results"]) == 2 and part["verdict"] == "reproduced"
    split = [res("allocation/cg/bytes", "reproduced"), res("allocation/cg/bytes", "not reproduced")]
    bytes_part = next(a for a in findings.assess(split, {"allocation"}) if a["ref"] == "allocation/cg")["parts"][1]
    assert bytes_part["verdict"] == "inconclusive" and "disagree" in bytes_part["why"]


def test_self_checks_are_apart_and_the_headline_counts_distinct_findings():
    assessed = findings.assess([res("tiling/ring/2 ranks on one chip", "reproduced")])
    checks = [findings.check("advice", "x", "passed").__dict__]
    text = findings.headline(assessed, checks)
    assert text.startswith(f"{len(findings.distinct())} distinct published findings: ")
    assert sum(findings.tally(assessed).values()) == len(findings.distinct())
    assert "1 passed of 1 self-checks (never counted as reproduced)" in text
    assert findings.tally(assessed)["partly tested"] == 1  # the ring's other three conditions untested
    with pytest.raises(ValueError):
        findings.check("advice", "x", "reproduced")  # a check passes or fails; it never "reproduces"
    with pytest.raises(KeyError):
        findings.part("allocation/cg/nothing", "x", "reproduced")


def test_inconclusive_says_how_many_repeats_would_settle_it():
    verdict, why = findings.judge(1.03, 0.30, 3, True, 0.05)
    assert verdict == "inconclusive" and "too noisy to read" in why
    n = int(why.split("about ")[1].split()[0])
    assert 3 < n <= 200
    assert findings.repeats_needed(0.05, 5, 0.5) < findings.repeats_needed(0.5, 5, 0.05)


# ---- plausibility: flagged, and never the basis of a verdict ----


def test_a_verdict_resting_on_a_flagged_figure_is_inconclusive():
    f = findings.part("allocation/cg/bytes", "x", "reproduced", flags=["1 rank 3x faster than 2"])
    assert f.verdict == "inconclusive" and "implausible" in f.why
    c = findings.check("advice", "x", "passed", flags=["ratio 0.2"])
    assert c.verdict == "inconclusive"


def test_guards_flag_what_cannot_be_right_and_pass_what_can():
    assert plausible.speedup("cg 1 rank over 2", 3.14, 0.5)
    assert plausible.speedup("cg 4 over 2", 2.1, 2.0) is None
    assert plausible.contention("stride 256 B", 0.2) and plausible.contention("stride 256 B", 0.95) is None
    assert plausible.bandwidth("ring", 900.0, 300.0) and plausible.bandwidth("ring", 310.0, 300.0) is None
    assert plausible.efficiency("x", 1.5) and plausible.efficiency("x", 1.0) is None
    assert plausible.identical("1x2", [1.0, 1.02, 0.98], [2.0, 2.05, 1.98])
    assert plausible.identical("1x2", [1.0, 1.3, 0.9], [1.1, 1.2, 1.0]) is None


def rec(layout: str, placement: str, total: float, cpus: list[int], packages: list[int]) -> dict:
    p, q = (int(x) for x in layout.split("x"))
    return {
        "status": "ok",
        "layout": {"nodes": p, "ranks_per_node": q, "virtual_nodes": False},
        "driver": {"placement": {"mode": placement, "warnings": []}},
        "time": {"total": total, "comm": 0.0},
        "placement": [
            {"rank": i, "threads": [{"cpu": c, "package": k}]} for i, (c, k) in enumerate(zip(cpus, packages))
        ],
    }


def test_contention_flags_identical_configurations_and_rests_no_verdict_on_them():
    recs = []
    for t in (1.0, 1.02, 0.99):
        recs.append(rec("1x2", "packed", t, [0, 1], [0, 1]))
        recs.append(rec("1x2", "spread", 2 * t, [0, 1], [0, 1]))  # the same cores, 2x apart
        recs.append(rec("2x1", "packed", 1.5 * t, [0, 1], [0, 1]))
    rows = study.summarize(recs)
    flagged = [r for r in rows if r["flags"]]
    assert {r["placement"] for r in flagged} == {"packed", "spread"} and "identical" in flagged[0]["flags"][0]
    parts = {f.ref: f for f in contention._findings(rows, 2)}
    chips = parts["contention/two/vs_chips"]
    assert chips.verdict == "inconclusive" and "implausible" in chips.why
    assert parts["processor_sharing/virtual_processor/time"].verdict == "inconclusive"


def test_scalability_flags_one_rank_faster_than_two_and_rests_no_verdict_on_it():
    groups = {
        ("cg", "1x1"): {"median": 0.434, "spread": 0.05, "times": [0.43, 0.44, 0.434]},
        ("cg", "1x2"): {"median": 1.365, "spread": 0.05, "times": [1.36, 1.37, 1.365]},
        ("cg", "2x1"): {"median": 1.2, "spread": 0.05, "times": [1.2, 1.21, 1.19]},
        ("cg", "1x4"): {"median": 0.3, "spread": 0.05, "times": [0.3, 0.31, 0.29]},
        ("cg", "4x1"): {"median": 0.7, "spread": 0.05, "times": [0.7, 0.71, 0.69]},
    }
    rows = scalability.speedups(groups, ["cg"], 4, 2)
    one = next(r for r in rows if r["ranks"] == 1)
    assert one["speedup"] == pytest.approx(3.14, abs=0.01) and "more than the cores allow" in one["flags"][0]
    four = next(r for r in rows if r["ranks"] == 4 and r["how"] == "packed")
    assert four["flags"]  # 4.55x over 2 ranks with twice the cores
    parts = {f.ref: f for f in scalability._parts(rows, 4, None)}
    assert parts["scalability/contention_bound/cg"].verdict == "inconclusive"
    assert "implausible" in parts["scalability/contention_bound/cg"].why
    is_part = parts["scalability/contention_bound/is"]  # pxq has an IS proxy: its part says it left no run
    assert is_part.verdict == "cannot be tested here" and "no proxy" not in is_part.why and "left no run" in is_part.why
    assert "no proxy" in parts["scalability/ideal/lu"].why


def test_scalability_notes_is_on_one_rank_skipping_the_bucket_sort_rather_than_flagging_it():
    """IS on one rank counts its keys without the bucket sort (variant.buckets false): 1.5x faster than
    its 2-rank run is less work, not a disturbed run; the same figure of a run with buckets is flagged."""
    groups = {
        ("is", "1x1"): {"median": 0.5, "spread": 0.05, "times": [0.5]},
        ("is", "1x2"): {"median": 0.75, "spread": 0.05, "times": [0.75]},
    }
    recs = [
        {"app": "is", "layout": {"nodes": 1, "ranks_per_node": 1, "threads": 1}, "variant": {"buckets": False}},
        {"app": "is", "layout": {"nodes": 1, "ranks_per_node": 2, "threads": 1}, "variant": {"buckets": True}},
    ]
    skips = scalability.lighter(recs)
    assert skips == frozenset({("is", "1x1")})
    one = next(r for r in scalability.speedups(groups, ["is"], 2, 2, skips) if r["ranks"] == 1)
    assert one["flags"] == [] and "skip work" in one["note"] and "1.50x" in one["note"]
    flagged = next(r for r in scalability.speedups(groups, ["is"], 2, 2) if r["ranks"] == 1)
    assert flagged["flags"] and not flagged["note"]


def test_nodes_of_one_machine_stand_for_no_real_node_s_chip():
    """Virtual nodes and a cluster of this machine's nodes share its chip and memory bus: the
    scalability and tiling parts that need real nodes say so instead of judging."""
    one_node = {"layout": {"nodes": 1, "virtual_nodes": False}, "driver": {"cluster": {"name": "c1"}}}
    assert studykit.one_machine([one_node]) is None  # one node of a cluster: one machine, as it is
    on_cluster = {"layout": {"nodes": 4, "virtual_nodes": False}, "driver": {"cluster": {"name": "c1"}}}
    why = studykit.one_machine([one_node, on_cluster])
    assert why is not None and "cluster 'c1'" in why
    assert "virtual nodes" in studykit.one_machine([{"layout": {"nodes": 2, "virtual_nodes": True}}])
    assert studykit.one_machine([{"layout": {"nodes": 2}, "driver": {}}]) is None  # real nodes
    rows = [
        {"app": "mg", "ranks": 4, "how": how, "speedup": 1.9, "spread": 0.02, "flags": [], "times": [1.0] * 3}
        for how in ("packed", "spread")
    ]
    parts = {f.ref: f for f in scalability._parts(rows, 4, why)}
    assert (
        parts["scalability/ideal/mg"].verdict == "cannot be tested here" and "c1" in parts["scalability/ideal/mg"].why
    )


def test_stride_flags_a_ratio_far_below_one_and_rests_no_verdict_on_it():
    points = [
        {"stride": s, "bytes": 1 << 28, "contention": 0.2 if s == 512 else 2.0, "ns": 1.0} for s in (256, 512, 1024)
    ]
    rows = stride.by_stride({"points": points}, 3)
    assert [bool(r["flags"]) for r in rows] == [False, True, False]
    probe = {"detection": {"caches": []}}
    prof = {"last_level_bytes": 32 * MIB}
    mid = next(f for f in stride._parts(probe, rows, 2, prof, "256M") if f.ref.endswith("/mid"))
    assert mid.verdict == "inconclusive" and "implausible" in mid.why


def test_tiling_flags_bandwidth_above_the_measured_peak():
    recs = [
        {"layout": {"nodes": 1, "ranks_per_node": 2}, "variant": {"mode": "tiled"}, "metrics": {"effective_gbs": 900.0}}
    ]
    assert tiling.bandwidth_flags(recs, "1x2", 300.0)  # 2 cores at 300 GB/s cannot move 900
    assert tiling.bandwidth_flags(recs, "1x2", 500.0) == []
    assert tiling.bandwidth_flags(recs, "1x2", None) == []


# ---- sizes from the measured caches ----


def test_a_vm_reporting_its_hosts_l3_is_measured_and_sizes_follow_the_measurement():
    steps = [
        {"fits": 32 * 1024, "spills": 64 * 1024},
        {"fits": 512 * 1024, "spills": MIB},
        {"fits": 16 * MIB, "spills": 32 * MIB},
    ]
    got = caches.levels(steps, {"l1d": 48 * 1024, "l2": MIB, "l3": 480 * MIB}, 960 * MIB)
    assert got["last_level_bytes"] == 32 * MIB and not got["agrees"]
    assert "L3 480.0 MiB" in got["note"] and "sizes follow the measurement" in got["note"]
    agree = caches.levels(steps, {"l1d": 48 * 1024, "l2": MIB, "l3": 32 * MIB}, 128 * MIB)
    assert agree["agrees"] and agree["source"] == "measured"


def test_the_default_working_set_grows_past_a_last_level_that_holds_it():
    block, why, inside = tiling.choose_block("auto", 480 * MIB, 2, 24 << 30)
    assert block >= 2 * 480 * MIB and not inside and "grown from 64.0 MiB" in why
    top, why = stride.choose_max("measured", 480 * MIB, 2, 24 << 30)
    assert top == "1G" and "measured last level" in why
    block, why, inside = tiling.choose_block("auto", 16 * MIB, 2, 24 << 30)
    assert block == 64 * MIB and not inside  # the paper's size already leaves a 16 MiB cache


def test_where_no_size_the_memory_holds_leaves_the_cache_the_verdict_says_why():
    block, why, inside = tiling.choose_block("auto", 480 * MIB, 2, 2 << 30)
    assert inside and "available memory" in why
    row = {
        "layout": "1x2",
        "untiled": 1.0,
        "tiled": 0.5,
        "reduction": 0.5,
        "spread": 0.05,
        "untiled_times": [1.0] * 3,
        "tiled_times": [0.5] * 3,
        "flags": [],
    }
    part = tiling._parts([row], 480 * MIB, block, inside, why)[0]
    assert part.verdict == "cannot be tested here" and "fit the measured last level" in part.why
    assert part.here.startswith("1x2: time cut 50%")  # the table's sign: "time cut by tiles 50%", never -50%
    slower = tiling._parts([dict(row, reduction=-0.1)], 480 * MIB, block, inside, why)[0]
    assert slower.here.startswith("1x2: time up 10%")
    assert "available memory" in part.why
    given, why, inside = tiling.choose_block("64M", 480 * MIB, 2, 24 << 30)
    assert inside and "inside the measured last level" in why
    shared = "the nodes of cluster 'c1' are namespaces of this one machine: they share its chip and memory bus"
    across = dict(row, layout="2x4", one_machine=shared)
    part = next(p for p in tiling._parts([across], 2 * MIB, 64 * MIB, False, "") if p.ref.endswith("2 nodes"))
    assert part.verdict == "cannot be tested here" and "cluster 'c1'" in part.why
    assert (
        next(
            p
            for p in tiling._parts([dict(across, one_machine=None)], 2 * MIB, 64 * MIB, False, "")
            if p.ref.endswith("2 nodes")
        ).verdict
        == "reproduced"
    )


def test_a_stored_cache_profile_of_the_wrong_types_is_measured_again_not_used(tmp_path, monkeypatch):
    from pxq.machine import caches

    machine = {"host": "h", "cpu_model": "c", "caches": {k: {"bytes": 1 << 20} for k in ("l1d", "l2", "l3")}}
    good = {
        **caches.key(machine),
        "last_level_bytes": 1 << 25,
        "peak_gbs": 50.0,
        "levels": [{"level": "l2", "hwloc_bytes": 1 << 20, "agrees": True}],
    }
    path = tmp_path / "caches.json"
    monkeypatch.setenv("PXQ_CACHE_PROFILE", str(path))
    path.write_text(json.dumps(good))
    assert caches.load(machine)["last_level_bytes"] == 1 << 25
    for bad in (
        {**good, "last_level_bytes": "32M"},
        {**good, "peak_gbs": "fast"},
        {**good, "levels": [{"level": "l9", "hwloc_bytes": 1, "agrees": True}]},
    ):
        path.write_text(json.dumps(bad))
        assert caches.load(machine) is None
    path.write_bytes(b"\xff" + b"[" * 100)
    assert caches.load(machine) is None


def test_a_studys_time_part_is_judged_on_its_paired_rounds_when_it_has_them():
    """A drift of 3x between rounds hides a 20% slowdown from the medians and spreads; the same
    runs paired round by round (one sweep's repeats) reproduce it, show a 2% change smaller than
    the threshold, and fall back to the spread rule without rounds."""
    drift = [1.0, 2.2, 1.3, 3.1, 1.1, 2.7, 1.6]
    jitter = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01]

    def group(factor, name):
        times = [d * factor * j for d, j in zip(drift, jitter if name == "a" else jitter[::-1])]
        return {"times": times, "rounds": [("s", k, f"{name}{k}") for k in range(len(times))]}

    slower, base = group(1.2, "a"), group(1.0, "b")
    verdict, why, ev = paired.judge_rows(slower, base, True, 0.05)
    assert verdict == "reproduced" and "rounds of one sweep" in why and 1.1 < ev["paired"]["lo"] < 1.2
    assert ev["paired"]["of"] == 7 and ev["paired"]["settled"] == "slower" and 4 <= ev["paired"]["rounds"] <= 7
    assert paired.judge_rows({**slower, "rounds": []}, base, True, 0.05)[0] == "inconclusive"  # spread rule
    small = group(1.02, "a")
    verdict, why, _ = paired.judge_rows(small, base, True, 0.05)
    assert verdict == "not reproduced" and "smaller than 5%" in why
    faster = group(0.8, "a")
    assert paired.judge_rows(faster, base, True, 0.05)[0] == "not reproduced"
    assert paired.judge_rows(faster, base, False, 0.05)[0] == "reproduced"


def test_the_counters_study_states_a_time_cut_as_the_tiling_study_does():
    """One sign convention across the studies: "time cut 40%" or "time up 10%", never "-40%"."""
    flat = {"variant": "flat", "time_vs_flat": 1.0, "spread": 0.02, "times": [1.0] * 5, "l2_misses_vs_flat": 1.0}
    for ratio, words in ((0.6, "time cut 40%"), (1.1, "time up 10%")):
        tiled = dict(flat, variant="tiled 256K", time_vs_flat=ratio, times=[ratio] * 5, l2_misses_vs_flat=0.2)
        _, found = counters._compare("ring", [flat, tiled], "l2_misses")
        part = next(f for f in found if "time at this size" in f.finding)
        assert f"({words})" in part.here and "%)" in part.here and "-" not in part.here.split("(")[1], part.here
    assert studykit.time_cut(49.4) == "time cut 49%" and studykit.time_cut(-10.2) == "time up 10%"
