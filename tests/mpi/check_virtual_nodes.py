"""MPI test: a miniapp on 2 virtual nodes through `pxq run`, with the record checked: it
verifies, 2 nodes were observed, the ranks ran on different cores, and the traffic per
channel is exactly what the app's pattern implies (nothing on-node between the two ranks).
CTest runs the tiled ones with PXQ_PLACEMENT_WHOLE_RANKS=1: the placement path of runs past
256 ranks (rank 0 alone holds every rank's placement whole; the others classify their
messages from their peers' node and package), which must give the same record."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pxq.cli import main as pxq_main
from pxq.core import registry


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", default="ring", choices=registry.apps())
    ap.add_argument("--mode", required=True)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--results", type=Path, required=True)
    a = ap.parse_args()
    a.results.unlink(missing_ok=True)
    app_args = ["--block", "1M", "--iterations", "3"] if a.app == "ring" else ["--quiet"]
    argv = [
        "run",
        a.app,
        "--layout",
        "2x1",
        "--mode",
        a.mode,
        "--backend",
        a.backend,
        "--results",
        str(a.results),
        *(["--class", "S"] if a.app != "ring" else []),
        *(["--tile", "64K" if a.app == "ring" else "4K"] if a.mode == "tiled" else []),
        "--",
        *app_args,
    ]
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
    if a.app == "ring":
        expected = {
            "inter_node": (2 * 3 * 16 if a.mode == "tiled" else 2 * 3, 2 * 3 * (1 << 20))
        }  # 2 ranks x 3 iterations x one block
    elif a.app == "mg":
        # NAS MG class S (levels k = 1..5, 2^k points per axis) on a 1 x 1 x 2 grid: only the
        # i3 axis talks; each halo refresh sends one (2^k + 2)^2 plane each way. Per V-cycle,
        # level 1 refreshes twice (restriction, smoothing) and every other level three times
        # (restriction or the finest residual, residual, smoothing); one more finest residual
        # before the loop. 4 iterations.
        nit, lt = 4, 5
        msgs = nbytes = 0
        for k in range(1, lt + 1):
            refreshes = nit * (2 if k == 1 else 3) + (1 if k == lt else 0)
            msgs += 2 * 2 * refreshes
            nbytes += 2 * 2 * refreshes * ((1 << k) + 2) ** 2 * 8
        expected = {"inter_node": (msgs, nbytes), "self": (0, 0)}
    elif a.app == "ft":
        # NAS FT class S (64^3) on 2 processes: 1-D slabs, one all-to-all per 3-D FFT, each
        # rank sending a quarter of its half (64^3 / 4 complex numbers, 1 MiB) to the other.
        # The forward FFT and 6 inverse ones; nothing to itself.
        ffts = 1 + 6
        expected = {"inter_node": (2 * ffts, 2 * ffts * (64**3 // 4) * 16), "self": (0, 0)}
    elif a.app != "cg":
        # An app this check has no model of: its traffic all crosses the nodes, none to itself.
        expected = {"self": (0, 0)}
        if ch["inter_node"]["messages"] == 0:
            fail(f"no traffic between the two virtual nodes: {ch}")
    else:
        # NAS CG class S on a 1 x 2 grid, per rank and outer iteration (15 of them):
        # 52 scalar reductions (8 B), one norm reduction (16 B) and 26 row-sum halves
        # (700 doubles) to the partner; 26 transposes of 700 doubles to itself.
        per_rank = 15
        expected = {
            "inter_node": (2 * per_rank * (52 + 1 + 26), 2 * per_rank * (52 * 8 + 16 + 26 * 5600)),
            "self": (2 * per_rank * 26, 2 * per_rank * 26 * 5600),
        }
    for channel, (msgs, nbytes) in expected.items():
        if (ch[channel]["messages"], ch[channel]["bytes"]) != (msgs, nbytes):
            fail(f"{channel}: expected {msgs} messages / {nbytes} bytes, got {ch[channel]}")
    if ch["intra_cmp"]["bytes"] != 0:
        fail(f"expected nothing on-node between the two virtual nodes, got {ch}")
    print(f"PASS: {a.app} {a.mode}/{a.backend} on 2 virtual nodes, traffic {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
