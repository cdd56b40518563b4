"""The studies' kit: what a study plugin (pxq.studies, declared as plugins.Study) runs with
(Context: the console, its results file, the launch options) and returns (Outcome: its table,
comparisons, findings, the records it used), and the helpers studies share: timing configurations
interleaved, grouping records, profiling an app, and the study record that `pxq report` redraws
its figure from."""

from __future__ import annotations

import datetime as dt
import json
import random
import socket
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from pxq.analysis.exports import report
from pxq.analysis.messages import msgdist
from pxq.analysis.verdicts import findings, settle
from pxq.analysis.verdicts.paired import study_rule
from pxq.core import bounds, plugins, records
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.experiments import runner, sweep
from pxq.launch import netns
from pxq.machine import caches, envinfo


@dataclass
class Context:
    console: Console
    results: Path  # the study's runs, probes and its study record, in this order
    base: runner.RunSpec  # launch options (layout, app and results are set per run)
    quick: bool = True
    app: str | None = None  # the app given on the command line (None: the study's defaults)
    plot: Path | None = None  # the study's figure (default next to the results)
    budget: float = 0.0  # seconds more interleaved rounds may take to settle its timed comparisons (0: none)
    said: list[str] = field(default_factory=list)  # notes measure() leaves for the study's record
    # pxq reproduce: measure only what a verdict can use (a study whose parts this machine cannot
    # test, known before any run, says why and runs nothing); `pxq study` measures its table anyway.
    verdicts_only: bool = False

    def aux(self, name: str, suffix: str = ".jsonl") -> Path:
        """A file beside the results: profiles, the probes' own figures."""
        return self.results.with_name(f"{self.results.stem}-{name}{suffix}")

    def spec(self, app: str, **kw: Any) -> runner.RunSpec:
        return replace(self.base, app=app, results=self.results, **kw)


@dataclass
class Outcome:
    title: str
    rows: list[dict[str, Any]]  # the study's own table, as printed: what plot() draws from
    comparison: list[findings.Comparison] = field(default_factory=list)
    found: list[findings.Finding] = field(default_factory=list)
    recs: list[dict[str, Any]] = field(default_factory=list)  # the runs and probes it used
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # more for the figure
    code: int | None = None  # None: from the runs' records


def registry() -> tuple[plugins.Study, ...]:
    """The studies in the order `pxq reproduce` runs them."""
    return plugins.studies()


def get(name: str) -> plugins.Study:
    for mod in registry():
        if mod.name == name:
            return mod
    raise InputError(f"unknown study '{name}': use one of {', '.join(m.name for m in registry())}")


def time_cut(percent: float) -> str:
    """A time cut as the papers and the studies' tables state it: "time cut 49%" (a variant slower
    than its twin: "time up 10%"), one sign convention for every study's figures."""
    return f"time cut {percent:.0f}%" if percent >= 0 else f"time up {-percent:.0f}%"


def cache_profile(ctx: Context) -> dict[str, Any]:
    """This machine's measured cache levels (pxq.machine.caches: stored once per machine), said on the
    console; what working sets are chosen from."""
    prof = caches.here(ctx.console.print)
    ctx.console.print(f"caches: {prof['note']} ({prof['source']}; {caches.profile_path()})", markup=False)
    return prof


def outcome_code(out: Outcome) -> int:
    """The study's exit code: its own, else the one its runs' records give."""
    if out.code is not None:
        return out.code
    return records.exit_code(out.recs) if out.recs else records.EXIT_OK


def record(name: str, app: str, out: Outcome) -> dict[str, Any]:
    """The study record (schemas/study.schema.json): rows, findings, the runs it came from."""
    code = outcome_code(out)
    status = {records.EXIT_OK: "ok", records.EXIT_VERIFICATION: "failed"}.get(code, "error")
    return {
        "kind": "study",
        "schema": records.SCHEMA,
        "study": name,
        "app": app,
        "status": status,
        "title": out.title,
        "rows": out.rows,
        **findings.as_json(out.comparison, out.found),
        "source": findings.source(get(name).section),
        "data": out.data,
        "run_ids": [r["driver"]["run_id"] for r in out.recs if r.get("driver", {}).get("run_id")],
        "notes": out.notes,
        "context": {
            "host": socket.gethostname(),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    }


def finish(ctx: Context, name: str, app: str, out: Outcome) -> tuple[int, dict, Path]:
    """Prints the paper-beside-here table and the verdicts, appends the study record after the
    study's runs, draws the figure. Returns the exit code, the record and the figure."""
    mod = get(name)
    clusters = {
        json.dumps(r["driver"]["cluster"], sort_keys=True) for r in out.recs if r.get("driver", {}).get("cluster")
    }
    for text in sorted(clusters):
        c = json.loads(text)
        out.data.setdefault("clusters", []).append(c)
        out.notes.append(
            f"ran on cluster '{c['name']}' of this machine: {c['nodes']} nodes, link {c['link']['name']}; "
            f"not emulated: {'; '.join(c['not_emulated'])}"
        )
    out.notes += [n for n in ctx.said + findings.readings(mod.sections) if n not in out.notes]
    findings.print_comparison(ctx.console, out.title, out.comparison, out.found, findings.source(mod.section))
    for note in out.notes:
        ctx.console.print(f"note: {note}")
    rec = record(name, app, out)
    records.append(ctx.results, rec)
    figure = mod.plot(rec, ctx.plot or ctx.results.with_suffix(".png"))
    ctx.console.print(f"record: {ctx.results}")
    ctx.console.print(f"figure: {figure}")
    return outcome_code(out), rec, figure


def measure(
    ctx: Context,
    configs: list[runner.RunSpec],
    repeat: int,
    what: str,
    pairs: list[tuple[int, int]] | None = None,
    threshold: float = 0.05,
) -> tuple[list[dict[str, Any]], int]:
    """Runs the configurations in rounds (every configuration once a round, in a shuffled order,
    after checking every one can run here): REPEAT rounds, then, with a budget (ctx.budget) and
    PAIRS of configurations (indices) the study compares, more rounds of the configurations in
    the pairs that are not yet settled (pxq.analysis.verdicts.paired's rule at THRESHOLD) until each is, the rule's
    last round, or the budget. Returns the final records and the number of runs planned."""
    bounds.repeat(repeat)
    for spec in configs:
        runner.build(spec, Path("/nonexistent"), "check")
    runs = sweep.interleave(configs, repeat)
    index = {r.sweep_key: k % len(configs) for k, r in enumerate(runs)}
    shuffle = random.Random(runs[0].sweep_id)
    runs = [r for rnd in range(repeat) for r in _shuffled(runs[rnd * len(configs) : (rnd + 1) * len(configs)], shuffle)]
    ctx.console.print(
        f"{what}: {len(configs)} configurations x {repeat} rounds = {len(runs)} runs, shuffled within each round "
        f"-> {ctx.results}"
    )
    start = time.monotonic()
    recs = sweep.run(runs, ctx.results, False, ctx.console)
    planned = len(runs)
    if pairs and ctx.budget > 0:
        more, extra = _settle_more(ctx, configs, runs, recs, index, pairs, threshold, time.monotonic() - start)
        recs, planned = recs + more, planned + extra
    report.print_failures(recs, ctx.console)
    return recs, planned


def _shuffled(items: list[Any], rng: random.Random) -> list[Any]:
    out = list(items)
    rng.shuffle(out)
    return out


def _times_of(recs: list[dict[str, Any]], index: dict[str | None, int], k: int) -> dict[str, list[Any]]:
    mine = [r for r in recs if index.get(r.get("driver", {}).get("sweep_key")) == k and _timed(r)]
    return {"times": [r["time"]["total"] for r in mine], "rounds": [settle.round_of(r) for r in mine]}


def _timed(rec: dict[str, Any]) -> bool:
    return rec.get("status") == "ok" and isinstance(rec.get("time"), dict) and "total" in rec["time"]


def _settle_more(
    ctx: Context,
    configs: list[runner.RunSpec],
    runs: list[runner.RunSpec],
    recs: list[dict[str, Any]],
    index: dict[str | None, int],
    pairs: list[tuple[int, int]],
    threshold: float,
    spent: float,
) -> tuple[list[dict[str, Any]], int]:
    """More rounds of the configurations whose pairs the rule has not settled, within the budget."""
    rule = study_rule(threshold)
    first = rounds = len(runs) // len(configs)
    more: list[dict[str, Any]] = []
    extra = 0
    shuffle = random.Random(f"{runs[0].sweep_id}-more")
    per_run = spent / max(len(runs), 1)
    while rounds < rule.max_blocks:
        mine = recs + more
        open_pairs = [
            (a, b) for a, b in pairs if not _settled(_times_of(mine, index, a), _times_of(mine, index, b), rule)
        ]
        if not open_pairs:
            break
        need = sorted({k for p in open_pairs for k in p})
        if spent + per_run * len(need) > ctx.budget:
            break
        batch = []
        for k in _shuffled(need, shuffle):
            s = replace(configs[k], repeat=rounds)
            s = replace(s, sweep_key=runner.sweep_key(s), sweep_plan=runs[0].sweep_plan, sweep_id=runs[0].sweep_id)
            index[s.sweep_key] = k
            batch.append(s)
        ctx.console.print(
            f"round {rounds + 1}: {len(open_pairs)} compared pair(s) not settled; {len(batch)} configuration(s) again",
            highlight=False,
        )
        t0 = time.monotonic()
        more += sweep.run(batch, ctx.results, False, ctx.console)
        spent += time.monotonic() - t0
        extra += len(batch)
        rounds += 1
    mine = recs + more
    open_pairs = [(a, b) for a, b in pairs if not _settled(_times_of(mine, index, a), _times_of(mine, index, b), rule)]
    why = "the budget was spent" if rounds < rule.max_blocks else f"the rule's last round ({rule.max_blocks})"
    note = (
        f"settling ({ctx.budget:.0f} s budget): {rounds - first} more round(s) after the {first} planned, "
        f"{extra} run(s); {len(pairs) - len(open_pairs)} of {len(pairs)} compared pair(s) settled"
        + (f", {len(open_pairs)} not ({why}): their verdicts say so" if open_pairs else "")
    )
    ctx.console.print(note, markup=False)
    ctx.said.append(note)
    return more, extra


FULL_BUDGET = 300.0  # --full: seconds of more rounds a study may spend settling (--quick: none unless asked)


def add_budget_option(p: Any) -> None:
    p.add_argument(
        "--budget",
        metavar="T",
        help="more interleaved rounds, for at most T (e.g. 90s, 5m), of the configurations whose timed comparison "
        "is not yet settled (default: none with --quick, 5m with --full; 0: none)",
    )


def budget_of(text: str | None, quick: bool) -> float:
    """--budget as seconds: 0 for "0", the mode's default when not given."""
    if text is None:
        return 0.0 if quick else FULL_BUDGET
    if text.strip() in ("0", "0s", "0m"):
        return 0.0
    return bounds.duration(text)


def _settled(a: dict[str, Any], b: dict[str, Any], rule: settle.Rule) -> bool:
    pairs = settle.pair_rounds(list(zip(b["times"], b["rounds"])), list(zip(a["times"], a["rounds"])))
    return len(pairs) >= settle.MIN_BLOCKS and settle.replay([x / y for y, x in pairs], rule).settled


def group(recs: list[dict[str, Any]], key: Any) -> dict[Any, dict[str, Any]]:
    """Runs that finished, grouped by key(record): their total and communication times, the
    medians of both, the spread, and whether every one verified."""
    import statistics

    out: dict[Any, dict[str, Any]] = {}
    for rec in recs:
        if rec.get("status") not in ("ok", "failed") or "time" not in rec:
            continue
        g = out.setdefault(key(rec), {"times": [], "rounds": [], "comm": [], "verified": True})
        g["times"].append(rec["time"]["total"])
        g["rounds"].append(settle.round_of(rec))
        g["comm"].append(rec["time"].get("comm", 0.0))
        g["verified"] = g["verified"] and rec["status"] == "ok"
    for g in out.values():
        g["median"] = statistics.median(g["times"])
        g["comm_median"] = statistics.median(g["comm"])
        g["spread"] = findings.spread(g["times"])
    return out


def exit_code(recs: list[dict[str, Any]], planned: int) -> int | None:
    """None (the records decide) when every planned run left a record, else a run failure."""
    return None if len(recs) == planned and recs else records.EXIT_RUN_FAILED


def layout_text(rec: dict[str, Any]) -> str:
    lay = rec["layout"]
    return f"{lay['nodes']}x{lay['ranks_per_node']}"


def one_machine(recs: list[dict[str, Any]]) -> str | None:
    """Why the runs' nodes cannot stand for real nodes' chips and memory buses (None where they
    can): virtual nodes are processes of one host, and a cluster of this machine's nodes are its
    namespaces, with its cores, caches and memory bus (only their links are their own)."""
    for rec in recs:
        if (rec.get("layout") or {}).get("virtual_nodes"):
            return "virtual nodes of one host share its chip and memory bus"
        c = (rec.get("driver") or {}).get("cluster")
        if c and (rec.get("layout") or {}).get("nodes", 1) > 1:
            name = c["name"]
            return (
                f"the nodes of cluster '{name}' are namespaces of this one machine: they share its chip and memory bus"
            )
    return None


def count(path: Path) -> int:
    """Records in a file so far (0 when there is none): what appended() compares with."""
    return len(records.read(path)) if path.exists() else 0


def appended(path: Path, before: int, app: str) -> dict[str, Any] | None:
    """The record a probe appended after `before` records, if it wrote one of `app`."""
    recs = records.read(path) if path.exists() else []
    return recs[-1] if len(recs) > before and recs[-1].get("app") == app else None


def profile_app(
    ctx: Context, app: str, ranks: int, app_args: list[str] | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """One message profile of the app on `ranks` ranks of one node, oversubscribed where the
    ranks exceed the cores (its counts exact, its timings meaningless): the profile (None if
    the run failed) and the run's record."""
    path = ctx.aux(f"{app}-msgprof")
    records.check_writable(path)
    netns.check_visible(path, "give --results outside /tmp (the ranks write the profile beside it)")
    over = ranks > envinfo.cores()
    spec = ctx.spec(
        app,
        layout=parse_layout(f"1x{ranks}"),
        mode="flat",
        oversubscribe=over or ctx.base.oversubscribe,
        profile=path,
        **({} if app_args is None else {"app_args": app_args}),
    )
    ctx.console.print(
        f"profiling {app} on {ranks} ranks" + (f" (oversubscribing {envinfo.cores()} cores)" if over else "")
    )
    result = runner.execute(spec)
    if result.status != "ok":
        ctx.console.print(result.output[-2000:], markup=False)
        runner.say_failure(ctx.console, "run", result, spec.results)
        return None, result.record
    return msgdist.load(path), result.record
