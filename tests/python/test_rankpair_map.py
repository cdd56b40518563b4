"""The rank-pair probe's sample past `--pairs`: a record that grows with the ranks, read by every
reader (the channels' table, the exports, the figure) as the full matrix is, and refused clearly
when its rows do not match its offsets."""

import copy
import json
from pathlib import Path

import pytest

from pxq import cli
from pxq.analysis.messages import rankpair_map
from pxq.core.records import RecordError
from pxq.figures import pingpong
from pxq.probes import chanprobe

TEMPLATE = Path(__file__).parent / "data" / "figures" / "rankpairs.jsonl"
PER_NODE = 32


def sampled(ranks: int, offsets: list[int]) -> dict:
    """A schema-valid rank-pair record of RANKS ranks, PER_NODE a node, timed at OFFSETS: the GB/s
    of rank i's send at offset index k is 1 + i + k / 10 (so every value is traceable)."""
    rec = copy.deepcopy(json.loads(TEMPLATE.read_text().splitlines()[0]))
    one = rec["placement"][0]
    rec["placement"] = [
        {**one, "rank": r, "node": r // PER_NODE, "local_rank": r % PER_NODE, "vnode": f"n{r // PER_NODE}"}
        for r in range(ranks)
    ]
    rec["layout"].update(ranks=ranks, nodes=ranks // PER_NODE, ranks_per_node=PER_NODE, workers=ranks)
    rec["driver"]["layout"] = f"{ranks // PER_NODE}x{PER_NODE}"
    rec["matrix_gbs"] = []
    gbs = [[1 + i + k / 10 for k in range(len(offsets))] for i in range(ranks)]
    rec["pairs_sampled"] = {"offsets": offsets, "gbs": gbs, "pairs_total": ranks * (ranks - 1)}
    return rec


def test_a_sample_is_read_pair_by_pair_with_its_partners_and_channels():
    rec = sampled(2048, [1, 2047, 2, 2046])
    pairs = list(rankpair_map.timed_pairs(rec))
    assert len(pairs) == 4 * 2048 and rankpair_map.coverage(rec) == (4 * 2048, 2048 * 2047)
    assert (5, 6, 6.0) in pairs and (5, 4, 6.1) in pairs and (2047, 1, 2048.2) in pairs and (0, 2047, 1.1) in pairs
    chans = chanprobe.rankpair_channels(rec)
    # offsets 1 and -1 leave a node at each of its two ends, 2 and -2 at two ranks of each end
    off = sum(1 for i, j, _ in pairs if i // PER_NODE != j // PER_NODE)
    assert off == 64 * (1 + 1 + 2 + 2) and len(chans["inter_node"]) == off
    assert len(chans["intra_cmp"]) == len(pairs) - off


def test_a_sampled_record_grows_with_the_ranks_and_validates(tmp_path, capsys):
    small, big = (len(json.dumps(sampled(n, [1, n - 1]))) for n in (512, 2048))
    assert big / small < 4.4  # 4x the ranks: linear (a P x P matrix would be 16x)
    path = tmp_path / "rp.jsonl"
    path.write_text(json.dumps(sampled(2048, [1, 2047])) + "\n")
    assert cli.main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 * 2048 and rows[1] == {**rows[1], "from_rank": 0, "to_rank": 2047, "gbs": 1.1}


def test_the_figure_bins_ranks_past_64_and_keeps_each_pairs_mean(tmp_path):
    rec = sampled(2048, [1, 2047])
    pairs = list(rankpair_map.timed_pairs(rec))
    per = -(-2048 // pingpong.MAX_CELLS)
    m = pingpong._binned(pairs, 2048, per)
    assert m.shape == (128, 128) and per == 16
    inside = [v for i, j, v in pairs if i // per == 3 and j // per == 3]  # block 3's own pairs
    assert m[3, 3] == pytest.approx(sum(inside) / len(inside))
    assert m.mask[3, 40] and not m.mask[3, 4]  # nothing timed that far, and the neighbour block's edge
    out = chanprobe.plot_rankpairs(rec, tmp_path / "rp.png")
    assert out.stat().st_size > 10_000


def test_rows_that_do_not_match_the_offsets_are_refused(tmp_path, capsys):
    rec = sampled(64, [1, 63])
    rec["pairs_sampled"]["gbs"][7] = [1.0]
    with pytest.raises(RecordError, match="rank 7's sampled pairs hold 1 values for 2 offsets"):
        list(rankpair_map.timed_pairs(rec))
    path = tmp_path / "rp.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    code = cli.main(["report", str(path), "--format", "csv"])
    err = capsys.readouterr().err
    assert code != 0 and "rank 7's sampled pairs" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "spoil, says",
    [
        (lambda s: s["gbs"].append([1.0, 2.0]), "rows of 65 ranks for a layout of 64 ranks"),
        (lambda s: s.update(offsets=[], gbs=[[] for _ in s["gbs"]]), "offsets [] are not 1 to 63"),
        (lambda s: s.update(offsets=[1, 64]), "offsets [1, 64] are not 1 to 63"),
    ],
    ids=["a-rank-too-many", "no-offsets", "an-offset-past-the-ranks"],
)
def test_a_sample_that_does_not_fit_its_ranks_is_refused_not_exported(tmp_path, capsys, spoil, says):
    """Hand-edited samples that validate against the schema yet name ranks that never ran (one
    exported pairs from a rank 64 of a 64-rank layout, its figure failed on an index)."""
    rec = sampled(64, [1, 63])
    spoil(rec["pairs_sampled"])
    path = tmp_path / "rp.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    code = cli.main(["report", str(path), "--format", "csv"])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err, err
