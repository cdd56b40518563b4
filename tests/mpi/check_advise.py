"""`pxq advise` end to end on this machine (CTest advise.real):

- the declared work is the work a real run declares: every proxy set up with `--declare`
  (through the driver's launch, nothing timed) declares, phase by phase, the flops, bytes,
  compulsory bytes, footprint and working set that the same configuration's run record holds;
- a probe given `--declare` refuses it (exit 2, naming the proxies), nothing run;
- `pxq advise ring` with ceilings kept for this machine (the check's own file, PXQ_CEILINGS: so
  nothing is measured here): every layout filling the cores, untiled and tiled, ranked by
  predicted time with what binds each; the knee named; the proof a settled sweep of the
  predicted best against the others, the plain flat run among them; the advice record
  appended after the proof's runs, valid, its outcome one of held, not held, unsettled;
  `pxq report` over it gives the hit rate;
- `pxq advise cg --class S --no-prove`: predicted, not proved, said so.

usage: check_advise.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import math
import os
import subprocess

from driver_check import fail, fresh_workdir, pxq, records

from pxq.analysis.models import advice
from pxq.core import registry
from pxq.core.layout import Layout
from pxq.core.paths import binary
from pxq.experiments import advising
from pxq.experiments.runner import RunSpec
from pxq.machine import caches, envinfo
from pxq.machine import ceilings as ceil

COMPARED = ("flops", "bytes", "memory_bytes", "footprint_bytes", "working_set_bytes")


def rows(total: float, n: int) -> list[dict]:
    return [{"cores": c, "median": total * c / n, "min": total * c / n, "max": total * c / n} for c in range(1, n + 1)]


def kept(n: int) -> dict:
    """Ceilings for this machine (a flat curve: the check tests the advice, not the machine)."""
    return {
        "format": ceil.FORMAT,
        "key": caches.key(envinfo.machine()),
        "cpu_model": "check_advise",
        "cores": n,
        "date": "2026-11-29T00:00:00Z",
        "levels": [
            {"name": "L1", "bytes": 32 << 10, "shared": False},
            {"name": "L2", "bytes": 1 << 20, "shared": False},
        ],
        "curve": [
            {"bytes": 16 << 10, "gbs": rows(200.0, n)},
            {"bytes": 1 << 20, "gbs": rows(100.0, n)},
            {"bytes": 1 << 30, "gbs": rows(20.0, n)},
        ],
        "peak_gflops": rows(80.0, n),
        "kinds": {},
    }


def same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def check_declared(work) -> None:
    """Each proxy's declared work against its run's, at 1x2, tiled (the tile in the work)."""
    for app in registry.apps():
        args = ["--class", "S"] if registry.classes(app) else ["--block", "1M", "--iterations", "2"]
        spec = RunSpec(app=app, layout=Layout(1, 2), mode="tiled", tile="64K", app_args=args,
                       results=work / f"{app}.jsonl")  # fmt: skip
        declared, why = advising.declare(spec)
        if declared is None:
            fail(f"{app}: nothing declared: {why}")
        if declared.get("kind") != "declared" or "total" in (declared.get("time") or {}):
            fail(f"{app}: the declaration is not a declared record without a timed total: {declared}")
        p = pxq("run", app, "--layout", "1x2", "--mode", "tiled", "--tile", "64K", "--results", str(spec.results),
                "--", *args)  # fmt: skip
        if p.returncode != 0:
            fail(f"pxq run {app}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        run = records(spec.results)[-1]["work"]
        if set(run) != set(declared["work"]):
            fail(f"{app}: declared phases {sorted(declared['work'])}, the run's {sorted(run)}")
        for phase, w in run.items():
            d = declared["work"][phase]
            for f in COMPARED:
                if not same(w[f], d[f]) or not same(w["rank_max"].get(f, 0.0), d["rank_max"].get(f, 0.0)):
                    fail(f"{app} {phase}: {f} declared {d[f]} (rank max {d['rank_max'].get(f)}), run {w[f]}")
        print(f"{app}: declared work = the run's, {len(run)} phase(s)")
    check_ring_hand_over(work)
    check_ft_all_to_all(work)


def check_ring_hand_over(work) -> None:
    """The ring's hand-over within a node is a copy it declares (3 x block a rank and iteration,
    all compulsory); one rank's threads hand blocks over by pointer and declare none."""
    args = ["--block", "1M", "--iterations", "2"]
    for layout, comm in ((Layout(1, 2), True), (Layout(1, 1, 2), False)):
        spec = RunSpec(app="ring", layout=layout, app_args=args, results=work / "ring-hand-over.jsonl")
        declared, why = advising.declare(spec)
        if declared is None:
            fail(f"ring {layout}: nothing declared: {why}")
        w = declared["work"].get("comm")
        if (w is not None) != comm:
            fail(f"ring {layout}: a declared hand-over {'expected' if comm else 'not expected'}: {declared['work']}")
        if w is not None and not (same(w["rank_max"]["memory_bytes"], 3 * (1 << 20) * 2) and w["flops"] == 0):
            fail(f"ring {layout}: the hand-over declares {w['rank_max']}, not 3 x 1 MiB x 2 iterations of copying")
    print("ring: the hand-over within a node declared as a copy, none between one rank's threads")


def check_ft_all_to_all(work) -> None:
    """FT's all-to-all among ranks of one node is declared of the alltoall kind: the blocks a rank
    sends to the other ranks (with 2 ranks, half of its points at 16 B, per transform); one rank
    has no all-to-all to declare."""
    points = 64**3 // 2  # class S, 64^3 points over 2 ranks
    for layout, comm in ((Layout(1, 2), True), (Layout(1, 1, 2), False)):
        spec = RunSpec(app="ft", layout=layout, app_args=["--class", "S"], results=work / "ft-a2a.jsonl")
        declared, why = advising.declare(spec)
        if declared is None:
            fail(f"ft {layout}: nothing declared: {why}")
        a2a = {k: w for k, w in declared["work"].items() if w["what"].startswith("an all-to-all within this node")}
        if bool(a2a) != comm:
            fail(f"ft {layout}: a declared all-to-all {'expected' if comm else 'not expected'}: {declared['work']}")
        # The forward transform's (one call) and the inverse's (one a class S iteration: 6).
        calls = sorted(round(w["rank_max"]["memory_bytes"] / (16 * points / 2)) for w in a2a.values())
        if comm and (calls != [1, 6] or any(w["flops"] or w.get("kind") != "alltoall" for w in a2a.values())):
            fail(
                f"ft {layout}: the all-to-alls declare {[(w.get('kind'), w['rank_max']) for w in a2a.values()]}, "
                "not the alltoall kind's half of the points at 16 B"
            )
    print("ft: the all-to-all within a node declared at the alltoall kind, none for one rank")


def check_probe_refuses(work) -> None:
    mpirun = os.environ.get("PXQ_MPIRUN", "mpirun")
    out = work / "probe.jsonl"
    p = subprocess.run(
        [mpirun, "-np", "1", str(binary("probe-bandwidth")), "--array", "64K", "--declare", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if p.returncode != 2 or "declares no work" not in p.stdout + p.stderr or out.exists():
        fail(f"a probe given --declare: exit {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")


def check_advise_ring(work) -> None:
    res = work / "advise-ring.jsonl"
    p = pxq(
        "advise", "ring", "--budget", "90s", "--precision", "0.1", "--results", str(res),
        "--", "--block", "4M", "--iterations", "2",
    )  # fmt: skip
    if p.returncode not in (0, 1) or "Traceback" in p.stderr:
        fail(f"pxq advise ring: exit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    for said in ("predicted", "memory bus", "settled comparisons", "advice record appended"):
        if said not in p.stdout:
            fail(f"pxq advise ring does not say {said!r}:\n{p.stdout[-3000:]}")
    recs = records(res)
    adv = [r for r in recs if r.get("kind") == "advice"]
    runs = [r for r in recs if r.get("kind") == "run"]
    if len(adv) != 1 or recs[-1].get("kind") != "advice":
        fail(f"one advice record, after the proof's runs: {[r.get('kind') for r in recs]}")
    a = adv[0]
    names = {c["name"] for c in a["candidates"]}
    n = envinfo.cores()
    want = {c.name for c in advice.candidates(1, n, ["256K", "auto"])}
    if names != want:
        fail(f"the candidates are not every layout filling {n} cores, untiled and tiled: {sorted(names)}")
    flat = advising.flat_of(1, n)
    if a["outcome"] not in ("held", "not held", "unsettled") or flat not in a["proof"]["configurations"]:
        fail(f"the proof did not run the predicted best against the flat run: {a.get('proof')}, {a['outcome']}")
    if not runs or any(r["status"] != "ok" for r in runs):
        fail(f"the proof's runs did not all verify: {[r['status'] for r in runs]}")
    best = a["predicted_best"]
    if best != a["proof"]["configurations"][0]:
        fail(f"the proof's first configuration is not the predicted best ({best}): {a['proof']['configurations']}")
    v = pxq("validate", str(res))
    if v.returncode != 0 or " 0 invalid" not in v.stdout:
        fail(f"pxq validate of the advice:\n{v.stdout}{v.stderr}")
    r = pxq("report", str(res))
    if r.returncode not in (0, 1) or "hit rate" not in r.stdout:
        fail(f"pxq report gives no hit rate over the advice:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    print(f"advise ring: predicted best {best}; {a['outcome']} over {a['proof']['blocks']} block(s)")


def check_no_prove(work) -> None:
    res = work / "advise-cg.jsonl"
    p = pxq("advise", "cg", "--class", "S", "--no-prove", "--results", str(res))
    (a,) = records(res) or fail(f"no advice record: exit {p.returncode}\n{p.stdout}{p.stderr}")
    if p.returncode != 0 or a["outcome"] != "not proved" or "not proved" not in p.stdout:
        fail(f"pxq advise cg --no-prove: exit {p.returncode}, outcome {a['outcome']}\n{p.stdout[-2000:]}")
    if any(r.get("kind") == "run" for r in records(res)):
        fail("--no-prove ran a proof")


def main() -> None:
    work = fresh_workdir()
    c = work / "ceilings.json"
    os.environ["PXQ_CEILINGS"] = str(c)
    if ceil.save(kept(envinfo.cores())) is None:
        fail(f"could not write {c}")
    check_declared(work)
    check_probe_refuses(work)
    check_no_prove(work)
    check_advise_ring(work)
    print("PASS: declared work as run; a probe refuses --declare; pxq advise ranks, proves and records")


if __name__ == "__main__":
    main()
