"""Synthetic run records at scale: copies of tests/python/data/run-record.json (a real ring run's
record) with their own run ids, repeats, tiles and times, schema-valid, written as one results
file. The default tests write a few thousand; the benchmark (`bench`) 100,000 and measures
`pxq report` and `pxq validate` over them (wall time and peak memory, docs/PERFORMANCE.md); then
`pxq roofline` over 100,000 copies of a ring run made here with its declared work (the roofline
places only runs of the machine its ceilings were measured on; it measures them once if none
are kept, a few minutes).

`widen` grows a real run record to more ranks as its writer would have written it: each part that
holds a row per rank (placement, the efficiency's per-rank times, the messages' `by_rank`) gets one
for every rank, as the ranks of a full node of the layout.

usage: python tests/scale/records.py N OUT [BASE]     (writes N copies of BASE, a run record, to OUT)
       python tests/scale/records.py bench [N]        (N = 100000: write, then time the commands)"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests/python/data/run-record.json"
TILES = (0, 65536, 262144, 1048576)  # four configurations, interleaved


def write(n: int, out: Path, base_record: Path = RECORD) -> None:
    text = base_record.read_text()
    base = json.loads(text.strip().splitlines()[-1] if base_record.suffix == ".jsonl" else text)
    sweep = uuid.uuid4().hex
    with open(out, "w") as f:
        for i in range(n):
            rec = copy.deepcopy(base)
            rec["driver"].update(run_id=uuid.uuid4().hex, repeat=i // len(TILES), sweep_id=sweep)
            rec["driver"].pop("sweep_key", None)  # each its own run (a sweep's key names one)
            tile = TILES[i % len(TILES)]
            if tile:
                rec["variant"].update(mode="tiled", tile_bytes=tile)
            rec["time"]["total"] *= 1 + (i % 7) / 100
            f.write(json.dumps(rec) + "\n")


def widen(base: dict, ranks: int, per_node: int) -> dict:
    """BASE (a run record past the per-pair detail's rank count, so its messages are per rank)
    as the record of RANKS ranks, PER_NODE a node: every per-rank row copied from the rank in
    BASE that sits where the new one does on its node, renumbered."""
    rec = copy.deepcopy(base)
    old = base["layout"]["ranks"]
    nodes = ranks // per_node
    rec["layout"].update(ranks=ranks, nodes=nodes, ranks_per_node=per_node, workers=ranks, observed_nodes=nodes)
    like = [r % old for r in range(ranks)]  # the rank of BASE each new rank copies
    placement = []
    for r in range(ranks):
        row = copy.deepcopy(base["placement"][like[r]])
        node = r // per_node
        row.update(rank=r, node=node, local_rank=r % per_node, host=f"node{node:05d}")
        placement.append(row)
    rec["placement"] = placement
    for key in ("comm_s", "useful_s"):
        rec["efficiency"][key] = [base["efficiency"][key][like[r]] for r in range(ranks)]
    rows = {row[0]: row for row in base["messages"]["by_rank"]}
    by_rank = [[r, ranks - 1, *rows[like[r]][2:]] for r in range(ranks)]  # an all-to-all: every other rank a peer
    total = {"messages": sum(row[2] for row in by_rank), "bytes": sum(row[3] for row in by_rank)}
    on_node = {k: v * (per_node - 1) // (ranks - 1) for k, v in total.items()}  # peers on the rank's node
    rec["messages"].update(by_rank=by_rank, **total)
    rec["messages"]["by_channel"] = {
        "self": {"messages": 0, "bytes": 0},
        "intra_cmp": on_node,
        "inter_cmp": {"messages": 0, "bytes": 0},
        "inter_node": {k: total[k] - on_node[k] for k in total},
    }
    rec["messages"]["by_peer_note"] = rec["messages"]["by_peer_note"].replace(f"this run: {old}", f"this run: {ranks}")
    return rec


def measure(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak resident MB, exit code) of one pxq command, started from a process of
    its own (the peak of a process's children is the largest of any of them)."""
    code = (
        "import resource, subprocess, sys, time; t = time.monotonic(); "
        f"rc = subprocess.run({[str(ROOT / 'pxq'), *argv]!r}, stdout=subprocess.DEVNULL).returncode; "
        "print(time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)"
    )
    wall, peak, rc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    return float(wall), int(peak) / 1024, int(rc)


def bench(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="pxq-scale-") as tmp:
        path = Path(tmp) / "big.jsonl"
        write(n, path)
        print(f"{n} run records, {os.path.getsize(path) / 1e6:.0f} MB: {path}")
        for argv in (["report", str(path)], ["validate", str(path)]):
            wall, peak, code = measure(argv)
            print(f"./pxq {argv[0]}: {wall:.1f} s, peak {peak:.0f} MB, exit {code}")
        one = Path(tmp) / "one.jsonl"
        made = [str(ROOT / "pxq"), "run", "ring", "--layout", "1x2", "--results", str(one), "--"]
        subprocess.run([*made, "--block", "4M", "--iterations", "3"], check=True, stdout=subprocess.DEVNULL)
        write(n, path, one)
        print(f"{n} copies of a ring run made here, with its declared work, {os.path.getsize(path) / 1e6:.0f} MB")
        wall, peak, code = measure(["roofline", str(path)])
        print(f"./pxq roofline: {wall:.1f} s, peak {peak:.0f} MB, exit {code}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "bench":
        bench(int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
    elif len(sys.argv) in (3, 4):
        write(int(sys.argv[1]), Path(sys.argv[2]), *[Path(a) for a in sys.argv[3:]])
    else:
        sys.exit(__doc__)
