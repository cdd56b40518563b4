"""Tile sizes: `pxq tune` (run pxq-bench-tiling, pick the best tile per kernel, write the
machine tile profile that `--tile auto` reads) and `pxq report tiles` (table and plot of
Google Benchmark results; pxq.figures.tilesweep draws the curves).

Over 400 lines: the tile profile's producer (tune's plan, runs and choice) and its readers (report
tiles, `--tile auto`) share one format."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import statistics
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.core import bounds, escape, outputs, procs, records, registry
from pxq.core.errors import InputError
from pxq.core.layout import format_bytes, parse_bytes
from pxq.core.paths import binary
from pxq.core.progress import Steps
from pxq.figures import tilesweep
from pxq.machine import envinfo

PROFILE_KIND = "tile-profile"
PROFILE_SCHEMA = 2
PROFILE_LEGACY = "pxq-tile-profile/1"  # version 1, still read
DEFAULT_TILES = tuple(4096 << i for i in range(15))  # 4K .. 64M; 256K, the reference, among them
REFERENCE_TILE = 256 * 1024

_NAME = re.compile(r"(?P<kernel>\w+)/tile:(?P<tile>\d+)/threads:(?P<threads>\d+)(/\w+)?")


def profile_path() -> Path:
    """$PXQ_TILE_PROFILE, else $XDG_CONFIG_HOME/pxq/tiles.json, else ~/.config/pxq/tiles.json
    (the same rule as the miniapps)."""
    if os.environ.get("PXQ_TILE_PROFILE"):
        return Path(os.environ["PXQ_TILE_PROFILE"])
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]) / "pxq" / "tiles.json"
    return Path.home() / ".config" / "pxq" / "tiles.json"


@dataclass
class Sample:
    kernel: str
    tile: int
    threads: int
    gbs: float  # bytes/s / 1e9 of one repetition
    buffer: int | None = None  # the bytes the tile cuts (a tile this long is one window: untiled)


@dataclass
class Results:
    samples: list[Sample]
    caches: dict[str, int]  # l1d, l2, l3 in bytes, from Google Benchmark's context
    hosts: tuple[str, ...] = ()  # the machines the files were measured on (their context)
    dates: tuple[str, ...] = ()

    def where(self) -> str:
        """The machine and day in words, for a title."""
        host = ", ".join(self.hosts) or "an unnamed machine"
        day = sorted({d[:10] for d in self.dates if d})
        return host + (f", {day[0]}" if len(day) == 1 else f", {day[0]} to {day[-1]}" if day else "")


@dataclass
class Best:
    kernel: str
    threads: int
    tile: int
    gbs: float  # median over the repetitions
    spread: float  # (max - min) / median over the best tile's repetitions
    repetitions: int
    reference_gbs: float | None  # the 256K tile's median, when measured
    runner_up: int | None  # the second-best tile
    runner_up_gbs: float | None
    faster_in_noise: int | None = None  # a tile faster than 256K by less than the noise: 256K kept
    buffer: int | None = None  # the bytes the tile cuts, where the benchmark says
    untiled_gbs: float | None = None  # the median of one window (the untiled loop), where measured
    pays: bool | None = None  # the best tile beat one window beyond the noise (None: not measured)


# What pxq reads of Google Benchmark's JSON output, with the types it must have.
_BENCHMARK_JSON = Path(__file__).resolve().parents[2] / "data" / "gbench.schema.json"


def _check_benchmark_json(data: Any, path: Path) -> None:
    import jsonschema

    try:
        jsonschema.validate(data, json.loads(_BENCHMARK_JSON.read_text()))
    except jsonschema.ValidationError as e:
        where = "/".join(map(str, e.absolute_path)) or "(document)"
        raise InputError(
            f"{path}: not a Google Benchmark JSON file pxq can read ({where}: {escape.plain(e.message)[:120]})"
        ) from None


def read_results(paths: Iterable[Path]) -> Results:
    samples: list[Sample] = []
    caches: dict[str, int] = {}
    hosts: list[str] = []
    dates: list[str] = []
    for path in paths:
        hint = "write one with pxq tune, or pxq-bench-tiling --benchmark_out=FILE --benchmark_out_format=json"
        try:
            data = records.json_file(Path(path), f"not a Google Benchmark JSON file; {hint}")
        except FileNotFoundError:
            raise InputError(f"{path}: no such file ({hint})") from None
        if not isinstance(data, dict) or "benchmarks" not in data:
            raise InputError(f'{path}: not a Google Benchmark JSON file (no "benchmarks")')
        _check_benchmark_json(data, path)
        ctx = data.get("context", {})
        if isinstance(ctx.get("host_name"), str):
            hosts.append(ctx["host_name"])
        if isinstance(ctx.get("date"), str):
            dates.append(ctx["date"])
        for c in data.get("context", {}).get("caches", []):
            if c.get("type") in ("Data", "Unified"):
                caches.setdefault({1: "l1d", 2: "l2", 3: "l3"}.get(c.get("level"), ""), int(c["size"]))
        for b in data["benchmarks"]:
            if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
                continue
            m = _NAME.fullmatch(b.get("run_name", b.get("name", "")))
            if not m or "bytes_per_second" not in b:
                continue
            buffer = b.get("buffer_bytes")
            samples.append(
                Sample(
                    m["kernel"],
                    int(m["tile"]),
                    int(m["threads"]),
                    b["bytes_per_second"] / 1e9,
                    int(buffer) if isinstance(buffer, (int, float)) and buffer >= 8 else None,
                )
            )
    caches.pop("", None)
    if not samples:
        raise InputError("no tile benchmark results in " + ", ".join(str(p) for p in paths))
    return Results(samples, caches, tuple(dict.fromkeys(hosts)), tuple(dates))


MIN_GAIN = 0.05  # a tile must beat 256K by at least this much (and its noise) to replace it


def beats_reference(best: list[float], ref: list[float]) -> bool:
    """Whether `best` is significantly faster than the 256K reference: its median higher by
    more than MIN_GAIN and than either spread, and every repetition above every one of 256K."""
    gain = statistics.median(best) / statistics.median(ref) - 1
    spreads = [(max(v) - min(v)) / statistics.median(v) for v in (best, ref)]
    return gain > max(MIN_GAIN, *spreads) and min(best) > max(ref)


def untiled_of(by_tile: dict[int, list[float]], buffer: int | None) -> int | None:
    """The tile that ran the kernel untiled: the shortest one at least the buffer long (one
    window); None when no tile measured reached the buffer or the benchmark gave no buffer."""
    whole = [t for t in by_tile if buffer and t >= buffer]
    return min(whole) if whole else None


def best_tiles(samples: list[Sample]) -> list[Best]:
    """Per kernel and thread count, the tile with the highest median bandwidth; 256K (the
    reference tile) stays unless the winner is significantly faster (beats_reference). Where one
    window (a tile the buffer long) was measured too, `pays` says whether the best tile beat it
    by as much (False: --tile auto runs the kernel untiled for buffers up to that one)."""
    groups: dict[tuple[str, int], dict[int, list[float]]] = {}
    buffers: dict[tuple[str, int], int] = {}
    for s in samples:
        groups.setdefault((s.kernel, s.threads), {}).setdefault(s.tile, []).append(s.gbs)
        if s.buffer:
            buffers[(s.kernel, s.threads)] = s.buffer
    out = []
    for (kernel, threads), by_tile in sorted(groups.items()):
        buffer = buffers.get((kernel, threads))
        whole = untiled_of(by_tile, buffer)
        medians = sorted(((statistics.median(v), t) for t, v in by_tile.items()), reverse=True)
        ref = by_tile.get(REFERENCE_TILE)
        in_noise = None
        if ref and medians[0][1] != REFERENCE_TILE and not beats_reference(by_tile[medians[0][1]], ref):
            in_noise = medians[0][1]
            medians.sort(key=lambda m: (m[1] != REFERENCE_TILE, -m[0]))  # 256K first, then by speed
        gbs, tile = medians[0]
        reps = by_tile[tile]
        out.append(
            Best(
                kernel,
                threads,
                tile,
                gbs,
                (max(reps) - min(reps)) / gbs if gbs > 0 else 0.0,
                len(reps),
                statistics.median(ref) if ref else None,
                medians[1][1] if len(medians) > 1 else None,
                medians[1][0] if len(medians) > 1 else None,
                in_noise,
                buffer,
                statistics.median(by_tile[whole]) if whole else None,
                None if whole is None else tile < whole and beats_reference(reps, by_tile[whole]),
            )
        )
    return out


def best_table(best: list[Best], title: str) -> Table:
    t = Table(title=title)
    cols = ("kernel", "threads", "best tile", "GB/s", "spread", "reps", "runner-up", "256K GB/s", "best/256K")
    for col in (*cols, "best/untiled"):
        t.add_column(col, justify="left" if col == "kernel" else "right")
    for b in best:
        t.add_row(
            b.kernel,
            str(b.threads),
            format_bytes(b.tile),
            f"{b.gbs:.2f}",
            f"{100 * b.spread:.1f}%",
            str(b.repetitions),
            "-" if b.runner_up is None else f"{format_bytes(b.runner_up)} ({b.runner_up_gbs:.2f})",
            "-" if b.reference_gbs is None else f"{b.reference_gbs:.2f}",
            "-" if not b.reference_gbs else f"{b.gbs / b.reference_gbs:.2f}x",
            "-" if not b.untiled_gbs else f"{b.gbs / b.untiled_gbs:.2f}x" + ("" if b.pays else " (no gain)"),
        )
    return t


def print_best(console: Console, best: list[Best], title: str) -> None:
    console.print(best_table(best, title))
    for b in best:
        if b.faster_in_noise:
            console.print(
                f"note: {b.kernel} on {b.threads} thread(s): {format_bytes(b.faster_in_noise)} had a higher median "
                f"than 256K but not beyond the noise (needs {MIN_GAIN:.0%} and every repetition above 256K's): "
                "256K kept"
            )
        if b.pays is False and b.buffer:
            console.print(
                f"note: {b.kernel} on {b.threads} thread(s): its best tile, {format_bytes(b.tile)}, did not beat "
                f"one window of its whole {format_bytes(b.buffer)} buffer (the untiled loop) by {MIN_GAIN:.0%} and "
                "its noise: "
                f"--tile auto runs it untiled for buffers up to {format_bytes(b.buffer)} on this machine"
            )


def plot(results: Results, path: Path, title: str) -> Path:
    """Bandwidth versus tile size, one panel per kernel (figures/tilesweep.py draws it)."""
    kernels = [k for k in registry.tile_kernels() if any(s.kernel == k for s in results.samples)]
    kernels += sorted({s.kernel for s in results.samples} - set(kernels))
    return tilesweep.plot(kernels, results.samples, results.caches, path, title)


# ---- the profile ----


def _identity(m: dict[str, Any]) -> dict[str, Any]:
    c = m["caches"]
    return {
        "host": m["host"],
        "cpu_model": m["cpu_model"],
        "caches": {k: int(c[k]["bytes"]) for k in ("l1d", "l2", "l3")},
    }


def read_profile(path: Path) -> dict[str, Any] | None:
    """The profile at `path`, None when there is none; InputError when it is not a profile."""
    try:
        data = records.json_file(
            path, "the tile profile is not valid: delete it, or run pxq tune with --replace-profile"
        )
    except FileNotFoundError:
        return None
    current = isinstance(data, dict) and data.get("kind") == PROFILE_KIND and data.get("schema") == PROFILE_SCHEMA
    legacy = isinstance(data, dict) and data.get("schema") == PROFILE_LEGACY
    if not (current or legacy) or not isinstance(data.get("kernels"), dict):
        raise InputError(
            f'tile profile {path} is not valid (no "kind": "{PROFILE_KIND}" with "schema": {PROFILE_SCHEMA} and '
            '"kernels"): delete it, or run pxq tune with --replace-profile'
        )
    why = records.problem(data)
    if why:
        raise InputError(
            f"tile profile {path} is not valid ({escape.plain(why)[:160]}): delete it, or run pxq tune with "
            "--replace-profile"
        )
    return data


def profile_entries(best: list[Best]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for b in best:
        out.setdefault(b.kernel, {})[str(b.threads)] = {
            "tile": b.tile,
            "gbs": round(b.gbs, 4),
            "spread": round(b.spread, 4),
            "repetitions": b.repetitions,
        }
        if b.pays is not None and b.buffer and b.untiled_gbs is not None:
            out[b.kernel][str(b.threads)] |= {
                "buffer": b.buffer,
                "untiled_gbs": round(b.untiled_gbs, 4),
                "pays": b.pays,
            }
    return out


def write_profile(
    path: Path, machine: dict[str, Any], best: list[Best], source: Path, replace: bool = False
) -> tuple[dict[str, Any], str]:
    """Writes (atomically) the profile with the new best tiles; entries for other kernels are
    kept when the existing profile is for this machine. Returns the profile and a note."""
    ident = _identity(machine)
    note = ""
    kernels: dict[str, Any] = {}
    old = None if replace else read_profile(path)
    if old is not None:
        if old.get("machine") == ident:
            kernels = dict(old["kernels"])
        else:
            note = (
                f"the previous profile at {path} was for {old.get('machine', {}).get('host')} "
                f"({old.get('machine', {}).get('cpu_model')}): replaced"
            )
    kernels.update(profile_entries(best))
    profile = {
        "kind": PROFILE_KIND,
        "schema": PROFILE_SCHEMA,
        "machine": ident,
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "benchmark": str(source),
        "kernels": kernels,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        outputs.write(path, outputs.dumps(profile, indent=1), "json", "the tile profile (PXQ_TILE_PROFILE)")
    except OSError as e:
        raise InputError(
            f"cannot write the tile profile {path} ({e.strerror}): set PXQ_TILE_PROFILE to a writable path"
        ) from None
    return profile, note


# ---- pxq tune ----


def kernels_for(target: str | None) -> tuple[str, ...]:
    kernels = registry.tile_kernels()
    if target is None or target == "all":
        return kernels
    if target in registry.apps():
        return tuple(registry.app(target)["bench_kernels"])
    if target in kernels:
        return (target,)
    raise InputError(f"unknown app or kernel '{target}': use one of {', '.join((*registry.apps(), *kernels))} or all")


def __getattr__(name: str) -> tuple[str, ...]:
    """KERNELS: every tile kernel, from the registry (read when first asked for)."""
    if name == "KERNELS":
        return registry.tile_kernels()
    raise AttributeError(name)


def bench_command(
    kernels: tuple[str, ...], tiles: list[int], threads: list[int], repeat: int, min_time: float, out: Path
) -> list[str]:
    exe = binary("bench-tiling")
    if not exe.exists():
        raise InputError(f"{exe} is missing: build pxq with -DPXQ_ENABLE_BENCHMARKS=ON (./pxq build)")
    pattern = (
        f"^({'|'.join(kernels)})/tile:({'|'.join(str(t) for t in tiles)})"
        f"/threads:({'|'.join(str(t) for t in threads)})/"
    )
    return [
        str(exe),
        f"--benchmark_filter={pattern}",
        f"--benchmark_repetitions={repeat}",
        "--benchmark_enable_random_interleaving=true",
        f"--benchmark_min_time={min_time}",
        "--benchmark_report_aggregates_only=false",
        f"--benchmark_out={out}",
        "--benchmark_out_format=json",
    ]


# Google Benchmark's own notes, said in words a user can act on.
_BENCH_NOTES = {
    "Library was built as DEBUG": "Google Benchmark's library here was built without optimisation (the "
    "distribution's package): its timing loop costs a little more, pxq's kernels inside it are -O3 as always",
    "CPU scaling is enabled": "the CPU frequency may change during the runs: repeats are interleaved at random "
    "so that it spreads over every tile alike",
}


def _bench_with_progress(
    console: Console, cmd: list[str], env: dict[str, str], kernels: tuple[str, ...], total: int
) -> procs.Finished:
    """pxq-bench-tiling with a progress bar and an ETA over its `total` timed runs instead of its
    raw lines; its warnings said once each, in words (the raw lines stay in the JSON file)."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    said: set[str] = set()
    run_line = re.compile(rf"^({'|'.join(map(re.escape, kernels))})/tile:\d+/threads:\d+\S*\s")
    with Steps(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("benchmarks", total=total)

        def line(text: str) -> None:
            if run_line.match(text) and not re.search(r"_(mean|median|stddev|cv)\s", text):
                bar.update(task, advance=1, description=text.split()[0].removesuffix("/real_time"))
                return
            for needle, note in _BENCH_NOTES.items():
                if needle in text and needle not in said:
                    said.add(needle)
                    bar.console.print(f"note: {note}")

        return procs.run(cmd, env, uuid.uuid4().hex, None, on_line=line)


def _check_output(path: Path, option: str, kind: str) -> None:
    """An output file's folder made (as mkdir -p) and able to take the file, before any benchmark
    runs: a folder that cannot be made or written is refused (exit 2)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{option} {path}: cannot make its folder ({e.strerror}): give another path") from None
    records.check_writable(path, option, kind)


def tune(
    console: Console,
    target: str | None,
    tiles_text: str | None,
    threads_text: str | None,
    repeat: int,
    min_time: float,
    out: Path,
    profile: Path,
    replace: bool = False,
) -> int:
    kernels = kernels_for(target)
    tiles = [parse_bytes(t) for t in tiles_text.split(",")] if tiles_text else list(DEFAULT_TILES)
    if any(t < 8 for t in tiles):
        raise InputError("tiles must be at least 8 bytes (one double)")
    n = envinfo.cores()
    try:
        threads = [int(t) for t in threads_text.split(",")] if threads_text else list(range(1, n + 1))
    except ValueError:
        raise InputError(f"--threads {threads_text}: use thread counts such as 1,2") from None
    for t in threads:
        bounds.threads(t)
    bounds.repeat(repeat)
    if min_time <= 0:
        raise InputError("--min-time must be > 0 seconds")
    if not replace:
        read_profile(profile)  # a corrupt profile is an error before an hour of benchmarks
    _check_output(out, "--out", "json")
    _check_output(profile, "--profile", "json" if replace else "tiles")  # --replace-profile: any JSON
    if out.resolve() == profile.resolve():
        raise InputError(f"--out and the profile are the same file ({out}): give --out another path")
    machine = envinfo.machine()
    out.parent.mkdir(parents=True, exist_ok=True)
    # Google Benchmark writes its file as it goes: into a file of its own beside `out`, which
    # replaces `out` only once the benchmark has finished, so an interrupt or a crash leaves the
    # previous results whole.
    partial = out.with_name(f".{out.name}.partial")
    cmd = bench_command(kernels, tiles, threads, repeat, min_time, partial)
    count = len(kernels) * len(tiles) * len(threads)
    console.print(
        f"[bold]pxq tune[/bold]: {len(kernels)} kernel(s) x {len(tiles)} tiles x {len(threads)} thread "
        f"count(s) x {repeat} repetitions, interleaved at random ({count * repeat} runs of "
        f">= {min_time} s) -> {out}"
    )
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
    try:
        p = _bench_with_progress(console, cmd, env, kernels, count * repeat)
        if p.returncode != 0:
            console.print(p.output[-2000:], markup=False)
            console.print(f"[red]pxq-bench-tiling exited {p.returncode}[/red] ({out} is as it was)")
            return 3
        read_results([partial])  # whole and readable before it replaces anything
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    results = read_results([out])
    best = best_tiles(results.samples)
    written, note = write_profile(profile, machine, best, out, replace)
    print_best(console, best, f"best tiles on {written['machine']['host']} ({written['machine']['cpu_model']})")
    if note:
        console.print(f"note: {note}")
    console.print(f"profile: {profile} (--tile auto now uses it on this machine)")
    title = f"Bandwidth against tile size on {results.where()} (median of the repetitions, band: min to max)"
    chart = plot(results, out.with_suffix(".png"), title)
    console.print(f"curves: {chart}")
    return 0


def report(console: Console, paths: list[Path], plot_path: Path | None) -> int:
    results = read_results(paths)
    print_best(console, best_tiles(results.samples), "best tiles: " + ", ".join(str(p) for p in paths))
    target = plot_path or Path(paths[0]).with_suffix(".png")
    title = f"Bandwidth against tile size on {results.where()} (median of the repetitions, band: min to max)"
    console.print(f"curves: {plot(results, target, title)}")
    return 0
