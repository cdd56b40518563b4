"""The placement advisor without MPI: METIS's suggestion on synthetic neighbour patterns whose
ranks were shuffled (the locality comes back), exact part sizes, the order files and their
errors, the launch of a rank order, and `pxq placement` on bad input."""

import json
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import RUN_RECORD

from pxq import cli
from pxq.analysis.messages import msgdist, placement, placement_bench, rankorder
from pxq.analysis.verdicts import allocation
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.launch.plan import plan_launch
from pxq.launch.request import LaunchRequest, check_rank_order, rank_slots


def inter_node(rec: dict, places: list) -> int:
    return placement.channel_cost(rec, places)["bytes"]["inter_node"]


@pytest.mark.parametrize(
    "dims, model",
    [((4, 4), "4x2x2"), ((8, 8), "16x2x2"), ((4, 4, 4), "16x2x2"), ((8, 4, 4), "32x2x2"), ((16, 8), "16x2x4")],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_suggestion_recovers_a_shuffled_neighbour_pattern(dims, model, seed):
    """Inter-node bytes within 5% of the unshuffled pattern in block order (or fewer)."""
    m = msgdist.parse_model(model)
    plain = placement_bench.stencil_profile(dims)
    shuffled = placement_bench.stencil_profile(dims, shuffle=seed)
    n = plain["ranks"]
    ideal = inter_node(plain, msgdist.place(m, n, "block"))
    s = placement.suggest(shuffled, m)
    mine = inter_node(shuffled, placement.places_of(m, s.order))
    assert mine == s.candidate("suggested").cost["bytes"]["inter_node"]
    assert mine <= 1.05 * ideal, (dims, model, mine, ideal)
    # The shuffle really destroyed the locality block order had: the test has something to find.
    assert inter_node(shuffled, msgdist.place(m, n, "block")) > 1.2 * ideal
    assert s.candidate("metis").cost["bytes"]["inter_node"] <= 1.05 * ideal  # METIS itself, not a fallback


def test_the_suggestion_is_never_worse_than_block_or_cyclic_and_fills_the_model_as_block_does():
    rng = random.Random(7)
    for trial in range(6):
        n = 16
        m = msgdist.parse_model("4x2x2")
        rec = placement_bench.stencil_profile((4, 4))
        rec["p2p"] = [[rng.randrange(n), rng.randrange(n), 10, 1, rng.choice([64, 8192, 1 << 20])] for _ in range(60)]
        s = placement.suggest(rec, m, "bytes", seed=trial + 1)
        got = s.candidate("suggested").cost["bytes"]
        for alloc in ("block", "cyclic"):
            theirs = placement.channel_cost(rec, msgdist.place(m, n, alloc))["bytes"]
            assert got["inter_node"] <= theirs["inter_node"]
        assert placement.fits(m, placement.places_of(m, s.order))
        assert sorted(s.order) == list(range(n))


def test_order_and_places_are_inverse_and_block_is_the_identity():
    m = msgdist.parse_model("2x2x2")
    assert placement.model_order(m, 8, "block") == list(range(8))
    assert placement.model_order(m, 8, "cyclic") == [0, 4, 2, 6, 1, 5, 3, 7]
    order = [5, 0, 7, 2, 1, 3, 6, 4]
    places = placement.places_of(m, order)
    assert places[5] == (0, 0) and places[0] == (0, 0) and places[7] == (0, 1) and places[4] == (1, 1)
    assert placement.places_of(m, placement.order_of(places)) == places


def test_repair_gives_exact_sizes_and_refine_never_raises_the_cut():
    rng = np.random.default_rng(3)
    w = rng.random((24, 24))
    w = np.triu(w, 1)
    w = w + w.T
    start = np.zeros(24, dtype=int)  # everything in part 0: far off the sizes
    part = placement._repair(w, start, [8, 8, 8])
    assert np.bincount(part, minlength=3).tolist() == [8, 8, 8]
    better = placement.refine(w, part, 3)
    assert np.bincount(better, minlength=3).tolist() == [8, 8, 8]
    assert placement.cut(w, better) <= placement.cut(w, part) + 1e-9


def test_sizes_follow_block_fill_when_the_ranks_do_not_fill_the_model():
    assert placement.fill_sizes(4, 3, 10) == [4, 4, 2]
    m = msgdist.parse_model("4x2x2")
    rec = placement_bench.stencil_profile((2, 5), shuffle=1)  # 10 ranks on 16 cores
    s = placement.suggest(rec, m)
    assert placement.fits(m, placement.places_of(m, s.order))
    assert sorted({n for n, _ in placement.places_of(m, s.order)}) == [0, 1, 2]


def test_the_order_file_round_trips_with_its_prediction(tmp_path):
    m = msgdist.parse_model("4x2x2")
    s = placement.suggest(placement_bench.stencil_profile((4, 4), shuffle=2), m)
    text = rankorder.format_order(s.order, ["a comment"], s.prediction())
    path = tmp_path / "x.order"
    path.write_text(text)
    order, prediction = rankorder.read_order(path)
    assert order == s.order
    assert prediction["model"] == "4x2x2" and prediction["channels"]["suggested"] == s.candidate("suggested").cost
    assert rankorder.parse_order("0-3, 7 6\n5,4 # tail", "f")[0] == [0, 1, 2, 3, 7, 6, 5, 4]


@pytest.mark.parametrize(
    "text, expect",
    [
        ("0,1,1,2", "rank 1 is listed twice"),
        ("0,1,5", "rank 5 with only 3 ranks"),
        ("0,a,1", "'a' is not a rank"),
        ("3-1", "runs backwards"),
        ("# nothing\n", "no ranks in it"),
        ("# pxq-prediction {broken\n0,1", "not JSON"),
    ],
)
def test_bad_order_files_are_refused_with_the_fix(text, expect):
    with pytest.raises(InputError, match=expect):
        rankorder.parse_order(text, "order.txt")


def test_rankfile_and_slurm_hosts_put_every_rank_on_its_slot():
    m = msgdist.parse_model("2x2x1")
    order = [3, 1, 0, 2]
    hosts = ["a", "b"]
    assert rankorder.rankfile_text(m, order, hosts).splitlines() == [
        "rank 0=b slot=0:0",
        "rank 1=a slot=1:0",
        "rank 2=b slot=1:0",
        "rank 3=a slot=0:0",
    ]
    assert rankorder.slurm_hosts_text(m, order, hosts).split() == ["b", "a", "b", "a"]
    assert rankorder.hosts_of("x,y,z", 2) == ["x", "y"]
    with pytest.raises(InputError, match="1 host"):
        rankorder.hosts_of("x", 2)


def test_a_rank_order_places_ranks_in_the_launch():
    lay = Layout(2, 2, 1)
    assert rank_slots(lay, "block", [3, 1, 0, 2]) == [(1, 0), (0, 1), (1, 1), (0, 0)]
    for order, alloc, expect in (
        ([0, 1, 2], "block", "lists 3 ranks but layout"),
        ([0, 1, 2, 2], "block", "every rank"),
        ([0, 1, 2, 3], "cyclic", "drop --alloc cyclic"),
    ):
        with pytest.raises(InputError, match=expect):
            check_rank_order(LaunchRequest(lay, alloc, cores=4, rank_order=order))


def test_a_rank_order_on_virtual_nodes_and_a_hostfile_writes_a_rankfile(tmp_path, fake_build):
    lay = Layout(2, 2, 1)
    plan = plan_launch(LaunchRequest(lay, cores=4, rank_order=[3, 1, 0, 2]), "mpirun", tmp_path)
    rankfile = plan.files[str(tmp_path / "rankfile")].splitlines()
    assert rankfile[0].startswith("rank 0=n1 ") and rankfile[3].startswith("rank 3=n0 ")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("alpha slots=2\nbeta slots=2\n")
    plan = plan_launch(LaunchRequest(lay, hostfile=str(hostfile), cores=4, rank_order=[3, 1, 0, 2]), "mpirun", tmp_path)
    assert plan.files[str(tmp_path / "rankfile")].splitlines() == [
        "rank 0=beta slot=0-0",
        "rank 1=alpha slot=1-1",
        "rank 2=beta slot=1-1",
        "rank 3=alpha slot=0-0",
    ]
    assert "--rankfile" in plan.argv and "--hostfile" in plan.argv


def write_profile(path: Path, rec: dict) -> Path:
    path.write_text(json.dumps(rec) + "\n")
    return path


def test_suggest_writes_three_files_and_a_figure(tmp_path, capsys):
    prof = write_profile(tmp_path / "p.jsonl", placement_bench.stencil_profile((4, 4), shuffle=5))
    assert cli.main(["placement", "suggest", str(prof), "--model", "4x1x4", "--hosts", "a,b,c,d"]) == 0
    out = capsys.readouterr().out
    assert "suggested (= " in out and "METIS" in out
    order, prediction = rankorder.read_order(tmp_path / "p-placement.order")
    assert sorted(order) == list(range(16)) and prediction["model"] == "4x1x4"
    rankfile = (tmp_path / "p-placement.rankfile").read_text().splitlines()
    assert len(rankfile) == 16 and all(line.split("=")[1][0] in "abcd" for line in rankfile)
    assert len((tmp_path / "p-placement.slurm-hosts").read_text().split()) == 16
    assert (tmp_path / "p-placement.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    "extra, expect",
    [
        (["--model", "2x2x2"], "model 2x2x2 has 8 cores but the profile has 16 ranks"),
        (["--model", "4x2"], "NODESxSOCKETSxCORES"),
        (["--model", "1x1x16"], "one node with one socket"),
        (["--model", "4x2x2", "--out", "nowhere/x"], "folder 'nowhere' does not exist"),
        (["--model", "4x2x2", "--hosts", "a,b"], "2 host"),
    ],
)
def test_suggest_refuses_bad_input_and_writes_nothing(extra, expect, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    prof = write_profile(tmp_path / "p.jsonl", placement_bench.stencil_profile((4, 4)))
    assert cli.main(["placement", "suggest", str(prof), *extra]) == 2
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]


def test_suggest_refuses_what_is_not_a_profile(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(RUN_RECORD) + "\n")
    assert cli.main(["placement", "suggest", str(run), "--model", "4x2x2"]) != 0
    assert "no message profile" in capsys.readouterr().err
    assert cli.main(["placement", "suggest", str(tmp_path / "none.jsonl")]) == 2


def test_bench_reports_time_and_recovered_locality(capsys):
    assert cli.main(["placement", "bench", "--grid", "8x8", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "partitioner median" in out and "the unshuffled pattern" in out
    assert cli.main(["placement", "bench", "--grid", "8"]) == 2


def _timed_run(alloc: str, total: float, cluster: dict | None, virtual: bool = False) -> dict:
    rec = json.loads(json.dumps(RUN_RECORD))
    rec["layout"].update(nodes=2, ranks_per_node=2, ranks=4, alloc=alloc, virtual_nodes=virtual)
    rec["driver"]["cluster"] = cluster
    rec["time"] = {"total": total, "comm": total / 2}
    return rec


CLUSTER = {"name": "lab", "nodes": 2, "link": {"name": "100mbit"}}


def test_allocation_times_on_a_cluster_are_judged_and_say_where_they_ran():
    recs = [_timed_run("block", 0.18, CLUSTER), _timed_run("cyclic", 0.55, CLUSTER)]
    # Oversubscribed (4 ranks, 2 cores) yet judged: the cluster's links are what allocation changes.
    assert allocation.why_untimed(recs, 4, 2, False) is None
    where = allocation.where_timed(recs, 2)
    assert where == " (cluster 'lab' of this machine, link 100mbit, 4 ranks on 2 cores)"
    by = {
        a: {"times": [t] * 3, "median_s": t, "comm_median_s": t / 2, "spread": 0.01}
        for a, t in (("block", 0.18), ("cyclic", 0.55))
    }
    (cg,) = allocation.time_findings("cg", by, None, where)
    assert cg.verdict == "reproduced" and cg.here.startswith("block / cyclic time = 0.33x (cluster 'lab'")
    # Block slower than cyclic by more than the noise: CG's claim does not hold.
    flipped = {"block": by["cyclic"], "cyclic": by["block"]}
    assert allocation.time_findings("cg", flipped, None, where)[0].verdict == "not reproduced"
    # More ranks than cores: the times are shown, and no time claim rests on them.
    crowded = allocation.time_findings("cg", by, None, where, "4 ranks shared this machine's 2 cores")
    assert [(p.verdict, p.why) for p in crowded] == [("inconclusive", "4 ranks shared this machine's 2 cores")]
    assert crowded[0].here.startswith("block / cyclic time = 0.33x")


def test_allocation_times_in_rounds_are_judged_paired():
    """A drift between rounds hides CG's cut from the medians' spread; paired by round it shows."""
    drift = [1.0, 2.0, 1.2, 2.6, 1.1, 1.9]
    by = {
        a: {
            "times": [d * f for d in drift],
            "rounds": [("s", k, f"{a}{k}") for k in range(len(drift))],
            "median_s": sorted(d * f for d in drift)[3],
            "comm_median_s": 0.1,
            "spread": 1.5,
        }
        for a, f in (("block", 0.7), ("cyclic", 1.0))
    }
    (cg,) = allocation.time_findings("cg", by, None, "")
    assert cg.verdict == "reproduced" and "paired over" in cg.why


def test_allocation_times_off_a_cluster_stay_untestable_where_they_mean_little():
    virtual = [_timed_run("block", 0.2, None, virtual=True)]
    assert "virtual nodes" in allocation.why_untimed(virtual, 4, 2, False)
    one_host = [_timed_run("block", 0.2, None)]
    assert "oversubscribe" in allocation.why_untimed(one_host, 4, 2, False)
    assert allocation.why_untimed(one_host, 4, 2, True) is None  # real nodes of a hostfile
    assert allocation.where_timed(one_host, 2) == ""
    parts = allocation.time_findings("mg", {}, "virtual nodes of one host", "")
    assert [p.verdict for p in parts] == ["cannot be tested here"] * 2


def test_about_the_same_needs_repeats_tighter_than_the_band():
    def by(spread: float) -> dict:
        return {a: {"times": [1.0] * 5, "median_s": t, "comm_median_s": t, "spread": spread} for a, t in
                (("block", 0.99), ("cyclic", 1.0))}  # fmt: skip

    assert allocation.time_findings("ft", by(0.03), None)[0].verdict == "reproduced"
    noisy = allocation.time_findings("ft", by(0.56), None)[0]
    assert noisy.verdict == "inconclusive" and "spread 56%" in noisy.why


def test_study_allocation_refuses_a_bad_repeat_before_profiling(tmp_path, capsys):
    res = tmp_path / "alloc.jsonl"
    assert cli.main(["study", "allocation", "cg", "--repeat", "0", "--results", str(res)]) == 2
    assert "--repeat 0: use 1 to" in capsys.readouterr().err
    assert not res.exists() and not list(tmp_path.iterdir())


def test_a_few_thousand_ranks_are_placed_from_a_sparse_graph_and_drawn_binned(tmp_path):
    """The traffic graph is sparse (P x P dense was 2 GiB at 16,384 ranks and the swap pass
    O(P^3)): a shuffled 64 x 48 stencil (3,072 ranks) on 96 nodes of 2 x 16 gets its locality
    back within 5% of block on the unshuffled grid, with exact node sizes; the figure bins slots
    into at most 1,024 pixels a side and keeps every byte."""
    from scipy import sparse

    from pxq.figures import trafficmap

    m = msgdist.parse_model("96x2x16")
    plain = placement_bench.stencil_profile((64, 48))
    shuffled = placement_bench.stencil_profile((64, 48), shuffle=5)
    w = placement.traffic(shuffled, "bytes")
    assert sparse.issparse(w) and w.nnz == len(shuffled["p2p"])  # a stored entry per message pair and direction
    s = placement.suggest(shuffled, m)
    ideal = inter_node(plain, msgdist.place(m, plain["ranks"], "block"))
    assert inter_node(shuffled, placement.places_of(m, s.order)) <= 1.05 * ideal
    assert placement.fits(m, placement.places_of(m, s.order))
    img, per = trafficmap._binned(w, s.order, w.shape[0])
    assert per == 3 and img.shape == (1024, 1024) and img.sum() == pytest.approx(w.sum())


def test_refine_on_a_sparse_graph_takes_only_gaining_swaps():
    """Two rings of 10, each with one vertex in the other's part: one swap brings both home (the
    cut from 4 to 0); a swap that gains nothing is never taken, sizes never change."""
    n = 20
    w = np.zeros((n, n))
    for v in range(n):
        ring, i = divmod(v, 10)
        u = ring * 10 + (i + 1) % 10
        w[v, u] = w[u, v] = 1.0
    part = np.array([v // 10 for v in range(n)])
    part[0], part[10] = 1, 0
    assert placement.cut(w, part) == 4.0
    better = placement.refine(w, part, 2)
    assert placement.cut(w, better) == 0.0 and better.tolist() == [v // 10 for v in range(n)]
    assert placement.refine(w, better, 2).tolist() == better.tolist()  # nothing left to gain: unchanged
