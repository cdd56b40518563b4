"""The partitioner's benchmark (`pxq placement bench`): a stencil's message profile on many
ranks, shuffled, and the time METIS takes to place it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pxq.analysis.messages import msgdist
from pxq.analysis.messages.msgdist import Model
from pxq.analysis.messages.placement import channel_cost, check_fit, suggest
from pxq.analysis.verdicts.findings import spread
from pxq.core.layout import format_volume


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
    assert got is not None  # bounds.repeat: at least one
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
