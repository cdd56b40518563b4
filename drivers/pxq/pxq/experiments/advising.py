"""What `pxq advise` runs: each candidate configuration set up once with `--declare` (nothing
timed: the work it declares for its layout, variant and tile), then the proof, a settled sweep
(pxq.experiments.settling) of the predicted best against the next ones and the plain flat run.
The ranking and the outcome are pxq.analysis.models.advice's."""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.models import advice
from pxq.analysis.verdicts import settle
from pxq.core import procs, records, schemas
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.experiments import runner, settling
from pxq.experiments.runner import RunSpec
from pxq.launch.request import LaunchPlan
from pxq.launch.session import session
from pxq.machine import ceilings as ceil
from pxq.machine import envinfo

DECLARE_TIMEOUT = 300.0  # seconds: one configuration's set-up (a class C matrix) at most


@dataclass
class Declared:
    row: dict[str, Any]  # the candidate's row: name, layout, mode, tile, and its prediction or why none
    spec: RunSpec


def spec_of(app: str, cand: advice.Candidate, app_args: list[str], results: Path) -> RunSpec:
    """The candidate as a run; one that needs more cores than this machine has (another machine's
    node, declared here) oversubscribes it: its declaration times nothing."""
    return RunSpec(
        app=app,
        layout=cand.layout,
        mode=cand.mode,
        tile=cand.tile,
        app_args=list(app_args),
        results=results,
        oversubscribe=cand.layout.ranks_per_node * cand.layout.threads > (os.cpu_count() or 1),
    )


def declare(spec: RunSpec) -> tuple[dict[str, Any] | None, str]:
    """The configuration's declared work (its record frame with "work"), or None and why: the
    app refused the layout (its message), or failed."""
    run_id = uuid.uuid4().hex

    def make(tmp: Path) -> tuple[LaunchPlan, list[str]]:
        return runner.build(replace(spec, results=tmp / "record.jsonl"), tmp, run_id)

    with session(make, spec.launcher, spec.hostfile, spec.results, "pxq-declare-") as s:
        out = s.folder / "declared.jsonl"
        finished = procs.run([*s.argv, "--declare", str(out)], s.env, run_id, DECLARE_TIMEOUT)
        try:
            found = [r for r in records.read(out, check=False) if r.get("kind") == "declared"]
        except records.RecordError:
            found = []
    if finished.returncode == 0 and found and isinstance(found[-1].get("work"), dict) and found[-1]["work"]:
        return found[-1], ""
    if finished.timed_out:
        return None, f"its set-up took over {DECLARE_TIMEOUT:.0f} s"
    said = [line for line in finished.output.splitlines() if "error:" in line]
    return None, (said[-1].split("error:", 1)[1].strip() if said else f"exit {finished.returncode}")


def declare_all(
    app: str,
    cands: list[advice.Candidate],
    app_args: list[str],
    ceilings: dict[str, Any],
    results: Path,
    console: Console,
) -> list[Declared]:
    """Every candidate declared and predicted (or why not), in the candidates' order."""
    out = []
    for i, cand in enumerate(cands, 1):
        spec = spec_of(app, cand, app_args, results)
        console.print(f"  [dim]declaring {i}/{len(cands)}: {cand.name}[/dim]", highlight=False)
        rec, why = declare(spec)
        row: dict[str, Any] = {"name": cand.name, "layout": str(cand.layout), "mode": cand.mode, "tile": cand.tile}
        if rec is None:
            row["refused"] = why
        else:
            row["tile_bytes"] = int((rec.get("variant") or {}).get("tile_bytes") or 0)
            row.update(advice.predict(rec, ceilings))
        out.append(Declared(row, spec))
    return out


def prove_into(
    rec: dict[str, Any], args: argparse.Namespace, declared: list[Declared], budget: float, console: Console
) -> int:
    """The proof (a settled sweep of the predicted best against the next ones and the plain flat
    run, each against the best, within BUDGET seconds) and its outcome, into the advice RECORD;
    the exit code of its runs (pxq.core.records.exit_code)."""
    rows = [d.row for d in declared]
    names = advice.proof_set(rows, flat_of(args.nodes, rec["cores_per_node"]))
    if len(names) < 2:
        rec.update(outcome="not proved", why="fewer than two configurations could run")
        return 0
    if budget <= 0:
        raise InputError("the budget was spent declaring the configurations: give a larger --budget, e.g. 5m")
    console.print(f"proof: {', '.join(names)}, each against the predicted best, on paired blocks", highlight=False)
    by_name = {d.row["name"]: d.spec for d in declared}
    rule = settle.Rule(precision=args.precision, max_blocks=args.max_blocks)
    out = settling.run([by_name[n] for n in names], [(0, i) for i in range(1, len(names))], rule, budget, console)
    settling.print_verdicts(out, rule, console)
    pairs = [
        {
            "configuration": names[p.other],
            "against": names[p.base],
            **(p.verdict.record() if p.verdict is not None else {"verdict": "unsettled", "blocks": 0}),
            "best_within_margin": p.verdict is not None and advice.within_margin(p.verdict, rule.equivalence),
        }
        for p in out.pairs
    ]
    advice.print_margins(pairs, rule.equivalence, console)
    right, settled = advice.order_checks(pairs, {r["name"]: r["predicted_s"] for r in rows if "predicted_s" in r})
    rec.update(
        proof={
            "configurations": names,
            "pairs": pairs,
            "blocks": out.blocks,
            "stopped": out.stopped,
            "precision": rule.precision,
            "max_blocks": rule.max_blocks,
        },
        outcome=advice.outcome([p.verdict for p in out.pairs if p.verdict is not None], rule.equivalence),
        order={"right": right, "settled": settled},
    )
    return settling.exit_code(out)


def record(
    args: argparse.Namespace, c: dict[str, Any], here: bool, cores: int, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The advice record before its proof: what was asked, the ceilings, the knee, every
    configuration's prediction (or why none) and the predicted best."""
    return {
        "kind": "advice",
        "schema": schemas.VERSION,
        "app": args.app,
        "size": {"class": args.cls.upper()} if args.cls else {},
        "nodes": args.nodes,
        "cores_per_node": cores,
        "ceilings": {
            "source": "this machine" if here else str(args.ceilings),
            "cpu_model": c.get("cpu_model"),
            "date": c.get("date"),
            "cores": c.get("cores"),
        },
        "knee": {"cores": ceil.knee(c), "text": ceil.knee_text(c)},
        "candidates": [{k: v for k, v in r.items() if k != "of_seconds"} for r in rows],
        "predicted_best": next((r["name"] for r in advice.ranked(rows) if "predicted_s" in r), None),
        "context": {
            "host": socket.gethostname(),
            "cpu_model": envinfo.machine().get("cpu_model"),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        },
    }


def flat_of(nodes: int, cores: int) -> str:
    return advice.Candidate(Layout(nodes, cores)).name


def remaining(start: float, budget: float) -> float:
    return budget - (time.monotonic() - start)
