"""Link profiles of a cluster on this machine: names, rates and latencies as people write them,
a pingpong record of a real cluster, and the token bucket each rate gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pxq.core.errors import InputError
from pxq.machine import cluster, links

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
    "missing.jsonl": "cannot read it",
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


def test_what_lives_under_tmp_is_bound_back_into_every_node(monkeypatch, tmp_path):
    """A checkout or build under /tmp (a CI runner's clone) stays visible in nodes whose /tmp is
    their own: the outermost such folders, once each."""
    from pxq.core import paths

    monkeypatch.setattr(paths, "ROOT", Path("/tmp/ci7"))
    monkeypatch.setattr(paths, "build_dir", lambda: Path("/tmp/ci7/build"))
    monkeypatch.setattr(paths, "results_dir", lambda: Path("/srv/results"))
    monkeypatch.setenv("PXQ_CLUSTER_DIR", "/tmp/state")
    assert cluster.shared_under_tmp() == ["ci7", "state"]
    monkeypatch.setattr(paths, "ROOT", Path("/tmp"))
    with pytest.raises(cluster.ClusterError, match="in /tmp itself"):
        cluster.shared_under_tmp()
