"""The placement advisor on real profiles, end to end through the driver:

- CG, MG and FT (class S) profiled at 16 ranks (model 4x2x2) and 64 ranks (model 16x2x2):
  the suggested order never moves more bytes between nodes than the better of block and
  cyclic (pxq placement suggest, its files read back);
- `pxq run --rank-order` on 4 virtual nodes: the run verifies, its record says alloc "order"
  and the inter-node bytes its own profile measured are exactly the predicted ones;
- an order of the wrong length, a file that is not a permutation and --alloc cyclic with an
  order: exit 2 with the fix, no traceback, no record;
- `pxq study placement cg` with one repeat: a valid study record whose measured bytes match
  the predictions for block, cyclic and the suggestion.

usage: check_placement.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from driver_check import fail, pxq, records

from pxq.analysis.messages import msgdist, placement, rankorder
from pxq.machine.mpi import find_mpirun


def profile(work: Path, app: str, ranks: int) -> Path:
    """The app's message profile on one node (oversubscribed: its counts are exact)."""
    path = work / f"{app}{ranks}.jsonl"
    exe = Path(os.environ["PXQ_BUILD_DIR"]) / "bin" / f"pxq-{app}"
    launch = [
        find_mpirun(),
        "-np",
        str(ranks),
        "--oversubscribe",
        "--bind-to",
        "none",
        "--mca",
        "mpi_yield_when_idle",
        "1",
    ]
    p = pxq(
        "profile",
        "--results",
        str(path),
        "--plot",
        str(work / f"{app}{ranks}.png"),
        "--",
        *launch,
        str(exe),
        "--class",
        "S",
        "--quiet",
    )
    if p.returncode != 0:
        fail(f"profiling {app} on {ranks} ranks exited {p.returncode}\n{p.stdout[-3000:]}{p.stderr}")
    return path


def identity(work: Path, ranks: int) -> Path:
    path = work / f"identity{ranks}.order"
    path.write_text(",".join(str(r) for r in range(ranks)) + "\n")
    return path


def check_suggestions(work: Path) -> dict[str, Path]:
    profiles = {}
    for ranks, model in ((16, "4x2x2"), (64, "16x2x2")):
        for app in ("cg", "mg", "ft"):
            prof = profile(work, app, ranks)
            profiles[f"{app}{ranks}"] = prof
            prefix = work / f"{app}{ranks}"
            p = pxq("placement", "suggest", str(prof), "--model", model, "--out", str(prefix))
            if p.returncode != 0:
                fail(f"suggest {app} {ranks}: exit {p.returncode}\n{p.stdout}{p.stderr}")
            order, prediction = rankorder.read_order(Path(f"{prefix}.order"))
            rec = msgdist.load(prof)
            m = msgdist.parse_model(model)
            mine = placement.channel_cost(rec, placement.places_of(m, order))["bytes"]["inter_node"]
            block, cyclic = (
                placement.channel_cost(rec, msgdist.place(m, ranks, a))["bytes"]["inter_node"]
                for a in ("block", "cyclic")
            )
            if mine > min(block, cyclic):
                fail(f"{app} {ranks} ranks on {model}: suggested {mine} > min(block {block}, cyclic {cyclic})")
            if prediction["channels"]["suggested"]["bytes"]["inter_node"] != mine:
                fail(f"{app} {ranks}: the order file's prediction is not the order's cost")
            print(f"{app} {ranks} ranks, {model}: inter-node bytes block {block}, cyclic {cyclic}, suggested {mine}")
    return profiles


def check_run(work: Path) -> None:
    order = work / "mg16-run.order"
    p = pxq("placement", "suggest", str(work / "mg16.jsonl"), "--model", "4x1x4", "--out", str(work / "mg16-run"))
    if p.returncode != 0:
        fail(f"suggest for the run: {p.stderr}")
    results = work / "order-run.jsonl"
    p = pxq(
        "run", "mg", "--layout", "4x4", "--oversubscribe", "--class", "S", "--rank-order", str(order),
        "--results", str(results), "--", "--quiet",
    )  # fmt: skip
    if p.returncode != 0 or "as predicted" not in p.stdout:
        fail(f"run with the order: exit {p.returncode}\n{p.stdout}{p.stderr}")
    rec = records(results)[-1]
    ch = rec["channels"]
    if rec["layout"]["alloc"] != "order" or rec["status"] != "ok" or len(rec["driver"]["rank_order"]["ranks"]) != 16:
        fail(f"the record does not say the order: {rec['layout']} {rec['status']}")
    if ch["observed"]["bytes"]["inter_node"] != ch["predicted"]["bytes"]["inter_node"]:
        fail(f"measured {ch['observed']['bytes']} against predicted {ch['predicted']['bytes']}")
    nodes = {p["rank"]: p["node"] for p in rec["placement"]}
    ranks = rankorder.read_order(order)[0]
    # Nodes are numbered as the ranks first meet them: compare who shares a node.
    seen = {frozenset(r for r in nodes if nodes[r] == n) for n in set(nodes.values())}
    want = {frozenset(ranks[i : i + 4]) for i in range(0, 16, 4)}
    if seen != want:
        fail(
            f"ranks not grouped on nodes as the order says: {sorted(map(sorted, seen))} vs {sorted(map(sorted, want))}"
        )
    print(f"pxq run --rank-order: {ch['observed']['bytes']['inter_node']} inter-node bytes measured, as predicted")


def check_bad_orders(work: Path) -> None:
    results = work / "bad.jsonl"
    short = identity(work, 8)
    twice = work / "twice.order"
    twice.write_text("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,14\n")
    for extra, expect in (
        (["--rank-order", str(short)], "lists 8 ranks but layout 4x4 runs 16"),
        (["--rank-order", str(twice)], "rank 14 is listed twice"),
        (["--rank-order", str(identity(work, 16)), "--alloc", "cyclic"], "drop --alloc cyclic"),
        (["--rank-order", str(work / "none.order")], "no such file"),
    ):
        p = pxq("run", "cg", "--layout", "4x4", "--oversubscribe", "--results", str(results), *extra)
        if p.returncode != 2 or expect not in p.stderr or "Traceback" in p.stderr:
            fail(f"{extra}: exit {p.returncode}\n{p.stderr}")
    if results.exists():
        fail("a refused run left a record")


def check_study(work: Path) -> None:
    results = work / "study.jsonl"
    p = pxq("study", "placement", "cg", "--class", "S", "--repeat", "1", "--results", str(results))
    if p.returncode != 0:
        fail(f"study placement exited {p.returncode}\n{p.stdout[-4000:]}{p.stderr}")
    study = [r for r in records(results) if r.get("kind") == "study"]
    if len(study) != 1 or not (work / "study.png").is_file():
        fail("no study record or figure")
    rows = study[0]["rows"]
    if [r["order"] for r in rows] != ["block", "cyclic", "suggested"]:
        fail(f"rows {rows}")
    for r in rows:
        if r["measured_inter_node_bytes"] != r["predicted_inter_node_bytes"] or not r["verified"]:
            fail(
                f"{r['order']}: measured {r['measured_inter_node_bytes']}, predicted {r['predicted_inter_node_bytes']}"
            )
    p = pxq("validate", str(results), "--require", "study,run")
    if p.returncode != 0:
        fail(f"the study's records do not validate\n{p.stdout}{p.stderr}")
    print("study placement cg: measured inter-node bytes = predicted for block, cyclic and the suggestion")


def main() -> None:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    check_suggestions(work)
    check_run(work)
    check_bad_orders(work)
    check_study(work)
    print("OK")


if __name__ == "__main__":
    main()
