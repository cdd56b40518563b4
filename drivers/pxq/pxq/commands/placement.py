"""`pxq placement suggest PROFILE`: a rank order that keeps traffic on the node (pxq.analysis.messages.placement)."""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from rich.console import Console

from pxq.analysis.messages import msgdist, placement, placement_bench, placement_view, rankorder
from pxq.core import bounds, plugins
from pxq.core.errors import InputError
from pxq.core.paths import check_plot_path


def add(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = sub.add_parser(
        "suggest",
        help="map a profile's ranks to nodes, then sockets, with the least traffic on the slower channels",
        description="Writes PREFIX.order (ranks slot by slot, for pxq run --rank-order and Cray MPICH's "
        "MPICH_RANK_ORDER), PREFIX.rankfile (Open MPI) and PREFIX.slurm-hosts (Slurm's arbitrary "
        "distribution), and a figure of the traffic matrix in block and in the suggested order.",
    )
    s.add_argument("profile", type=Path, help="a message profile (pxq profile, pxq run --rank-order, the studies)")
    s.add_argument("--model", help="machine NODESxSOCKETSxCORES (default: the machine the profile observed)")
    s.add_argument(
        "--objective",
        choices=placement.OBJECTIVES,
        default="bytes",
        help="what to keep off the slower channels: bytes (bandwidth, the default) or messages (latency)",
    )
    s.add_argument("--out", type=Path, help="prefix of the files written (default: PROFILE's name + -placement)")
    s.add_argument("--hosts", help="host names for the rankfile and Slurm list: a comma list or a hostfile")
    s.add_argument("--plot", type=Path, help="the traffic-matrix figure (default PREFIX.png)")
    s.add_argument("--seed", type=int, default=1, help="METIS's random seed (default 1)")
    b = sub.add_parser(
        "bench",
        help="time the partitioner on a shuffled neighbour pattern and report the locality it recovers",
    )
    b.add_argument("--grid", default="16x8x8", help="the 2-D or 3-D rank grid (default 16x8x8: 1024 ranks)")
    b.add_argument("--model", help="NODESxSOCKETSxCORES (default: 2 sockets x 2 cores per node, enough nodes)")
    b.add_argument("--repeat", type=int, default=3, help="timed runs (default 3)")


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.action == "bench":
        return _bench(args, console)
    rec = msgdist.load(args.profile)
    model = msgdist.parse_model(args.model) if args.model else placement.model_of_profile(rec)
    placement.check_fit(model, rec["ranks"])
    hosts = rankorder.hosts_of(args.hosts, model.nodes)
    prefix = args.out or args.profile.with_name(f"{args.profile.stem}-placement")
    rankorder.check_prefix(prefix)
    figure = args.plot or prefix.with_name(prefix.name + ".png")
    check_plot_path(figure)
    if model.nodes == 1 and model.sockets == 1:
        raise InputError(
            f"model {model} is one node with one socket: every order is the same there; give --model "
            "NODESxSOCKETSxCORES for the machine you will run on, e.g. --model 4x2x2"
        )
    s = placement.suggest(rec, model, args.objective, args.seed)
    name = msgdist.program_name(rec)
    title = f"{name}: {len(s.order)} ranks on model {model}, by {args.objective}"
    placement_view.print_suggestion(console, s, title)
    header = [
        f"pxq placement suggest {args.profile} --model {model} --objective {args.objective}",
        f"{name}, {len(s.order)} ranks: the ranks slot by slot (slot i: node i // {model.sockets * model.cores}, "
        f"socket (i mod {model.sockets * model.cores}) // {model.cores})",
    ]
    rankorder.write_files(
        prefix,
        {
            "order": rankorder.format_order(s.order, header, s.prediction()),
            "rankfile": rankorder.rankfile_text(model, s.order, hosts),
            "slurm-hosts": rankorder.slurm_hosts_text(model, s.order, hosts),
        },
    )
    for kind, path in rankorder.output_paths(prefix).items():
        console.print(f"wrote {path}: {rankorder.OUTPUTS[kind]}")
    if args.hosts is None:
        console.print("[dim]the rankfile and Slurm list name hosts node0, node1, ...: give --hosts for yours[/dim]")
    console.print(f"figure: {placement_view.plot(rec, s, figure, title)}")
    return 0


BENCH_RANKS = 65536  # the bench's largest grid: 16,384 ranks take about 30 s here (2-core VM)


def _bench(args: argparse.Namespace, console: Console) -> int:
    m = re.fullmatch(r"(\d+)x(\d+)(?:x(\d+))?", args.grid.strip())
    if not m or min(int(g) for g in m.groups() if g) < 1:
        raise InputError(f"--grid {args.grid}: give a 2-D or 3-D rank grid such as 32x32 or 16x8x8")
    dims = tuple(int(g) for g in m.groups() if g)
    ranks = math.prod(dims)
    if ranks > BENCH_RANKS:
        raise InputError(
            f"--grid {args.grid}: {ranks} ranks; the bench partitions at most {BENCH_RANKS} (16,384 take about "
            "30 s on a 2-core VM, and the time grows faster than the ranks): give a smaller grid"
        )
    bounds.repeat(args.repeat)
    model = msgdist.parse_model(args.model) if args.model else msgdist.Model(-(-ranks // 4), 2, 2)
    return placement_bench.bench(console, dims, model, args.repeat)


PLUGIN = plugins.Command(
    help="suggest a rank order from a message profile that keeps traffic on the node (METIS)",
    order=13,
    hooks=plugins.CommandHooks(add, handle, reads_records=True),
    example="./pxq placement suggest results/cg-prof.jsonl --model 4x2x2",
)
