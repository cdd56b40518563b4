"""`pxq cluster up | status | down | bench`: a cluster on this machine (pxq.cluster.emulator):
nodes that are network hosts of their own, each with one link of a chosen bandwidth that its
ranks share. While one is up, `pxq run`, `sweep`, `probe` and `study` launch on it."""

from __future__ import annotations

import argparse
import json
import os

from rich.console import Console
from rich.table import Table

from pxq.cluster import cpusets, links
from pxq.cluster import emulator as cluster
from pxq.core import plugins
from pxq.core.errors import InputError
from pxq.machine import envinfo
from pxq.probes import linkbench

# What --link takes, for `pxq cluster up --help`.
LINK_HELP = (
    "Profiles: "
    + "; ".join(f"{k}: {v.source}" for k, v in links.PROFILES.items())
    + ". Or a rate (1Gbit, 400MB/s), a rate and a latency (400MB/s,5us), or a pxq probe pingpong record."
)


def add(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    what = "bring up P nodes joined by links of one profile (replaces a cluster of the same name)"
    u = sub.add_parser("up", help=what, description=LINK_HELP)
    u.add_argument("--nodes", type=int, default=4, help="nodes (2 to 64, default 4)")
    u.add_argument("--link", default="gige", help="link profile (default gige: 1 Gbit/s)")
    u.add_argument("--mtu", type=int, default=cluster.MTU, help=f"link MTU in bytes (default {cluster.MTU})")
    u.add_argument(
        "--cores-per-node",
        type=int,
        help="each node's cores, a cpuset of this machine's (default: its share, at least 1; "
        "more than the share makes nodes share cores, and the records say how many)",
    )
    _name(u)
    s = sub.add_parser("status", help="the cluster that is up, and anything pxq left behind")
    s.add_argument("--json", action="store_true", help="print the cluster's state as JSON")
    _name(s)
    d = sub.add_parser("down", help="remove the cluster: its processes, namespaces, links and shaping")
    _name(d)
    b = sub.add_parser(
        "bench",
        help="measure what the emulation gives: ping-pong against each profile, a shared link, set-up time",
        description="A benchmark, not a test: it brings up its own clusters (named 'bench'), reports and "
        "removes them. Figures are medians of interleaved repeats with their spread.",
    )
    b.add_argument("--links", default="100mbit,gige,2.5Gbit", help="profiles to measure (default 100mbit,gige,2.5Gbit)")
    b.add_argument("--repeat", type=int, default=3, help="interleaved repeats (default 3)")
    b.add_argument("--out", help="write the figures here as JSON (default results/cluster-bench.json)")


def _name(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--name",
        default=os.environ.get("PXQ_CLUSTER") or cluster.DEFAULT_NAME,
        help="the cluster's name (default $PXQ_CLUSTER, else pxq); runs use $PXQ_CLUSTER's",
    )


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.action != "bench":
        cluster.check_name(args.name)
    if args.action == "up":
        return up(console, args)
    if args.action == "status":
        return status(console, args.name, args.json)
    if args.action == "down":
        return down(console, args.name)
    return linkbench.run(console, [links.parse_link(t) for t in args.links.split(",")], args.repeat, args.out)


def up(console: Console, args: argparse.Namespace) -> int:
    link = links.parse_link(args.link)
    if not 1280 <= args.mtu <= 65000:
        raise InputError(f"--mtu {args.mtu}: give 1280 to 65000 bytes")
    try:
        c = cluster.up(args.name, args.nodes, link, args.mtu, envinfo.cores(), args.cores_per_node)
    except cluster.ClusterError as e:
        console.print(f"[red]pxq cluster up: {e}[/red] (nothing of it was left behind)")
        return 3
    _show(console, c)
    console.print(
        f"up in {c.setup_s:.2f} s. Runs now launch on it (--layout PxQ with P up to {c.nodes}); "
        f"`pxq cluster down{'' if c.name == cluster.DEFAULT_NAME else ' --name ' + c.name}` removes it."
    )
    return 0


def _show(console: Console, c: cluster.Cluster) -> None:
    rec = c.record()
    link = links.Link(**c.link)
    t = Table(title=f"cluster {c.name}", show_header=False)
    t.add_column("what")
    t.add_column("value")
    t.add_row("nodes", ", ".join(f"{c.host(i)} ({a})" for i, a in enumerate(c.addresses)))
    if c.owner:
        others = "" if c.owner == cluster.owner_here() else f": runs of others use it only with PXQ_CLUSTER={c.name}"
        t.add_row("brought up by", c.owner + others)
    t.add_row("link", f"{link.text()}, MTU {c.mtu}: {link.source}")
    t.add_row("each node has", "a network namespace, a host name, its own /tmp and /dev/shm, one shaped link")
    t.add_row("cores", cpusets.describe(c))
    t.add_row("not emulated", "; ".join(rec["not_emulated"]))
    console.print(t)


def status(console: Console, name: str, as_json: bool) -> int:
    c = cluster.load(name)
    left = cluster.leftovers(name) if os.geteuid() == 0 else {"namespaces": [], "cgroups": [], "processes": []}
    if as_json:
        print(json.dumps({"up": c is not None, "cluster": c.record() if c else None, "leftovers": left}, indent=1))
        return 0
    if c is not None:
        _show(console, c)
    else:
        console.print(f"no cluster '{name}' is up: runs launch on this machine (virtual nodes for P > 1)")
        if any(left.values()):
            console.print(f"[yellow]left behind: {left}[/yellow]: `pxq cluster down --name {name}` removes it")
    return 0


def down(console: Console, name: str) -> int:
    cluster.requirements()
    removed = cluster.remove(name)
    if not any(removed.values()):
        console.print(f"no cluster '{name}' was up; nothing of pxq's was left")
        return 0
    console.print(
        f"cluster '{name}' removed: {len(removed['namespaces'])} namespace(s) with their links and shaping, "
        f"{len(removed['cgroups'])} cpuset(s), {len(removed['processes'])} process(es)"
    )
    left = cluster.leftovers(name)
    if any(left.values()):
        console.print(f"[red]still there: {left}[/red]")
        return 3
    return 0


PLUGIN = plugins.Command(
    help="a cluster on this machine: nodes with their own network, host name, /tmp and shaped link (up, down)",
    order=14,
    hooks=plugins.CommandHooks(add, handle, needs_build=False),
    example="sudo ./pxq cluster up --nodes 2 --link gige",
)
