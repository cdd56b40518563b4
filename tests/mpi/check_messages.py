"""The message counts of a run record grow with the ranks, not their square: IS (an all-to-all,
every rank sends to every other) at a few ranks keeps every (source, destination) pair, and
past 16 ranks only each rank's peers and totals (`by_rank`) with a note saying why; at every
size the per-pair, per-rank and per-channel counts add up to the same totals, and each rank's
peers are the ranks it sent to.

usage: check_messages.py PROGRAM WORKDIR MPIRUN   (PROGRAM: pxq-is)"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

DETAIL_RANKS = 16  # kPeerDetailRanks in comm/include/pxq/comm/peer_traffic.hpp


def run(program: str, mpirun: str, ranks: int, out: Path) -> dict:
    out.unlink(missing_ok=True)
    argv = [mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
    argv += [program, "--class", "S", "--quiet", "--json", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {ranks} ranks: exit {p.returncode}\n{p.stdout[-1500:]}\n{p.stderr[-1500:]}")
    return json.loads(out.read_text().splitlines()[-1])


def check(rec: dict, ranks: int) -> list[str]:
    m, bad = rec["messages"], []
    rows = {r: (peers, msgs, nbytes) for r, peers, msgs, nbytes in m["by_rank"]}
    if m["by_rank_columns"] != ["rank", "peers", "messages", "bytes"]:
        bad.append(f"by_rank_columns {m['by_rank_columns']}")
    if sorted(rows) != list(range(ranks)):
        bad.append(f"by_rank names ranks {sorted(rows)}, not every one of {ranks} (each sends in an all-to-all)")
    totals = (sum(r[1] for r in rows.values()), sum(r[2] for r in rows.values()))
    channels = (sum(c["messages"] for c in m["by_channel"].values()), sum(c["bytes"] for c in m["by_channel"].values()))
    if totals != (m["messages"], m["bytes"]) or channels != totals:
        bad.append(f"totals differ: by_rank {totals}, by_channel {channels}, record {(m['messages'], m['bytes'])}")
    if ranks <= DETAIL_RANKS:
        pairs = m.get("by_peer")
        if pairs is None:
            return bad + [f"{ranks} ranks: no by_peer"]
        for r, (peers, msgs, nbytes) in rows.items():
            mine = [p for p in pairs if p[0] == r]
            if (len(mine), sum(p[2] for p in mine), sum(p[3] for p in mine)) != (peers, msgs, nbytes):
                bad.append(f"rank {r}: by_rank {(peers, msgs, nbytes)} against its by_peer rows {mine}")
        if any(peers < ranks - 1 for peers, _, _ in rows.values()):
            bad.append(f"an all-to-all rank with fewer than {ranks - 1} peers: {rows}")
    else:
        if "by_peer" in m or "by_peer_note" not in m or str(DETAIL_RANKS) not in m["by_peer_note"]:
            bad.append(f"{ranks} ranks: by_peer kept, or no note saying why not: {sorted(m)}")
        if any(peers < ranks - 1 for peers, _, _ in rows.values()):
            bad.append(f"an all-to-all rank with fewer than {ranks - 1} peers: {rows}")
    return bad


def main() -> int:
    program, work, mpirun = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures, sizes = [], {}
    for ranks in (4, 32):
        rec = run(program, mpirun, ranks, work / f"is-{ranks}.jsonl")
        failures += [f"{ranks} ranks: {b}" for b in check(rec, ranks)]
        sizes[ranks] = len(json.dumps(rec["messages"]))
    # 8x the ranks: an all-to-all's pairs grow 64x; the compact form at most about 8x.
    if sizes[32] > 10 * sizes[4]:
        failures.append(f"messages grew from {sizes[4]} to {sizes[32]} bytes for 8x the ranks")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    if not failures:
        print(f"PASS: IS's message counts: every pair at 4 ranks, per rank at 32 ({sizes[4]} -> {sizes[32]} bytes)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
