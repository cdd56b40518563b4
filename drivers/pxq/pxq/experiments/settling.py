"""A sweep that runs until its comparisons are settled (`pxq sweep --precision P --budget T`,
the demo): paired blocks of the configurations in shuffled order, each pair judged after every
block under its rule (pxq.analysis.verdicts.settle), a configuration dropped once all its pairs
are settled, and the whole stopped when every pair is settled, the blocks reach the rule's
maximum or the budget is spent.

Beside the blocks:
- **long enough runs**: a calibration run of each configuration (into a scratch file, not the
  results) finds those whose timed region is under FLOOR seconds; where the app's work scales
  with an option (the ring's --iterations), every configuration gets the count that lifts the
  shortest above the floor, so the ratios stay ratios of the same work, and the records say it;
- **the host's state**: a short memory-bandwidth reference (pxq-stream, its arrays together past
  the last-level cache hwloc reports) before every block; a block whose reference moved beyond
  the references' own spread is left out of the verdicts, with the count said. Every run's
  record carries its block and the reference taken before it
  (driver.settle), so a comparison can be made again from the records alone."""

from __future__ import annotations

import functools
import json
import math
import random
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.verdicts import settle
from pxq.analysis.verdicts.settle import moved_blocks
from pxq.core import bounds, escape, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.core.paths import binary
from pxq.experiments import runner, sweep
from pxq.experiments.runner import RunSpec
from pxq.machine import caches, envinfo

FLOOR = 0.2  # seconds: a timed region shorter than this is mostly the timer's and the launch's noise
SCALABLE = {"ring": "--iterations"}  # apps whose timed work grows with an option, and the option
MAX_SCALE = 64  # the most a calibration multiplies the work by
CLOSE_BLOCKS = 15  # blocks a pair a few % apart often takes to settle on a noisy host (20% spread)


def budget_note(block_seconds: float, left: float) -> str:
    """After the first block: where the budget LEFT (seconds) allows fewer blocks of
    BLOCK_SECONDS than a close pair takes, how many it allows and the budget that would give
    CLOSE_BLOCKS; "" where it allows them."""
    if block_seconds <= 0:
        return ""
    more = max(0, int(left // block_seconds))
    if 1 + more >= CLOSE_BLOCKS:
        return ""
    want = math.ceil(block_seconds * CLOSE_BLOCKS / 60)
    first = f"; the first verdict needs {settle.MIN_BLOCKS}" if 1 + more < settle.MIN_BLOCKS else ""
    return (
        f"budget: a block took {block_seconds:.0f} s, so what is left allows about {more} more{first}; pairs a few % "
        f"apart often need {CLOSE_BLOCKS} or more on a noisy host: --budget {want}m would allow {CLOSE_BLOCKS}"
    )


@dataclass
class Pair:
    base: int  # indexes into the configurations
    other: int
    verdict: settle.Verdict | None = None


@dataclass
class Outcome:
    records: list[dict[str, Any]]  # every run's final record, in the order run
    pairs: list[Pair]
    names: list[str]
    blocks: int
    stopped: str  # "settled", "budget", "blocks"
    scaled: str = ""  # what the calibration did
    host: list[float | None] = field(default_factory=list)  # the reference of each block (GB/s)
    moved: list[int] = field(default_factory=list)  # blocks whose reference moved


def parse_budget(text: str | None) -> float:
    """'300', '300s', '5m', '1h' -> seconds (a default of 10 minutes)."""
    if text is None:
        return 600.0
    return bounds.duration(text)


def name_of(spec: RunSpec) -> str:
    mode, threads, tile = spec.resolved()
    return f"{spec.layout.with_threads(threads)} {mode}" + (f" {tile}" if mode == "tiled" else "")


def baseline_pairs(configs: list[RunSpec]) -> list[tuple[int, int]]:
    """Each configuration against its baseline: the flat run a rank per core on the same nodes and
    cores per node (report's speedup), else the first configuration."""
    out = []
    for i, spec in enumerate(configs):
        mode, threads, _ = spec.resolved()
        cores = spec.layout.ranks_per_node * threads
        base = next(
            (
                j
                for j, b in enumerate(configs)
                if b.resolved()[0] == "flat"
                and b.layout.threads == 1
                and b.layout.nodes == spec.layout.nodes
                and b.layout.ranks_per_node == cores
                and b.app_args == spec.app_args
            ),
            0,
        )
        if base != i:
            out.append((base, i))
    return out


def all_pairs(configs: list[RunSpec]) -> list[tuple[int, int]]:
    return [(i, j) for i in range(len(configs)) for j in range(i + 1, len(configs))]


def _time(rec: dict[str, Any] | None) -> float | None:
    if not rec or rec.get("status") != "ok":
        return None
    total = (rec.get("time") or {}).get("total")
    return float(total) if isinstance(total, (int, float)) and total > 0 else None


REFERENCE_BYTES = 64 << 20  # the reference's bytes per array where the last level is small


@functools.lru_cache(maxsize=1)
def reference_bytes() -> int:
    """Bytes per array of the host's reference: 64 MiB, or twice the last level hwloc reports
    where that is more, so that the triad's three arrays stream from memory (in a 300 MiB L3
    three 64 MiB arrays measured the cache's state, not memory's), within the memory."""
    try:
        last = max(caches.key(envinfo.machine())["hwloc"].values(), default=0)
    except (InputError, OSError, subprocess.SubprocessError, ValueError, TypeError, AttributeError):
        last = 0
    memory = caches.available_memory()
    return caches.working_set(REFERENCE_BYTES, last, 1, memory, factor=2, per_copy=3).bytes


def host_reference(threads: int) -> float | None:
    """This machine's memory bandwidth now (GB/s, pxq-stream's best triad over reference_bytes()
    per array), about 0.1 s a 64 MiB array; None where the probe cannot run."""
    try:
        out = subprocess.run(
            [str(binary("stream")), "--threads", str(threads), "--json", "--size", str(reference_bytes())],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return float(json.loads(out.stdout)["best_gbs"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return None


def calibrate(configs: list[RunSpec], console: Console) -> tuple[list[RunSpec], str]:
    """Every configuration once into a scratch file; if the shortest timed region is under
    FLOOR and the app's work scales, every configuration's work is scaled alike."""
    app = configs[0].app
    option = SCALABLE.get(app)
    if option is None or any(c.app != app for c in configs):
        return configs, ""
    current = [int(c.app_args[c.app_args.index(option) + 1]) if option in c.app_args else None for c in configs]
    if any(v is None for v in current) or len(set(current)) != 1:
        return configs, ""
    shortest = math.inf
    with tempfile.TemporaryDirectory(prefix="pxq-calibrate-") as scratch:
        for spec in configs:
            result = runner.execute(replace(spec, results=Path(scratch) / "calibrate.jsonl", sweep_key=None))
            t = _time(result.record)
            if t is None:
                return configs, ""  # a failing configuration fails in the blocks, where it is recorded
            shortest = min(shortest, t)
    if shortest >= FLOOR:
        return configs, ""
    base = current[0] or 1
    scale = min(MAX_SCALE, math.ceil(1.3 * FLOOR / shortest))
    count = base * scale
    scaled = []
    for spec in configs:
        args = list(spec.app_args)
        args[args.index(option) + 1] = str(count)
        scaled.append(replace(spec, app_args=args))
    note = (
        f"the shortest run took {shortest:.3f} s, under the {FLOOR} s a timed region needs: every configuration "
        f"runs {count} iterations ({option}) instead of {base}, so the ratios stay ratios of the same work"
    )
    console.print(f"calibration: {note}", highlight=False)
    return scaled, note


def _say_budget(block: int, block_seconds: float, left: float, console: Console) -> None:
    """After the first block (BLOCK 0): budget_note, where it has something to say."""
    note = budget_note(block_seconds, left) if block == 0 else ""
    if note:
        console.print(note, highlight=False)


def run(
    configs: list[RunSpec],
    pairs: list[tuple[int, int]],
    rule: settle.Rule,
    budget: float,
    console: Console,
    reference: bool = True,
    seed: int | None = None,
) -> Outcome:
    """Blocks until every pair is settled, the rule's last block or the budget; the outcome."""
    rule.check()
    if not pairs:
        raise InputError("nothing to compare: give at least two configurations")
    start = time.monotonic()
    configs, scaled = calibrate(configs, console)
    runs = sweep.interleave(configs, 1)  # the sweep's id and plan; each block's keys get its number
    configs = [replace(r, repeat=0) for r in runs]
    names = [name_of(c) for c in configs]
    state = [Pair(b, o) for b, o in pairs]
    rng = random.Random(seed)
    times: list[list[float | None]] = [[] for _ in configs]  # per configuration, per block (None: not run)
    recs: list[dict[str, Any]] = []
    host: list[float | None] = []
    threads = max(c.layout.ranks_per_node * c.layout.threads for c in configs)
    stopped, block_seconds = "blocks", 0.0
    for block in range(rule.max_blocks):
        active = sorted({i for p in state if p.verdict is None or not p.verdict.settled for i in (p.base, p.other)})
        if not active:
            stopped = "settled"
            break
        elapsed = time.monotonic() - start
        if block and elapsed + block_seconds * len(active) / len(configs) > budget:
            stopped = "budget"
            break
        t0 = time.monotonic()
        host.append(host_reference(threads) if reference else None)
        order = list(active)
        rng.shuffle(order)
        for i in range(len(configs)):
            times[i].append(None)
        for i in order:
            spec = replace(configs[i], repeat=block)
            spec = replace(spec, sweep_key=runner.sweep_key(spec))
            spec.driver_extra = {**spec.driver_extra, "settle": {"block": block, "host_gbs": host[-1]}}
            console.print(f"  block {block + 1}: {names[i]}", highlight=False)
            result = runner.execute(spec)
            if result.status == "bad-input":
                raise InputError(f"{spec.app} refused {names[i]}: {sweep._app_message(result.output)}")
            if result.record is not None:
                recs.append(result.record)
            times[i][block] = _time(result.record)
        block_seconds = (time.monotonic() - t0) * len(configs) / max(1, len(order))
        _say_budget(block, block_seconds, budget - (time.monotonic() - start), console)
        _judge(state, times, host, rule, replay=False)
    moved = _final(state, times, host, rule)
    return Outcome(recs, state, names, len(host), stopped, scaled, host, moved)


def _final(
    state: list[Pair], times: list[list[float | None]], host: list[float | None], rule: settle.Rule
) -> list[int]:
    """The verdicts, judged again over the blocks kept as `pxq report` judges the records
    (from_records): a pair that settled on blocks the host's reference flagged only later is
    judged without them, so the sweep and any later report of its file say the same."""
    for p in state:
        p.verdict = None
    return _judge(state, times, host, rule, replay=True)


def _judge(
    state: list[Pair],
    times: list[list[float | None]],
    host: list[float | None],
    rule: settle.Rule,
    replay: bool,
    last: bool = False,
) -> list[int]:
    """Judges every unsettled pair on its paired blocks so far (REPLAY: block by block, as a
    sweep would have, for blocks read back from records; LAST: no block follows), and every
    settled one again whose blocks the host's reference has flagged since (it settled before
    enough references said where the host stands): without them it may be open again, and its
    configurations run again; returns the blocks left out."""
    moved = moved_blocks(host)
    for p in state:
        both = [
            (k, b, o) for k, (b, o) in enumerate(zip(times[p.base], times[p.other])) if b is not None and o is not None
        ]
        kept = [o / b for k, b, o in both if k not in moved]
        left_out = len(both) - len(kept)
        if p.verdict is not None and p.verdict.settled and p.verdict.left_out == left_out:
            continue
        p.verdict = settle.replay(kept, rule, left_out) if replay else settle.judge(kept, rule, left_out, last)
    return moved


def from_records(recs: list[dict[str, Any]], rule: settle.Rule | None = None) -> Outcome | None:
    """The settled comparisons of the last settled sweep among RECS, made again from its records
    alone (each run's block and host reference; each configuration against its flat run on the
    same cores): what `pxq report` shows for such a file. None when RECS hold no settled sweep."""
    settled = [r for r in recs if isinstance((r.get("driver") or {}).get("settle"), dict) and r.get("kind") == "run"]
    if not settled:
        return None
    sweep_id = settled[-1]["driver"].get("sweep_id")
    mine = [r for r in settled if r["driver"].get("sweep_id") == sweep_id]
    keys: list[str] = []
    specs: list[RunSpec] = []
    by_key: dict[str, dict[int, float | None]] = {}
    host: dict[int, float | None] = {}
    for r in mine:
        key = _configuration(r)
        if key not in by_key:
            keys.append(key)
            specs.append(_spec_of(r))
            by_key[key] = {}
        block = int(r["driver"]["settle"]["block"])
        by_key[key][block] = _time(r)
        host[block] = r["driver"]["settle"].get("host_gbs")
    blocks = max(host) + 1 if host else 0
    times = [[by_key[k].get(b) for b in range(blocks)] for k in keys]
    refs = [host.get(b) for b in range(blocks)]
    rule = rule or settle.Rule()
    state = [Pair(b, o) for b, o in baseline_pairs(specs)]
    moved = _judge(state, times, refs, rule, replay=True)
    return Outcome(mine, state, [name_of(s) for s in specs], blocks, "recorded", "", refs, moved)


def _configuration(rec: dict[str, Any]) -> str:
    key = json.loads(rec["driver"].get("sweep_key") or "{}")
    key.pop("repeat", None)
    return json.dumps(key, sort_keys=True)


def _spec_of(rec: dict[str, Any]) -> RunSpec:
    """The configuration a record ran, as far as pairing needs it (layout, mode, tile, arguments)."""
    lay = rec["layout"]
    key = json.loads(rec["driver"].get("sweep_key") or "{}")
    variant = rec.get("variant") or {}
    tile = variant.get("tile_bytes")
    return RunSpec(
        app=rec["app"],
        layout=Layout(lay["nodes"], lay["ranks_per_node"], lay.get("threads", 1)),
        mode=variant.get("mode"),
        tile=str(tile) if variant.get("mode") == "tiled" and tile else None,
        app_args=list(key.get("args") or []),
    )


def print_verdicts(outcome: Outcome, rule: settle.Rule, console: Console) -> None:
    t = Table(
        title=f"settled comparisons: time ratios over paired blocks, precision +-{100 * rule.precision:.0f}%, "
        f"false calls at most {100 * rule.alpha:.0f}% (docs/RESULTS.md)"
    )
    for col in ("configuration", "against", "verdict"):
        t.add_column(col)
    for p in outcome.pairs:
        v = p.verdict
        text = v.text() if v is not None else "not run"
        style = "green" if v is not None and v.settled else "yellow"
        t.add_row(escape.term(outcome.names[p.other]), escape.term(outcome.names[p.base]), f"[{style}]{text}[/{style}]")
    console.print(t)
    why = {
        "settled": "every pair settled",
        "budget": "the budget was spent",
        "blocks": f"the rule's last block ({rule.max_blocks})",
        "recorded": "as recorded (judged again from the records)",
    }[outcome.stopped]
    console.print(f"{outcome.blocks} block(s); stopped: {why}", highlight=False)
    if outcome.moved:
        console.print(
            f"the host's memory bandwidth moved in block(s) {', '.join(str(b + 1) for b in outcome.moved)}: "
            "their runs are recorded and left out of the verdicts",
            highlight=False,
        )


def exit_code(outcome: Outcome) -> int:
    """The records' exit code (pxq.core.records.exit_code); no record at all is a run failure."""
    return records.exit_code(outcome.records) if outcome.records else records.EXIT_RUN_FAILED
