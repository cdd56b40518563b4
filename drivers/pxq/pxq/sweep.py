"""Sweeps: the cross product of layouts x modes x tiles x backends, repeats interleaved."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from pxq import records, report, runner
from pxq.layout import InputError, Layout, resolve_mode
from pxq.runner import RunSpec


def plan(base: RunSpec, layouts: list[Layout], modes: list[str], tiles: list[str],
         backends: list[str], threads: list[int] | None) -> tuple[list[RunSpec], list[str]]:
    """Configurations (one repeat each) and notes on the combinations that were skipped."""
    specs: list[RunSpec] = []
    notes: list[str] = []
    seen: set[str] = set()
    for layout in layouts:
        for t in threads or [layout.threads]:
            lay = layout.with_threads(t)
            for mode in modes:
                for tile in tiles if mode == "tiled" else [None]:
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
    """A B C A B C ...: every repeat of every configuration sees the same machine drift."""
    out = []
    for rep in range(repeats):
        for spec in configs:
            s = replace(spec, repeat=rep)
            out.append(replace(s, sweep_key=runner.sweep_key(s)))
    return out


def run(runs: list[RunSpec], results: Path, resume: bool, console: Console) -> list[dict]:
    """Runs everything not already done; records failures and carries on. Returns the
    records of this sweep (including resumed ones)."""
    done = records.completed_keys(records.read(results)) if resume else set()
    todo = [r for r in runs if r.sweep_key not in done]
    if resume and len(todo) < len(runs):
        console.print(f"resume: {len(runs) - len(todo)} of {len(runs)} runs already in {results}")
    failures = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("elapsed"), TextColumn("[progress.elapsed]{task.elapsed:.0f}s"),
                  TextColumn("left"), TimeRemainingColumn(), console=console,
                  transient=False) as progress:
        task = progress.add_task("sweep", total=len(todo))
        for spec in todo:
            mode, threads, tile = spec.resolved()
            progress.update(task, description=f"{spec.app} {spec.layout.with_threads(threads)} {mode} "
                                              f"{tile if mode == 'tiled' else ''} rep {spec.repeat + 1}")
            result = runner.execute(spec)
            if result.record is None:
                failures += 1
                records.append(results, runner.error_record(spec, result))
                progress.console.print(f"[red]{result.status}[/red]: {spec.layout} {mode} {tile}: "
                                       f"{result.output.strip().splitlines()[-1:] or ['no output']}")
            elif result.status != "ok":
                failures += 1
                progress.console.print(f"[red]verification failed[/red]: {spec.layout} {mode} {tile}")
            progress.advance(task)
    keys = {r.sweep_key for r in runs}
    mine = [r for r in records.read(results) if r.get("driver", {}).get("sweep_key") in keys]
    if failures:
        console.print(f"[red]{failures} run(s) failed[/red]; their records say why ({results})")
    return mine


def summarize_and_print(recs: list[dict], console: Console, title: str) -> list[report.Row]:
    rows = report.summarize(recs)
    report.print_table(rows, title, console)
    return rows
