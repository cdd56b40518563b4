"""Link profiles of a cluster on this machine: names, rates and latencies as people write them,
a pingpong record of a real cluster, and the token bucket each rate gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pxq.cluster import cpusets, links, nodes
from pxq.cluster import emulator as cluster
from pxq.core.errors import InputError

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("text", "rate", "latency"),
    [
        ("gige", 125e6, None),
        ("GigE", 125e6, None),
        ("100mbit", 12.5e6, None),
        ("woodcrest-ib", 1532e6, 2.83e-6),
        ("1Gbit", 125e6, None),
        ("1Gbit/s", 125e6, None),
        ("2.5Gbit", 312.5e6, None),
        ("400MB/s,5us", 400e6, 5e-6),
        ("1GiB/s,0.1ms", 1024.0**3, 1e-4),
        ("unshaped", None, None),
    ],
)
def test_profiles_and_rates(text, rate, latency):
    link = links.parse_link(text)
    assert link.bytes_per_s == pytest.approx(rate) if rate else link.bytes_per_s is None
    assert link.latency_s == pytest.approx(latency) if latency else link.latency_s is None


BAD_LINKS = {  # what is typed: what the refusal names
    "1Q": "link rate '1Q'",
    "fast": "give a profile name",
    "1gbps": "ambiguous",
    "10bit": "between 100 kbit/s and 1 TB/s",
    "1Gbit,5": "link latency '5'",
    "missing.jsonl": "no such file",
}


@pytest.mark.parametrize(("text", "needle"), BAD_LINKS.items())
def test_bad_links_name_the_fix(text, needle):
    with pytest.raises(InputError, match=needle):
        links.parse_link(text)


def test_a_pingpong_record_gives_the_inter_node_channel(tmp_path):
    link = links.parse_link(str(DATA / "figures" / "pingpong.jsonl"))
    recs = [json.loads(line) for line in (DATA / "figures" / "pingpong.jsonl").read_text().splitlines()]
    inter = next(c for c in recs[-1]["channels"] if c["channel"] == "inter_node")
    largest = max(inter["bandwidth"], key=lambda p: p["bytes"])
    assert link.bytes_per_s == pytest.approx(largest["median_gbs"] * 1e9)
    assert link.latency_s == pytest.approx(min(inter["latency"], key=lambda p: p["bytes"])["median_us"] * 1e-6)
    # A record of one node has no inter-node channel to stand for.
    one_node = dict(recs[-1], channels=[c for c in recs[-1]["channels"] if c["channel"] != "inter_node"])
    path = tmp_path / "one-node.jsonl"
    path.write_text(json.dumps(one_node) + "\n")
    with pytest.raises(InputError, match="no inter-node channel"):
        links.parse_link(str(path))


def test_the_bucket_holds_a_quarter_millisecond_within_two_frames_and_192k():
    assert cluster._burst(125e6, 9000) == int(125e6 * cluster.BURST_S)
    assert cluster._burst(12.5e6, 9000) == 2 * 9100  # at 100 Mbit/s two jumbo frames are more
    assert cluster._burst(1250e6, 9000) == 192 * 1024  # at 10 Gbit/s the cap


@pytest.mark.parametrize("name", ["pxq", "a1", "lab7"])
def test_cluster_names(name):
    assert cluster.check_name(name) == name


@pytest.mark.parametrize("name", ["", "Bad", "1a", "toolongname", "a-b", "off"])
def test_bad_cluster_names(name):
    with pytest.raises(InputError, match="cluster name"):
        cluster.check_name(name)


def test_the_record_says_what_is_not_emulated():
    c = cluster.Cluster("pxq", 4, links.PROFILES["gige"].record(), 9000, [1, 2, 3, 4], 2, 0.1, False)
    rec = c.record()
    assert any("latency" in x for x in rec["not_emulated"]) and any("cores" in x for x in rec["not_emulated"])
    assert c.host(2) == "pxq-n2"
    assert any("no cpuset controller" in x for x in rec["not_emulated"])  # a cluster of no cpusets says so
    # The bucket's burst (a quarter millisecond of gige: 30 KiB) can make a short timed window read
    # above the rate; the record says how much, and an unshaped link has no bucket to speak of.
    (burst,) = [x for x in rec["not_emulated"] if "burst" in x]
    assert "up to 30 KiB" in burst and "W / (W - 30 KiB)" in burst
    unshaped = cluster.Cluster("pxq", 2, links.PROFILES["unshaped"].record(), 9000, [1, 2], 2, 0.1, False)
    assert not any("burst" in x for x in unshaped.record()["not_emulated"])


def test_each_node_gets_its_share_of_the_cores_or_shares_them_and_the_record_says_how_many():
    """Node k gets cores k*C .. k*C+C-1 of the machine's, wrapping: disjoint when the machine has
    enough, shared otherwise, with the count of nodes per core in the record."""
    assert cpusets.node_cpus(2, 2, [0, 1, 2, 3]) == [[0, 1], [2, 3]]
    assert cpusets.node_cpus(4, 1, [0, 1]) == [[0], [1], [1], [0]]  # n0 and n1 apart: a 2x1 shares no core
    assert cpusets.node_cpus(2, 2, [0, 1]) == [[0, 1], [1, 0]]  # node 1 starts where node 0 ends
    assert cpusets.node_cpus(3, 1, [4, 6]) == [[4], [6], [6]]  # the machine's own numbering
    assert cpusets.sharing([[0], [1], [0]]) == {0: 2, 1: 1}
    own = cluster.Cluster("pxq", 2, {}, 9000, [1, 2], 4, 0.1, False, node_cpus=[[0, 1], [2, 3]], cpuset="v1")
    shared = cluster.Cluster("pxq", 4, {}, 9000, [1, 2, 3, 4], 2, 0.1, False, node_cpus=[[0], [1], [0], [1]],
                             cpuset="v2")  # fmt: skip
    rec, rec2 = own.record(), shared.record()
    assert (rec["cores_per_node"], rec["nodes_per_core"], rec2["cores_per_node"], rec2["nodes_per_core"]) == (
        2,
        1,
        1,
        2,
    )
    assert any("a cpuset of 2 per node (cgroup v1)" in x for x in rec["emulated"])
    assert any("up to 2 nodes share each core" in x for x in rec2["not_emulated"])


def test_what_lives_under_tmp_is_bound_back_into_every_node(monkeypatch, tmp_path):
    """A checkout or build under /tmp (a CI runner's clone) stays visible in nodes whose /tmp is
    their own: the outermost such folders, once each."""
    from pxq.core import paths

    monkeypatch.setattr(paths, "ROOT", Path("/tmp/ci7"))
    monkeypatch.setattr(paths, "build_dir", lambda: Path("/tmp/ci7/build"))
    monkeypatch.setattr(paths, "results_dir", lambda: Path("/srv/results"))
    monkeypatch.setenv("PXQ_CLUSTER_DIR", "/tmp/state")
    assert nodes.shared_under_tmp() == ["ci7", "state"]
    monkeypatch.setattr(paths, "ROOT", Path("/tmp"))
    with pytest.raises(cluster.ClusterError, match="in /tmp itself"):
        nodes.shared_under_tmp()


def test_a_cluster_for_one_command_gives_each_node_the_cores_its_layouts_put_on_one_node():
    """`--network`: the nodes' cores are the most workers any of the command's layouts puts on
    one node (capped at the machine's), every core where the command names no layout."""
    import argparse

    from pxq.cli import _cores_asked

    def asked(**kw):
        return _cores_asked(argparse.Namespace(**kw), 4)

    assert asked(layout="2x1") == 1 and asked(layouts="2x1,1x2x2") == 4 and asked(layout="1x8") == 4
    assert asked(ranks=2, model="2x1x2") == 2  # study sharing's 1x2; a model's sockets x cores
    assert asked() == 4
