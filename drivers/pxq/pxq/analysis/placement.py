"""Rank placement from a message profile: `pxq placement suggest`, `pxq run --rank-order`,
`pxq study placement`.

A machine model NODESxSOCKETSxCORES has slots numbered in block order (node 0's socket 0's
cores first). A rank order lists the ranks slot by slot: its i-th entry is the rank that sits
in slot i (the convention of Cray MPICH's MPICH_RANK_ORDER file). Block is the order 0, 1,
2, ...; the suggestion comes from METIS (through pymetis): the ranks' traffic graph, weighted
by bytes or by messages, is cut into the nodes' exact sizes, then each node's part into its
sockets'. A swap pass (Kernighan-Lin gains, best swap first) then refines each cut. Block and
cyclic stay candidates: the suggestion is the candidate with the least traffic between nodes,
then between sockets, so it is never worse than either.

Over 400 lines: the partitioner, the rank-order formats, the printing and figure of a suggestion
and the partitioner's benchmark still share this module (to split: formats, view, benchmark).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pxq import figures
from pxq.analysis import msgdist
from pxq.analysis.findings import spread
from pxq.analysis.msgdist import Model
from pxq.core import bounds, escape, records
from pxq.core.errors import InputError
from pxq.core.layout import format_volume
from pxq.core.records import write_whole
from pxq.launch.hostfile import hostfile_hosts

OBJECTIVES = ("bytes", "messages")
PREDICTION_TAG = "# pxq-prediction "  # the order file's header line with the prediction (JSON)


# ---------------------------------------------------------------- the traffic graph


def traffic(rec: dict[str, Any], objective: str) -> np.ndarray:
    """The ranks' symmetric traffic matrix (point-to-point and the collectives as modelled),
    by bytes or by messages; a rank's messages to itself are left out (no placement moves them)."""
    if objective not in OBJECTIVES:
        raise InputError(f"--objective {objective}: use bytes or messages")
    n = rec["ranks"]
    w = np.zeros((n, n))
    for src, dst, _bin, count, nbytes in rec["p2p"] + rec["collective_model"]:
        if src != dst and 0 <= src < n and 0 <= dst < n:
            w[src, dst] += nbytes if objective == "bytes" else count
    return w + w.T


def slot_places(model: Model, ranks: int) -> list[tuple[int, int]]:
    """(node, socket) of the first `ranks` slots in block order."""
    per_node = model.sockets * model.cores
    return [(s // per_node, (s % per_node) // model.cores) for s in range(ranks)]


def places_of(model: Model, order: list[int]) -> list[tuple[int, int]]:
    """(node, socket) of every rank when the ranks sit slot by slot in `order`."""
    slots = slot_places(model, len(order))
    out: list[tuple[int, int]] = [(0, 0)] * len(order)
    for slot, rank in enumerate(order):
        out[rank] = slots[slot]
    return out


def order_of(places: list[tuple[int, int]]) -> list[int]:
    """The rank order (ranks slot by slot) that gives these places: every node's and socket's
    ranks in ascending order, nodes and sockets in order."""
    return sorted(range(len(places)), key=lambda r: (places[r], r))


def model_order(model: Model, ranks: int, alloc: str) -> list[int]:
    """Block's or cyclic's rank order on the model."""
    return order_of(msgdist.place(model, ranks, alloc))


def fill_sizes(capacity: int, parts: int, count: int) -> list[int]:
    """The sizes block gives `parts` parts of `capacity` for `count` items: full parts first."""
    return [max(0, min(capacity, count - i * capacity)) for i in range(parts)]


def fits(model: Model, places: list[tuple[int, int]]) -> bool:
    """Whether a placement fills the model's nodes and sockets as block does (what a rank order
    can express)."""
    return sorted(places) == sorted(slot_places(model, len(places)))


def check_fit(model: Model, ranks: int) -> None:
    if ranks > model.slots:
        raise InputError(
            f"model {model} has {model.slots} cores but the profile has {ranks} ranks: use a model with at "
            f"least {ranks} cores (NODESxSOCKETSxCORES)"
        )
    if ranks < 2:
        raise InputError(f"the profile has {ranks} rank(s): there is nothing to place")


# ---------------------------------------------------------------- partitioning


def _metis(w: np.ndarray, sizes: list[int], seed: int) -> np.ndarray:
    """METIS's k-way cut of the graph into parts of about `sizes` vertices."""
    import pymetis

    n = w.shape[0]
    top = w.max()
    # METIS takes integer weights: scaled to 1..10^6, every edge at least 1.
    scaled = np.where(w > 0, np.maximum(1, np.rint(w * (1e6 / top))) if top > 0 else 1, 0).astype(np.int64)
    xadj, adjncy, eweights = [0], [], []
    for v in range(n):
        nbrs = np.nonzero(scaled[v])[0]
        adjncy += nbrs.tolist()
        eweights += scaled[v, nbrs].tolist()
        xadj.append(len(adjncy))
    opts = pymetis.Options(seed=seed, ufactor=1, ncuts=4)
    total = float(sum(sizes))
    result = pymetis.part_graph(
        len(sizes),
        pymetis.CSRAdjacency(xadj, adjncy),
        eweights=eweights,
        tpwgts=[s / total for s in sizes],
        options=opts,
    )
    return np.asarray(result.vertex_part, dtype=int)


def _repair(w: np.ndarray, part: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Moves vertices out of parts above their size into parts below it, each time the move
    that cuts the least traffic, until every part has its exact size."""
    part = part.copy()
    k = len(sizes)
    conn = w @ np.eye(k)[part]  # traffic from each vertex to each part
    have = np.bincount(part, minlength=k)
    while True:
        over = [p for p in range(k) if have[p] > sizes[p]]
        if not over:
            return part
        under = [p for p in range(k) if have[p] < sizes[p]]
        best = None
        for v in np.nonzero(np.isin(part, over))[0]:
            for q in under:
                gain = conn[v, q] - conn[v, part[v]]
                if best is None or gain > best[0]:
                    best = (gain, v, q)
        _, v, q = best
        conn[:, part[v]] -= w[:, v]
        conn[:, q] += w[:, v]
        have[part[v]] -= 1
        have[q] += 1
        part[v] = q


def refine(w: np.ndarray, part: np.ndarray, k: int, max_swaps: int | None = None) -> np.ndarray:
    """Swaps pairs of vertices between parts, the best gain first, while a swap lowers the
    traffic between parts (sizes never change)."""
    part = part.copy()
    n = len(part)
    conn = w @ np.eye(k)[part]
    limit = max_swaps if max_swaps is not None else 4 * n
    for _ in range(limit):
        own = conn[np.arange(n), part]
        cross = conn[:, part]  # cross[a, b]: traffic from a to b's part
        gain = cross - own[:, None] + cross.T - own[None, :] - 2 * w
        gain[part[:, None] == part[None, :]] = -np.inf
        a, b = np.unravel_index(np.argmax(gain), gain.shape)
        if not gain[a, b] > 1e-9 * max(1.0, float(w.max())):
            break
        pa, pb = part[a], part[b]
        for v, old, new in ((a, pa, pb), (b, pb, pa)):
            conn[:, old] -= w[:, v]
            conn[:, new] += w[:, v]
            part[v] = new
    return part


def cut(w: np.ndarray, part: np.ndarray) -> float:
    """Traffic between different parts (each pair counted once)."""
    return float(w[part[:, None] != part[None, :]].sum() / 2)


def _split(w: np.ndarray, sizes: list[int], seed: int) -> np.ndarray:
    """An exact-size partition from METIS, repaired and refined."""
    used = [i for i, s in enumerate(sizes) if s > 0]
    if len(used) == 1:
        return np.full(w.shape[0], used[0], dtype=int)
    sub = [sizes[i] for i in used]
    part = _metis(w, sub, seed) if w.any() else np.repeat(np.arange(len(sub)), sub)
    part = refine(w, _repair(w, part, sub), len(sub))
    return np.asarray(used)[part]


def _sockets(w: np.ndarray, model: Model, nodes: np.ndarray, seed: int) -> np.ndarray:
    """Each node's ranks cut into its sockets (exact sizes, as block fills them)."""
    sockets = np.zeros(len(nodes), dtype=int)
    if model.sockets == 1:
        return sockets
    for node in np.unique(nodes):
        members = np.nonzero(nodes == node)[0]
        sizes = fill_sizes(model.cores, model.sockets, len(members))
        sockets[members] = _split(w[np.ix_(members, members)], sizes, seed)
    return sockets


def _places(nodes: np.ndarray, sockets: np.ndarray) -> list[tuple[int, int]]:
    return [(int(n), int(s)) for n, s in zip(nodes, sockets)]


# ---------------------------------------------------------------- the suggestion


@dataclass
class Candidate:
    name: str  # block, cyclic, metis or suggested (the best of the three)
    places: list[tuple[int, int]]
    cost: dict[str, dict[str, int]]  # bytes and count per channel


@dataclass
class Suggestion:
    model: Model
    objective: str
    order: list[int]
    chosen: str
    candidates: list[Candidate]
    seconds: float  # the partitioner's time
    notes: list[str] = field(default_factory=list)

    def candidate(self, name: str) -> Candidate:
        return next(c for c in self.candidates if c.name == name)

    def prediction(self) -> dict[str, Any]:
        """What the order file carries: the model, the objective and the channels' bytes and
        messages under the suggestion, block and cyclic."""
        return {
            "model": str(self.model),
            "objective": self.objective,
            "ranks": len(self.order),
            "chosen": self.chosen,
            "channels": {c.name: c.cost for c in self.candidates if c.name in ("suggested", "block", "cyclic")},
        }


channel_cost = msgdist.channel_totals  # bytes and messages per channel under a placement


def measure_of(objective: str) -> str:
    """The key of a channel cost an objective counts: "bytes" or "count" (messages)."""
    return "bytes" if objective == "bytes" else "count"


def _key(cost: dict[str, dict[str, int]], objective: str) -> tuple[int, int, int]:
    what = measure_of(objective)
    other = "count" if what == "bytes" else "bytes"
    return cost[what]["inter_node"], cost[what]["inter_cmp"], cost[other]["inter_node"]


def suggest(rec: dict[str, Any], model: Model, objective: str = "bytes", seed: int = 1) -> Suggestion:
    """The rank order with the least traffic between nodes, then between sockets, on the model."""
    n = rec["ranks"]
    check_fit(model, n)
    w = traffic(rec, objective)
    start = time.perf_counter()
    nodes = _split(w, fill_sizes(model.sockets * model.cores, model.nodes, n), seed)
    metis = _places(nodes, _sockets(w, model, nodes, seed))
    seconds = time.perf_counter() - start
    cands = [Candidate(a, msgdist.place(model, n, a), {}) for a in ("block", "cyclic")]
    cands.append(Candidate("metis", metis, {}))
    for c in cands:
        c.cost = channel_cost(rec, c.places)
    eligible = [c for c in cands if fits(model, c.places)]  # (cyclic on a model it does not fill does not)
    best = min(eligible, key=lambda c: (_key(c.cost, objective), c.name != "metis"))
    cands.append(Candidate("suggested", best.places, best.cost))
    return Suggestion(model, objective, order_of(best.places), best.name, cands, seconds)


# ---------------------------------------------------------------- order files


def model_of_profile(rec: dict[str, Any]) -> Model:
    """The machine a profile observed: its nodes, sockets per node and the most ranks on one
    socket."""
    places = msgdist.observed_places(rec)
    nodes = sorted({n for n, _ in places})
    sockets = sorted({max(s, 0) for _, s in places})
    per = {}
    for p in places:
        per[p] = per.get(p, 0) + 1
    return Model(len(nodes), len(sockets), max(per.values()))


def format_order(order: list[int], header: list[str], prediction: dict[str, Any] | None) -> str:
    lines = [f"# {h}" for h in header]
    if prediction is not None:
        lines.append(PREDICTION_TAG + json.dumps(prediction, sort_keys=True))
    lines += [",".join(str(r) for r in order[i : i + 16]) for i in range(0, len(order), 16)]
    return "\n".join(lines) + "\n"


def parse_order(text: str, source: str) -> tuple[list[int], dict[str, Any] | None]:
    """A rank order file (ranks slot by slot, separated by commas or white space, ranges such
    as 0-7 allowed, # comments): the order, and the prediction its header carries, if any."""
    prediction = None
    ranks: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(PREDICTION_TAG):
            prediction = _prediction(line[len(PREDICTION_TAG) :], f"{source}:{number}")
            continue
        for word in re.split(r"[,\s]+", line.split("#", 1)[0].strip()):
            if not word:
                continue
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", word)
            if not m:
                raise InputError(
                    f"{source}:{number}: '{word}' is not a rank or a range such as 0-7: list the ranks slot by "
                    "slot, e.g. 0,4,1,5"
                )
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if hi < lo:
                raise InputError(f"{source}:{number}: range {word} runs backwards: write it as {hi}-{lo}")
            if hi >= bounds.MAX_RANKS or len(ranks) + hi - lo >= bounds.MAX_RANKS:
                raise InputError(
                    f"{source}:{number}: '{word}' goes past {bounds.MAX_RANKS} ranks, more than a run of pxq "
                    "has: list the ranks of the run, slot by slot"
                )
            ranks += range(lo, hi + 1)
    check_permutation(ranks, source)
    return ranks, prediction


_PREDICTION = {
    "type": "object",
    "properties": {
        "model": {"type": "string", "pattern": "^[0-9]+x[0-9]+(x[0-9]+)?$"},
        "objective": {"type": "string", "pattern": "^[a-z-]+$"},
        "ranks": {"type": "integer", "minimum": 1},
        "chosen": {"type": "string", "pattern": "^[a-z-]+$"},
        "channels": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
            },
        },
    },
}


def _prediction(text: str, where: str) -> dict[str, Any]:
    """The prediction line of an order file, read through the records' bounds and checked for
    the types `pxq placement suggest` writes."""
    import jsonschema

    value, why = records.parse_line(text.encode("utf-8", errors="replace"))
    if why is None:
        try:
            jsonschema.validate(value, _PREDICTION)
        except jsonschema.ValidationError as e:
            why = f"{'/'.join(map(str, e.absolute_path)) or 'the line'}: {e.message}"
    if why is not None:
        raise InputError(
            f"{where}: the prediction line is not one pxq writes "
            f"({escape.plain(why).replace('not a JSON record', 'not JSON')[:120]}): write the file "
            "again with pxq placement suggest, or delete the line"
        )
    return value


def check_permutation(order: list[int], source: str) -> None:
    n = len(order)
    if n == 0:
        raise InputError(f"{source}: no ranks in it: list the ranks slot by slot, e.g. 0,4,1,5")
    seen: set[int] = set()
    for r in order:
        if r >= n:
            raise InputError(
                f"{source}: rank {r} with only {n} ranks listed: the order must list every rank 0..{n - 1} once"
            )
        if r in seen:
            raise InputError(f"{source}: rank {r} is listed twice: the order must list every rank 0..{n - 1} once")
        seen.add(r)


def read_order(path: Path) -> tuple[list[int], dict[str, Any] | None]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--rank-order {path}: no such file; write one with pxq placement suggest PROFILE")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--rank-order {path}: cannot read it ({e}): give a text file of ranks") from None
    return parse_order(text, str(path))


def hosts_of(spec: str | None, nodes: int) -> list[str]:
    """Host names for the rankfile and Slurm's host list: from a comma list or a hostfile
    (first word of each line), else node0, node1, ... to be replaced."""
    if spec is None:
        return [f"node{i}" for i in range(nodes)]

    if Path(spec).is_file():
        names = hostfile_hosts(Path(spec))
    else:
        names = [h.strip() for h in spec.split(",") if h.strip()]
    if len(names) < nodes:
        raise InputError(f"--hosts {spec}: {len(names)} host(s) for {nodes} nodes: give one host per node")
    return names[:nodes]


def rankfile_text(model: Model, order: list[int], hosts: list[str]) -> str:
    """An Open MPI rankfile: every rank on its node's host, socket and core (socket:core)."""
    per_node = model.sockets * model.cores
    lines = {}
    for slot, rank in enumerate(order):
        node, local = divmod(slot, per_node)
        lines[rank] = f"rank {rank}={hosts[node]} slot={local // model.cores}:{local % model.cores}"
    return "".join(lines[r] + "\n" for r in sorted(lines))


def slurm_hosts_text(model: Model, order: list[int], hosts: list[str]) -> str:
    """Slurm's arbitrary distribution (SLURM_HOSTFILE): line i is the host of task i."""
    places = places_of(model, order)
    return "".join(hosts[node] + "\n" for node, _ in places)


# ---------------------------------------------------------------- what suggest prints and writes

OUTPUTS = {
    "order": "ranks slot by slot: pxq run --rank-order FILE, or Cray MPICH's MPICH_RANK_ORDER",
    "rankfile": "Open MPI: mpirun --rankfile FILE",
    "slurm-hosts": "Slurm: SLURM_HOSTFILE=FILE srun --distribution=arbitrary",
}


def output_paths(prefix: Path) -> dict[str, Path]:
    return {kind: prefix.with_name(f"{prefix.name}.{kind}") for kind in OUTPUTS}


def check_prefix(prefix: Path) -> None:
    """The output folder exists and takes files, before any work is done."""
    import os

    parent = prefix.parent if str(prefix.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"--out {prefix}: folder '{parent}' does not exist: create it or give another --out")
    if not os.access(parent, os.W_OK):
        raise InputError(f"--out {prefix}: folder '{parent}' is not writable: give another --out")
    for path in output_paths(prefix).values():
        if path.is_dir():
            raise InputError(f"--out {prefix}: {path} is a folder: give another --out")


def write_files(prefix: Path, files: dict[str, str]) -> None:
    """Each file whole or not at all."""
    try:
        for kind, path in output_paths(prefix).items():
            write_whole(path, files[kind])
    except OSError as e:
        raise InputError(f"cannot write {prefix}.*: {e.strerror}: give another --out") from None


def print_suggestion(console: Any, s: Suggestion, title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    for col in ("order", "intra-CMP bytes", "inter-CMP bytes", "inter-node bytes", "inter-node msgs", "messages"):
        table.add_column(col, justify="left" if col == "order" else "right")
    for c in s.candidates:
        b, n = c.cost["bytes"], c.cost["count"]
        tb, tn = sum(b.values()), sum(n.values())
        name = f"suggested (= {s.chosen})" if c.name == "suggested" else c.name
        table.add_row(
            name,
            msgdist.pct(b["intra_cmp"], tb),
            msgdist.pct(b["inter_cmp"], tb),
            f"{format_volume(b['inter_node'])} ({msgdist.pct(b['inter_node'], tb)})",
            f"{n['inter_node']} ({msgdist.pct(n['inter_node'], tn)})",
            str(tn),
            style="bold" if c.name == "suggested" else None,
        )
    console.print(table)
    for line in verdict(s):
        console.print(line)
    self_bytes = s.candidate("block").cost["bytes"]["self"]
    if self_bytes:
        console.print(f"[dim]a rank's messages to itself ({format_volume(self_bytes)}) stay put under any order[/dim]")


def verdict(s: Suggestion) -> list[str]:
    """How the suggestion compares with the better of block and cyclic, by the objective."""
    what = measure_of(s.objective)
    unit = "bytes" if what == "bytes" else "messages"
    show = format_volume if what == "bytes" else str
    mine = s.candidate("suggested").cost[what]["inter_node"]
    best = min(("block", "cyclic"), key=lambda a: s.candidate(a).cost[what]["inter_node"])
    theirs = s.candidate(best).cost[what]["inter_node"]
    if mine < theirs:
        gain = f"{100 * (1 - mine / theirs):.1f}% fewer than {best}, the better of block and cyclic ({show(theirs)})"
    else:
        gain = f"the same as {best}, the better of block and cyclic: {best} is already as good as METIS finds"
    return [
        f"suggested order: {show(mine)} inter-node {unit}, {gain}",
        f"partitioner: METIS through pymetis, {s.seconds:.2f} s for {len(s.order)} ranks",
    ]


def plot(rec: dict[str, Any], s: Suggestion, path: Path, title: str) -> Path:
    """The traffic matrix with ranks in block order and in the suggested order, the nodes'
    squares outlined: what stays inside a square stays on a node."""
    from matplotlib.colors import LogNorm

    plt = figures.pyplot()
    w = traffic(rec, s.objective) / 2  # each direction once
    n = len(s.order)
    per_node = s.model.sockets * s.model.cores
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.4), constrained_layout=True)
    top = w.max() if w.any() else 1.0
    norm = LogNorm(vmin=max(top * 1e-4, w[w > 0].min() if w.any() else 1.0), vmax=top)
    for ax, name, order in ((axes[0], "block", list(range(n))), (axes[1], "suggested", s.order)):
        m = w[np.ix_(order, order)]
        img = ax.imshow(np.where(m > 0, m, np.nan), cmap="viridis", norm=norm, interpolation="nearest")
        for edge in range(0, n + 1, per_node):
            ax.axhline(edge - 0.5, color="tab:red", lw=0.6)
            ax.axvline(edge - 0.5, color="tab:red", lw=0.6)
        inter = s.candidate(name).cost[measure_of(s.objective)]["inter_node"]
        shown = format_volume(inter) if s.objective == "bytes" else f"{inter} messages"
        ax.set_title(f"{name}: {shown} between nodes", fontsize=9)
        ax.set_xlabel("slot (rank placed there)" if name == "suggested" else "rank = slot")
        ax.set_ylabel("slot")
    bar = fig.colorbar(img, ax=list(axes), shrink=0.8, label=f"{s.objective} between the two ranks")
    if s.objective == "bytes":
        from matplotlib.ticker import FuncFormatter, LogLocator

        bar.ax.yaxis.set_major_locator(LogLocator(base=4.0))
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: figures.short_bytes(v)))
        bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    fig.suptitle(title + "; red squares: one node each", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return path


def print_channels(console: Any, channels: dict[str, Any]) -> None:
    """A run's channels as its profile measured them, beside the prediction."""
    seen, predicted = channels.get("observed"), channels.get("predicted")
    if seen is None:
        console.print(f"[yellow]channels: {channels.get('note', 'not measured')}[/yellow]")
        return
    total = sum(seen["bytes"].values())
    parts = ", ".join(f"{msgdist.CHANNEL_TEXT[c]} {msgdist.pct(seen['bytes'][c], total)}" for c in msgdist.CHANNELS)
    line = f"channels measured (the run's message profile): {format_volume(seen['bytes']['inter_node'])} between nodes"
    console.print(f"{line} ({parts} of {format_volume(total)})")
    if predicted is not None:
        want = predicted["bytes"]["inter_node"]
        same = "as predicted" if want == seen["bytes"]["inter_node"] else "the prediction differs"
        console.print(f"predicted for model {channels.get('model')}: {format_volume(want)} between nodes: {same}")


# ---------------------------------------------------------------- synthetic profiles and the benchmark


def stencil_profile(dims: tuple[int, ...], nbytes: int = 8192, shuffle: int | None = None) -> dict[str, Any]:
    """A message profile of a 2-D or 3-D neighbour exchange (one message each way between grid
    neighbours, no wrap-around), its ranks renumbered at random with seed `shuffle` if given."""
    import itertools
    import random

    coords = list(itertools.product(*(range(d) for d in dims)))
    index = {c: i for i, c in enumerate(coords)}
    rank = list(range(len(coords)))
    if shuffle is not None:
        random.Random(shuffle).shuffle(rank)
    upper = [0] + [1 << (k - 1) for k in range(1, 50)]
    size_bin = next(k for k, u in enumerate(upper) if nbytes <= u)
    p2p = []
    for c in coords:
        for axis in range(len(dims)):
            for step in (-1, 1):
                d = list(c)
                d[axis] += step
                if 0 <= d[axis] < dims[axis]:
                    p2p.append([rank[index[c]], rank[index[tuple(d)]], size_bin, 1, nbytes])
    name = "x".join(str(d) for d in dims)
    return {
        "kind": "profile",
        "schema": 2,
        "app": "msgprof",
        "status": "ok",
        "program": f"stencil-{name}" + (f"-shuffled-{shuffle}" if shuffle is not None else ""),
        "ranks": len(coords),
        "columns": ["src", "dst", "bin", "count", "bytes"],
        "bins": {"kind": "log2", "upper_bytes": upper},
        "p2p": p2p,
        "collective_model": [],
        "collectives": {},
        "placement": [],
        "context": {"mpi_library": "none (a synthetic profile)", "date": dt.datetime.now(dt.timezone.utc).isoformat()},
    }


def bench(console: Any, dims: tuple[int, ...], model: Model, repeat: int) -> int:
    """Times suggest() on a shuffled neighbour pattern and says how much locality it recovered
    (inter-node bytes against the unshuffled pattern in block order)."""
    import statistics

    plain = stencil_profile(dims)
    shuffled = stencil_profile(dims, shuffle=1)
    n = plain["ranks"]
    check_fit(model, n)
    ideal = channel_cost(plain, msgdist.place(model, n, "block"))["bytes"]["inter_node"]
    suggest(shuffled, model)  # a first call loads METIS: not timed
    times, got = [], None
    for _ in range(repeat):
        got = suggest(shuffled, model)
        times.append(got.seconds)
    mine = got.candidate("suggested").cost["bytes"]["inter_node"]
    block = got.candidate("block").cost["bytes"]["inter_node"]
    console.print(
        f"{shuffled['program']}: {n} ranks on model {model}: partitioner median {statistics.median(times):.3f} s "
        f"(spread {100 * spread(times):.0f}%, {repeat} runs; min {min(times):.3f} s, max {max(times):.3f} s)"
    )
    console.print(
        f"inter-node bytes: suggested {format_volume(mine)} = {mine / ideal:.3f}x the unshuffled pattern in block "
        f"order ({format_volume(ideal)}); the shuffled ranks in block order: {format_volume(block)} "
        f"({block / ideal:.2f}x)"
    )
    return 0
