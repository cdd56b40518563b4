"""Rank placement from a message profile: `pxq placement suggest`, `pxq run --rank-order`,
`pxq study placement`.

A machine model NODESxSOCKETSxCORES has slots numbered in block order (node 0's socket 0's
cores first). A rank order lists the ranks slot by slot: its i-th entry is the rank that sits
in slot i (the convention of Cray MPICH's MPICH_RANK_ORDER file). Block is the order 0, 1,
2, ...; the suggestion comes from METIS (through pymetis): the ranks' traffic graph, weighted
by bytes or by messages, is cut into the nodes' exact sizes, then each node's part into its
sockets'. A swap pass (Kernighan-Lin gains, best swap first among the vertices with the best
lone gains) then refines each cut. The graph is sparse throughout (a rank talks to few peers):
16,384 ranks are placed in about 30 s and 300 MB on a 2-core VM. Block and
cyclic stay candidates: the suggestion is the candidate with the least traffic between nodes,
then between sockets, so it is never worse than either.

The rank-order files are rankorder.py, a suggestion's table and figure placement_view.py, the
partitioner's benchmark placement_bench.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from pxq.analysis.messages import msgdist
from pxq.analysis.messages.msgdist import Model
from pxq.core.errors import InputError
from pxq.core.records import RecordError

OBJECTIVES = ("bytes", "messages")


# ---------------------------------------------------------------- the traffic graph


def traffic(rec: dict[str, Any], objective: str) -> sparse.csr_matrix:
    """The ranks' symmetric traffic matrix (point-to-point and the collectives as modelled),
    by bytes or by messages; a rank's messages to itself are left out (no placement moves them).
    Sparse: a rank talks to few peers, and P x P dense would be 2 GiB at 16,384 ranks."""
    if objective not in OBJECTIVES:
        raise InputError(f"--objective {objective}: use bytes or messages")
    n = rec["ranks"]
    src, dst, val = [], [], []
    for s, d, _bin, count, nbytes in rec["p2p"] + rec["collective_model"]:
        if s != d and 0 <= s < n and 0 <= d < n:
            src.append(s)
            dst.append(d)
            val.append(float(nbytes if objective == "bytes" else count))
    w = sparse.coo_matrix((val, (src, dst)), shape=(n, n)).tocsr()  # duplicates summed
    w = (w + w.T).tocsr()
    w.eliminate_zeros()
    return w


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


def _sparse(w: Any) -> sparse.csr_matrix:
    return w if sparse.isspmatrix_csr(w) else sparse.csr_matrix(w)


def _metis(w: sparse.csr_matrix, sizes: list[int], seed: int) -> np.ndarray:
    """METIS's k-way cut of the graph into parts of about `sizes` vertices."""
    import pymetis

    top = w.max()
    # METIS takes integer weights: scaled to 1..10^6, every edge at least 1.
    eweights = np.maximum(1, np.rint(w.data * (1e6 / top))).astype(np.int64)
    opts = pymetis.Options(seed=seed, ufactor=1, ncuts=4)
    total = float(sum(sizes))
    result = pymetis.part_graph(
        len(sizes),
        pymetis.CSRAdjacency(w.indptr.tolist(), w.indices.tolist()),
        eweights=eweights.tolist(),
        tpwgts=[s / total for s in sizes],
        options=opts,
    )
    return np.asarray(result.vertex_part, dtype=int)


def _connections(w: sparse.csr_matrix, part: np.ndarray, k: int) -> np.ndarray:
    """Traffic from each vertex to each part (n x k, dense: k is the nodes or sockets)."""
    n = len(part)
    member = sparse.csr_matrix((np.ones(n), (np.arange(n), part)), shape=(n, k))
    return np.asarray((w @ member).todense())


def _move(w: sparse.csr_matrix, conn: np.ndarray, v: int, old: int, new: int) -> None:
    """Vertex v leaves part `old` for `new`: its neighbours' connections follow (w is symmetric)."""
    lo, hi = w.indptr[v], w.indptr[v + 1]
    nbrs, weights = w.indices[lo:hi], w.data[lo:hi]
    conn[nbrs, old] -= weights
    conn[nbrs, new] += weights


def _repair(w: Any, part: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Moves vertices out of parts above their size into parts below it, each time the move
    that cuts the least traffic, until every part has its exact size."""
    w, part = _sparse(w), part.copy()
    k = len(sizes)
    conn = _connections(w, part, k)
    have = np.bincount(part, minlength=k)
    want = np.asarray(sizes)
    while True:
        over = np.nonzero(have > want)[0]
        if not len(over):
            return part
        under = np.nonzero(have < want)[0]  # a part above its size implies one below it
        movers = np.nonzero(np.isin(part, over))[0]
        gain = conn[np.ix_(movers, under)] - conn[movers, part[movers]][:, None]
        i, j = np.unravel_index(np.argmax(gain), gain.shape)
        mv, mq = int(movers[i]), int(under[j])
        _move(w, conn, mv, part[mv], mq)
        have[part[mv]] -= 1
        have[mq] += 1
        part[mv] = mq


def _best_moves(conn: np.ndarray, part: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each row's best gain from moving it alone to another part (-inf with one part)."""
    d = conn[rows] - conn[rows, part[rows]][:, None]
    d[np.arange(len(rows)), part[rows]] = -np.inf
    return d.max(axis=1)


SWAP_CANDIDATES = 256  # vertices a swap search tries, best lone gain first


def _best_swap(
    w: sparse.csr_matrix, conn: np.ndarray, part: np.ndarray, alone: np.ndarray, tol: float
) -> tuple[float, int, int]:
    """The swap of two vertices of different parts that lowers the traffic between parts most:
    (gain, a, b). Swapping a (part p) and b (part q) gains D(a, q) + D(b, p) - 2 w(a, b), where
    D is a lone move's gain, at most ALONE[a] + max(ALONE): vertices are tried best lone gain
    first, and only towards the parts they send to (a swap towards neither side's traffic
    loses both vertices' own), until no untried vertex can beat the best swap found, or
    SWAP_CANDIDATES were tried (the best swap among them: a refinement, bounded at any size)."""
    most = float(alone.max())
    best: tuple[float, int, int] = (tol, -1, -1)
    beside = np.zeros(len(part))
    tried = min(SWAP_CANDIDATES, len(part))
    first = np.argpartition(-alone, tried - 1)[:tried]
    for a in first[np.argsort(-alone[first], kind="stable")]:
        if alone[a] + most <= best[0]:
            break
        pa = part[a]
        lo, hi = w.indptr[a], w.indptr[a + 1]
        nbrs, weights = w.indices[lo:hi], w.data[lo:hi]
        beside[nbrs] = weights
        for q in np.unique(part[nbrs]):
            gain_a = conn[a, q] - conn[a, pa]
            if q == pa or gain_a + most <= best[0]:
                continue
            bs = np.nonzero(part == q)[0]
            gain_b = conn[bs, pa] - conn[bs, q] - 2 * beside[bs]
            j = int(np.argmax(gain_b))
            if gain_a + gain_b[j] > best[0]:
                best = (float(gain_a + gain_b[j]), int(a), int(bs[j]))
        beside[nbrs] = 0
    return best


def refine(w: Any, part: np.ndarray, k: int, max_swaps: int | None = None) -> np.ndarray:
    """Swaps pairs of vertices between parts, the best gain first, while a swap lowers the
    traffic between parts (sizes never change). Sparse: each swap costs the parts it touches
    and the vertices whose lone gain could still beat it, never all pairs."""
    w, part = _sparse(w), part.copy()
    conn = _connections(w, part, k)
    alone = _best_moves(conn, part, np.arange(len(part)))
    tol = 1e-9 * max(1.0, float(w.max()) if w.nnz else 0.0)
    for _ in range(max_swaps if max_swaps is not None else 4 * len(part)):
        _gain, a, b = _best_swap(w, conn, part, alone, tol)
        if a < 0:
            break
        pa, pb = part[a], part[b]
        _move(w, conn, a, pa, pb)
        _move(w, conn, b, pb, pa)
        part[a], part[b] = pb, pa
        touched = np.unique(
            np.concatenate(([a, b], w.indices[w.indptr[a] : w.indptr[a + 1]], w.indices[w.indptr[b] : w.indptr[b + 1]]))
        )
        alone[touched] = _best_moves(conn, part, touched)
    return part


def cut(w: Any, part: np.ndarray) -> float:
    """Traffic between different parts (each pair counted once)."""
    c = _sparse(w).tocoo()
    return float(c.data[part[c.row] != part[c.col]].sum() / 2)


def _split(w: sparse.csr_matrix, sizes: list[int], seed: int) -> np.ndarray:
    """An exact-size partition from METIS, repaired and refined."""
    used = [i for i, s in enumerate(sizes) if s > 0]
    if len(used) == 1:
        return np.full(w.shape[0], used[0], dtype=int)
    sub = [sizes[i] for i in used]
    part = _metis(w, sub, seed) if w.nnz else np.repeat(np.arange(len(sub)), sub)
    part = refine(w, _repair(w, part, sub), len(sub))
    return np.asarray(used)[part]


def _sockets(w: sparse.csr_matrix, model: Model, nodes: np.ndarray, seed: int) -> np.ndarray:
    """Each node's ranks cut into its sockets (exact sizes, as block fills them)."""
    sockets = np.zeros(len(nodes), dtype=int)
    if model.sockets == 1:
        return sockets
    for node in np.unique(nodes):
        members = np.nonzero(nodes == node)[0]
        sizes = fill_sizes(model.cores, model.sockets, len(members))
        sockets[members] = _split(w[members][:, members].tocsr(), sizes, seed)
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
    per: dict[tuple[int, int], int] = {}
    for p in places:
        per[p] = per.get(p, 0) + 1
    return Model(len(nodes), len(sockets), max(per.values()))


# ---------------------------------------------------------------- what suggest prints and writes


# ---------------------------------------------------------------- synthetic profiles and the benchmark


def measured_channels(profile: Path | None, asked: dict[str, Any]) -> dict[str, Any]:
    """The record's "channels": bytes and messages per channel as the run's own message profile
    observed them (its placement), beside the prediction the order came with."""
    out: dict[str, Any] = {k: asked.get(k) for k in ("source", "model", "predicted")}
    try:
        prof = msgdist.load(profile) if profile is not None else None
        out["observed"] = channel_cost(prof, msgdist.observed_places(prof)) if prof else None
    except (InputError, RecordError) as e:
        out["observed"] = None
        out["note"] = f"no channels measured: {e}"
    return out
