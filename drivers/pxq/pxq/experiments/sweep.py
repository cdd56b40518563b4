"""Sweeps: the cross product of layouts x modes x tiles x backends, repeats interleaved."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

from pxq.analysis.exports import report
from pxq.core import records
from pxq.core.errors import InputError
from pxq.core.layout import Layout, resolve_mode
from pxq.core.progress import Steps
from pxq.experiments import runner
from pxq.experiments.runner import RunSpec


def plan(
    base: RunSpec,
    layouts: list[Layout],
    modes: list[str],
    tiles: list[str],
    backends: list[str],
    threads: list[int] | None,
) -> tuple[list[RunSpec], list[str]]:
    """Configurations (one repeat each) and notes on the combinations that were skipped."""
    specs: list[RunSpec] = []
    notes: list[str] = []
    seen: set[str] = set()
    for layout in layouts:
        for t in threads or [layout.threads]:
            lay = layout.with_threads(t)
            for mode in modes:
                choices: list[str | None] = [*tiles] if mode == "tiled" else [None]
                for tile in choices:
                    for backend in backends:
                        spec = replace(base, layout=lay, mode=mode, tile=tile, backend=backend)
                        try:
                            resolve_mode(mode, lay.threads, tile)
                        except InputError as e:
                            note = f"skipped {lay} {mode}: {e}"
                            if note not in notes:
                                notes.append(note)
                            continue
                        key = runner.sweep_key(spec)
                        if key not in seen:
                            seen.add(key)
                            specs.append(spec)
    return specs, notes


def interleave(configs: list[RunSpec], repeats: int) -> list[RunSpec]:
    """A B C A B C ...: every repeat of every configuration sees the same machine drift. Every
    run gets its key, and all of them the sweep's plan digest and a new sweep id."""
    out = []
    for rep in range(repeats):
        for spec in configs:
            s = replace(spec, repeat=rep)
            out.append(replace(s, sweep_key=runner.sweep_key(s)))
    plan_digest = hashlib.sha256(json.dumps(sorted(r.sweep_key for r in out)).encode()).hexdigest()[:16]
    sweep_id = uuid.uuid4().hex[:16]
    return [replace(r, sweep_plan=plan_digest, sweep_id=sweep_id) for r in out]


def _resumed(runs: list[RunSpec], results: Path, console: Console) -> tuple[list[RunSpec], set[str]]:
    """The runs under the id of the last sweep with the same plan in the file, and the keys
    whose final record there verified."""
    plan_digest = runs[0].sweep_plan
    prior = [
        r
        for r in records.read(results, containing=plan_digest.encode() if plan_digest else None)
        if r.get("driver", {}).get("sweep_plan") == plan_digest
    ]
    if not prior:
        console.print(f"resume: no earlier sweep with this plan in {results}; running all {len(runs)} runs")
        return runs, set()
    sweep_id = prior[-1]["driver"]["sweep_id"]
    done = records.completed_keys(r for r in prior if r["driver"].get("sweep_id") == sweep_id)
    console.print(f"resume: sweep {sweep_id}: {len(done)} of {len(runs)} runs already verified in {results}")
    return [replace(r, sweep_id=sweep_id) for r in runs], done


def _app_message(output: str) -> str:
    """The line of a run's output that says why: the app's own "error:" line, not the
    launcher's banner around it."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if ": error:" in ln]
    if errors:
        return errors[-1]
    words = [ln for ln in lines if ln.strip("-= ")]
    return words[-1] if words else "no output"


def configuration_key(spec: RunSpec) -> str:
    """The run's sweep key without its repeat: every repeat of a configuration shares it."""
    key = json.loads(spec.sweep_key or "{}")
    key.pop("repeat", None)
    return json.dumps(key, sort_keys=True)


def run(
    runs: list[RunSpec], results: Path, resume: bool, console: Console, refused: dict[str, str] | None = None
) -> list[dict]:
    """Runs everything not already done; records failures and carries on. Returns the final
    record of every run of this sweep (resumed ones included). A run the app refuses as bad
    input stops the sweep (InputError), unless `refused` is given: then that configuration's
    repeats are skipped, `refused` maps its configuration_key to what it is and the app's
    message, and the sweep goes on (an app option may suit some layouts and not others);
    when every configuration is refused the sweep stops as before."""
    done: set[str] = set()
    if resume:
        runs, done = _resumed(runs, results, console)
    todo = [r for r in runs if r.sweep_key not in done]
    failures = 0
    with Steps(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TextColumn("[progress.elapsed]{task.elapsed:.0f}s"),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("sweep", total=len(todo))
        refused_keys: set[str] = set()
        for spec in todo:
            mode, threads, tile = spec.resolved()
            what = f"{spec.layout.with_threads(threads)} {mode} {tile if mode == 'tiled' else ''}".strip()
            if configuration_key(spec) in refused_keys:
                progress.advance(task)
                continue
            progress.update(task, description=f"{spec.app} {what} rep {spec.repeat + 1}")
            result = runner.execute(spec)
            if result.status == "bad-input":
                message = _app_message(result.output)
                if refused is None or len(refused_keys) + 1 == len({configuration_key(r) for r in todo}):
                    raise InputError(f"{spec.app} refused {what}: {message} (no record written; the sweep stopped)")
                refused_keys.add(configuration_key(spec))
                refused[configuration_key(spec)] = f"{what}: {message}"
                progress.console.print(
                    f"[red]refused[/red]: {what}: {escape(message)} (no record; its repeats are skipped)",
                    highlight=False,
                )
                progress.advance(task)
                continue
            if result.status != "ok":
                failures += 1
                why = _app_message(result.output)
                label = "verification failed" if result.status == "failed" else result.status
                progress.console.print(
                    f"[red]{label}[/red]: {what} rep {spec.repeat + 1}: {escape(why)}", highlight=False
                )
            progress.advance(task)
    keys = {r.sweep_key for r in runs}
    sweep_id = runs[0].sweep_id
    mine = [
        r
        for r in records.final(records.read_own(results, containing=sweep_id.encode() if sweep_id else None))
        if r.get("driver", {}).get("sweep_id") == sweep_id and r["driver"].get("sweep_key") in keys
    ]
    if failures:
        console.print(f"[red]{failures} run(s) failed[/red]; their records say why ({results})")
    return mine


def summarize_and_print(recs: list[dict], console: Console, title: str) -> list[report.Row]:
    split = report.split_fields(recs)
    rows = report.summarize(recs, split)
    report.print_table(rows, title, console, split)
    report.print_failures(recs, console)
    return rows
