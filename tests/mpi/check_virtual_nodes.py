"""MPI test: the ring on 2 virtual nodes through `pxq run`, with the record checked: it
verifies, 2 nodes were observed, the ranks ran on different cores, and every byte that moved
went over the inter-node channel."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pxq.cli import main as pxq_main


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--results", type=Path, required=True)
    a = ap.parse_args()
    a.results.unlink(missing_ok=True)
    argv = ["run", "ring", "--layout", "2x1", "--mode", a.mode, "--backend", a.backend,
            "--results", str(a.results), "--", "--block", "1M", "--iterations", "3"]
    if a.mode == "tiled":
        argv[argv.index("--"):argv.index("--")] = ["--tile", "64K"]
    code = pxq_main(argv)
    if code != 0:
        fail(f"pxq run exited {code}")
    recs = [json.loads(line) for line in a.results.read_text().splitlines() if line.strip()]
    if len(recs) != 1:
        fail(f"expected 1 record, found {len(recs)}")
    r = recs[0]
    if r["status"] != "ok" or not r["verification"]["passed"]:
        fail("verification did not pass")
    if r["layout"]["observed_nodes"] != 2 or r["layout"]["launcher"] != "virtual":
        fail(f"expected 2 observed virtual nodes, got {r['layout']}")
    vnodes = {p["vnode"] for p in r["placement"]}
    if vnodes != {"n0", "n1"}:
        fail(f"ranks should run on virtual nodes n0 and n1, got {vnodes}")
    cpus = [p["threads"][0]["affinity"] for p in r["placement"]]
    if cpus[0] == cpus[1]:
        fail(f"both virtual nodes ran on the same cores {cpus[0]}")
    ch = r["messages"]["by_channel"]
    expected_bytes = 2 * 3 * (1 << 20)  # 2 ranks x 3 timed iterations x one block each
    if ch["inter_node"]["bytes"] != expected_bytes or ch["intra_cmp"]["bytes"] != 0:
        fail(f"expected {expected_bytes} inter-node bytes and none on-node, got {ch}")
    print(f"PASS: {a.mode}/{a.backend} on 2 virtual nodes, {expected_bytes} bytes inter-node")
    return 0


if __name__ == "__main__":
    sys.exit(main())
