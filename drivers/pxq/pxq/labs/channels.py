"""Lab 1, three channels: the student's ping-pong between two ranks on one node (sharing an L3 or
an L2), on two sockets where there are two, and on two (virtual) nodes; latency and bandwidth
per channel beside the published ones."""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Any

from rich.table import Table

from pxq.analysis.verdicts import findings
from pxq.core import plugins
from pxq.launch import netns
from pxq.launch.hostfile import hostfile_hosts
from pxq.teaching import harness as labs

SMALL, LARGE = 8, 2 << 20


def _at(result: dict, nbytes: int) -> dict:
    return next(s for s in result["sizes"] if s["bytes"] == nbytes)


def configs(ctx: labs.Context) -> list[tuple[str, dict]]:
    """The channels this machine has: the node's (packed), another socket's, another node's."""
    shared = "L2" if ctx.machine["caches"]["l2"].get("shared_by", 1) > 1 else "L3"
    out = [(f"same node (cores sharing the {shared})", {"layout": "1x2", "placement": "packed"})]
    if ctx.machine.get("packages", 1) > 1:
        out.append(("another socket", {"layout": "1x2", "placement": "spread"}))
    if ctx.hostfile:
        if len(hostfile_hosts(Path(ctx.hostfile))) >= 2:
            out.append(("another node (the hostfile's second host)", {"layout": "2x1"}))
        return out
    if os.environ.get("SLURM_JOB_ID"):
        nodes = os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or "1"
        if int(nodes) >= 2:
            out.append(("another node (the allocation's second node)", {"layout": "2x1"}))
        return out
    c = netns.current()
    if c is not None:
        out.append((f"another node (cluster {c.name}: {c.link['name']} link)", {"layout": "2x1"}))
    else:
        out.append(("another node (virtual nodes: TCP)", {"layout": "2x1"}))
    return out


def _caveat(channel: str) -> str:
    """Why the measured inter-node ratio may differ from the published one."""
    if "virtual" in channel:
        return "virtual nodes on one host talk over TCP loopback, which is far faster than a real network"
    c = netns.current()
    if c is not None and "cluster" in channel:
        latency = "its latency is emulated too" if c.latency_emulated else "its latency is this machine's TCP's"
        return f"the emulated link gives the profile's bandwidth, but {latency}, not the published network's"
    return "a fast network and a slow shared-memory path can come close for small messages"


def _table(runs: dict[str, list[dict[str, Any]]], paper: dict[str, Any]) -> tuple[Table, dict[str, list[float]]]:
    """The channels' medians beside the published ones, and each channel's 8-byte latencies (us)."""
    t = Table(title="ping-pong, one way: median of repeats (published: Chai et al.'s dual-core cluster)")
    for col in ("channel", "8 B latency us", "2 MiB MB/s", "round trips timed", "warm-up"):
        t.add_column(col, justify="left" if col == "channel" else "right")
    lat: dict[str, list[float]] = {}
    for name, results in runs.items():
        lat[name] = [_at(r, SMALL)["seconds"] * 1e6 for r in results]
        bw = statistics.median(LARGE / _at(r, LARGE)["seconds"] / 1e6 for r in results)
        timed = min(s["timed_trips"] for s in results[0]["sizes"])
        warm = min(s["warmup_trips"] for s in results[0]["sizes"])
        t.add_row(name, f"{statistics.median(lat[name]):.2f}", f"{bw:.0f}", str(timed), str(warm))
    for key, label in (
        ("intra_cmp", "published: same chip"),
        ("inter_cmp", "published: another chip"),
        ("inter_node", "published: another node"),
    ):
        t.add_row(label, f"{paper['latency_us_small'][key]}", f"{paper['peak_bandwidth_MBps'][key]}", "", "")
    return t, lat


def _trips(timed: int, warm: int, other: int = 0) -> tuple[str, list[dict[str, Any]]]:
    """What the round trips timed per size (at least TIMED, after WARM untimed ones of the size
    timed, and OTHER untimed ones of another size) say of the figures, and the checks they pass."""
    if timed <= 1:
        note = "one round trip timed per size: single-shot numbers, set-up and cold caches included"
    elif warm < 1 and other > 0:
        note = (
            f"{timed} round trips timed per size after {other} untimed ones of another size: the first message "
            "of a size pays its own set-up (protocol, buffers), so warm up with round_trip(bytes), the size timed"
        )
    elif warm < 1:
        note = f"{timed} round trips timed per size, but the first is timed too: no untimed warm-up"
    else:
        note = f"{warm}+ untimed warm-up and {timed}+ timed round trips per size (the clock reads your code made)"
    checks = [
        {"name": "every payload intact, every figure one message's one-way time", "passed": True},
        {"name": "more than one round trip timed per size", "passed": timed > 1, "detail": f"at least {timed}"},
        {"name": "untimed warm-up round trips before the clock starts", "passed": warm >= 1, "detail": f"{warm}"},
    ]
    return note, checks


def measure(ctx: labs.Context) -> labs.Outcome:
    chosen = configs(ctx)
    near, far = chosen[0][0], chosen[-1][0]

    def small(r: dict) -> float:
        return _at(r, SMALL)["seconds"] * 1e6

    runs = ctx.interleaved(
        chosen,
        settle_on=(lambda out: [(small(a), small(b)) for a, b in zip(out[far], out[near])]) if far != near else None,
    )
    paper = findings.section("channels")
    t, lat = _table(runs, paper)
    sizes = [s for results in runs.values() for r in results for s in r["sizes"]]
    timed = min(s["timed_trips"] for s in sizes)
    warm = min(s["warmup_trips"] for s in sizes)
    other = max(int(s.get("warmup_other_trips") or 0) for s in sizes)
    starter = timed <= 1 or warm < 1
    note, checks = _trips(timed, warm, other)
    names = list(runs)
    effect = None
    if len(names) >= 2:
        ratio, noise = labs.ratio_of(lat[names[-1]], lat[names[0]])
        order = sorted(names, key=lambda n: statistics.median(lat[n]))
        effect = labs.effect_of(
            f"an 8-byte message to another node takes {ratio:.1f}x as long as one within the node "
            f"(fastest first: {'; '.join(order)})",
            ratio,
            noise,
            1.0,
            _caveat(names[-1]),
            f"{paper['latency_us_small']['inter_node'] / paper['latency_us_small']['intra_cmp']:.1f}x "
            f"({findings.source('channels')})",
            repeats=ctx.repeat,
            pairs=list(zip(lat[names[-1]], lat[names[0]])),
        )
    notes = (
        [] if ctx.machine.get("packages", 1) > 1 else ["one socket here: the other-socket channel cannot be measured"]
    )
    c = netns.current()
    if c is not None and any("cluster" in n for n in names):
        link = c.link
        rate = f"{link['bytes_per_s'] / 1e6:.0f} MB/s" if link.get("bytes_per_s") else "unshaped"
        notes.append(
            f"the other node is one of cluster {c.name} on this machine: link {link['name']} ({rate} each way); "
            f"not emulated: {'; '.join(c.record()['not_emulated'])}"
        )
    return labs.Outcome(t, note, starter, effect, notes, {"timed_trips": timed, "warmup_trips": warm}, checks=checks)


PLUGIN = plugins.Lab(
    folder="01-channels",
    title="Three channels",
    build=plugins.LabBuild(
        program="lab-pingpong",
        minutes=25,
        timeout=20.0,
        hang_hint="In this lab that is almost always the two ranks making different numbers of round_trip() calls "
        "(every call needs its partner's): make both ranks run the same warm-up and timed loops.",
    ),
    measure=measure,
)
