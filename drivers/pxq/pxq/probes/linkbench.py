"""`pxq cluster bench`: what a cluster on this machine gives, measured (a benchmark that reports,
never a test). For each link profile it brings up a 4-node cluster (named `bench`), and, in
interleaved repeats:
- ping-pong between two nodes at 1, 2 and 4 MiB (OSU-style latency; bandwidth = bytes over the
  one-way time), against the profile's bandwidth;
- ping-pong within one node, on the cluster and on this machine without it (unchanged?);
- two pairs streaming at once (mbw_mr) through one link pair (2x2: two ranks of a node send to
  two of another) against one pair alone, and through links of their own (4x1).
Also the set-up time of the 4 nodes, and the unshaped links' own speed: a profile above it cannot
be emulated here, and the report says so instead of printing it as emulated."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.cluster import emulator as cluster
from pxq.cluster import links
from pxq.cluster.links import Link
from pxq.core import outputs, paths
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.experiments import runner
from pxq.launch import netns
from pxq.machine import envinfo

NAME = "bench"
SIZES = (1 << 20, 2 << 20, 4 << 20)


def _osu(test: str, layout: Layout, args: list[str], launcher: str, out: Path) -> dict[str, Any]:
    spec = runner.RunSpec(
        app="probe-osu",
        layout=layout,
        mode="flat",
        app_args=[test, *args],
        results=out,
        launcher=launcher,
        timeout=600.0,
        cores=envinfo.cores(),
        oversubscribe=layout.ranks > envinfo.cores(),
    )
    result = runner.execute(spec)
    if result.status != "ok" or result.record is None:
        raise InputError(f"cluster bench: osu {test} on {layout} ({launcher}) ended {result.status}:\n{result.output}")
    return result.record


def _pingpong_mbps(rec: dict[str, Any]) -> dict[int, float]:
    """MB/s (1e6 bytes) per size from an OSU latency record: bytes over the one-way time."""
    return {r["bytes"]: r["bytes"] / r["latency_us"] for r in rec["osu"]["rows"] if r["bytes"] in SIZES}


def _mbw(rec: dict[str, Any]) -> float:
    return float(rec["osu"]["rows"][-1]["mb_per_s"])


def _spread(values: list[float]) -> dict[str, float]:
    med = statistics.median(values)
    return {"median": med, "min": min(values), "max": max(values), "spread": (max(values) - min(values)) / med}


def _measure(link: Link, repeat: int, out: Path, console: Console) -> dict[str, Any]:
    with netns.brought_up(NAME, 4, link, envinfo.cores(), envinfo.cores()) as c:  # the runs below go to it
        iters = ["-i", "10", "-x", "2"] if (link.bytes_per_s or 1e12) < 50e6 else ["-i", "40", "-x", "5"]
        pp_args = ["-m", "1M:4M", *iters]
        mbw_args = ["-m", "1M:1M", "-W", "8", *iters]
        samples: dict[str, list[float]] = {}
        for k in range(repeat):
            console.print(f"  {link.name}: repeat {k + 1} of {repeat}")
            inter = _pingpong_mbps(_osu("latency", Layout(2, 1), pp_args, "cluster", out))
            for size, v in inter.items():
                samples.setdefault(f"inter_{size}", []).append(v)
            samples.setdefault("intra_cluster", []).append(
                _pingpong_mbps(_osu("latency", Layout(1, 2), pp_args, "cluster", out))[4 << 20]
            )
            samples.setdefault("intra_local", []).append(
                _pingpong_mbps(_osu("latency", Layout(1, 2), pp_args, "local", out))[4 << 20]
            )
            samples.setdefault("one_pair", []).append(_mbw(_osu("mbw_mr", Layout(2, 1), mbw_args, "cluster", out)))
            samples.setdefault("two_pairs_one_link", []).append(
                _mbw(_osu("mbw_mr", Layout(2, 2), mbw_args, "cluster", out))
            )
            samples.setdefault("two_pairs_own_links", []).append(
                _mbw(_osu("mbw_mr", Layout(4, 1), mbw_args, "cluster", out))
            )
        return {"link": link.record(), "setup_s": c.setup_s, "figures": {k: _spread(v) for k, v in samples.items()}}


def run(console: Console, profiles: list[Link], repeat: int, out: str | None) -> int:
    cluster.requirements()
    if repeat < 1:
        raise InputError(f"--repeat {repeat}: use 1 or more")
    if cluster.load(NAME) is not None:
        raise InputError("a cluster named 'bench' is up: pxq cluster down --name bench first")
    target = Path(out) if out else paths.results_dir() / "cluster-bench.json"
    host = envinfo.machine()
    console.print(f"cluster bench on {host['host']} ({host['cpu_model']}, {envinfo.cores()} cores)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="pxq-linkbench-") as tmp:
        scratch = Path(tmp) / "osu.jsonl"
        ceiling = _measure(links.PROFILES["unshaped"], repeat, scratch, console)
        for link in profiles:
            rows.append(_measure(link, repeat, scratch, console))
    ceiling_mbps = ceiling["figures"][f"inter_{4 << 20}"]["median"]
    report = {"machine": {k: host[k] for k in ("host", "cpu_model")}, "cores": envinfo.cores(), "unshaped": ceiling}
    report["profiles"] = rows
    table = Table(title="a cluster on this machine: measured against each link profile (medians, spread max-min)")
    for col in (
        "link",
        "profile MB/s",
        "ping-pong 1/2/4 MiB, MB/s",
        "vs profile",
        "2 pairs, 1 link",
        "2 pairs, 2 links",
        "set-up",
    ):
        table.add_column(col)
    for r in [ceiling, *rows]:
        f = r["figures"]
        rate = r["link"]["bytes_per_s"]
        pp = [f[f"inter_{s}"]["median"] for s in SIZES]
        if rate is None:
            verdict = "the ceiling"
        elif rate / 1e6 > 0.9 * ceiling_mbps:
            verdict = f"[yellow]above this machine's unshaped {ceiling_mbps:.0f} MB/s: not emulated[/yellow]"
        else:
            worst = max(abs(v / (rate / 1e6) - 1) for v in pp)
            verdict = f"{min(v / (rate / 1e6) for v in pp):.2f}-{max(v / (rate / 1e6) for v in pp):.2f}" + (
                "" if worst <= 0.10 else " [red](beyond 10%)[/red]"
            )
        one = f["one_pair"]["median"]
        table.add_row(
            r["link"]["name"],
            "-" if rate is None else f"{rate / 1e6:.1f}",
            " / ".join(f"{v:.1f}" for v in pp) + f" (±{max(f[f'inter_{s}']['spread'] for s in SIZES) * 50:.0f}%)",
            verdict,
            f"{f['two_pairs_one_link']['median'] / one:.2f}x one pair",
            f"{f['two_pairs_own_links']['median'] / one:.2f}x one pair",
            f"{r['setup_s']:.2f} s",
        )
    console.print(table)
    intra = ceiling["figures"]
    console.print(
        f"within a node, 4 MiB ping-pong: {intra['intra_cluster']['median']:.0f} MB/s on the cluster, "
        f"{intra['intra_local']['median']:.0f} MB/s on this machine without it "
        f"({intra['intra_cluster']['median'] / intra['intra_local']['median']:.2f}x)"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    outputs.write(target, outputs.dumps(report, indent=1) + "\n", "json", "--out")
    console.print(f"figures: {target}")
    return 0
