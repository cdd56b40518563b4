"""Message distribution by channel and size: `pxq msgdist`, `pxq profile`, `pxq study allocation`.

A message profile (libpxq-msgprof's record) holds every rank's messages per (source,
destination, size bin). Each message is classified as intra-CMP (same node, same socket),
inter-CMP (same node, other socket) or inter-node, either by the placement the profile
observed or by a what-if machine model NODESxSOCKETSxCORES onto which ranks are mapped
block (fill a node's sockets and cores before the next node) or cyclic (rank i on node
i mod N, then round robin over the node's sockets). The two-dimensional metric: per size
range, the share of all messages in that range and, within it, the share of messages and
bytes on each channel.

Over 400 lines: classification, its tables and figures and the profiler's launch still share this
module (drawing and printing are to move to pxq.figures and the commands).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.core import bounds, procs, records, registry
from pxq.core.errors import InputError
from pxq.core.layout import format_volume
from pxq.core.paths import build_dir, build_hint
from pxq.core.records import RecordError
from pxq.figures import channelbars
from pxq.machine.mpi import launcher_flavour

CHANNELS = ("intra_cmp", "inter_cmp", "inter_node")  # the channels between two ranks
ALL_CHANNELS = ("self", *CHANNELS)  # with a rank's messages to itself, shown as their own row
CHANNEL_TEXT = {"self": "self", "intra_cmp": "intra-CMP", "inter_cmp": "inter-CMP", "inter_node": "inter-node"}
ALLOCATIONS = ("block", "cyclic")


def ranges() -> tuple[str, ...]:
    """The profiler's coarse size ranges ("<=256B" .. ">256K"), from the binaries' registry."""
    return tuple(r["name"] for r in registry.registry()["message_ranges"])


def coarse_range(nbytes: int) -> int:
    """The coarse range of a size, 0 (<= 256 B) .. 4 (> 256 KiB): the profiler's bins are unions
    of these ranges (pxq-envinfo registry gives their bounds)."""
    uppers = [r["upper_bytes"] for r in registry.registry()["message_ranges"]]
    return next((i for i, top in enumerate(uppers) if top is not None and nbytes <= top), len(uppers) - 1)


@dataclass(frozen=True)
class Model:
    nodes: int
    sockets: int
    cores: int

    @property
    def slots(self) -> int:
        return self.nodes * self.sockets * self.cores

    def __str__(self) -> str:
        return f"{self.nodes}x{self.sockets}x{self.cores}"


def parse_model(text: str) -> Model:
    m = re.fullmatch(r"(\d{1,7})x(\d{1,4})x(\d{1,5})", text.strip())
    if not m or min(int(g) for g in m.groups()) < 1:
        raise InputError(f"model '{text}': use NODESxSOCKETSxCORES with every number at least 1, e.g. 4x2x2")
    model = Model(*(int(g) for g in m.groups()))
    if model.nodes > bounds.MAX_NODES or model.sockets > 64 or model.cores > bounds.MAX_RANKS_PER_NODE:
        raise InputError(
            f"model '{text}': at most {bounds.MAX_NODES} nodes of 64 sockets of {bounds.MAX_RANKS_PER_NODE} cores"
        )
    return model


def place(model: Model, ranks: int, alloc: str) -> list[tuple[int, int]]:
    """(node, socket) of every rank under the model."""
    if alloc not in ALLOCATIONS:
        raise InputError(f"unknown allocation '{alloc}': use block or cyclic")
    if ranks > model.slots:
        raise InputError(
            f"model {model} has {model.slots} cores but the profile has {ranks} ranks: use a model "
            f"with at least {ranks} cores (NODESxSOCKETSxCORES)"
        )
    out = []
    for r in range(ranks):
        if alloc == "block":
            node, local = divmod(r, model.sockets * model.cores)
            out.append((node, local // model.cores))
        else:
            node, local = r % model.nodes, r // model.nodes
            out.append((node, local % model.sockets))
    return out


def observed_places(rec: dict[str, Any]) -> list[tuple[int, int]]:
    placement = rec.get("placement") or []
    if len(placement) != rec["ranks"]:
        raise RecordError("the profile has no placement for every rank: give --model to classify it")
    by_rank = sorted(placement, key=lambda p: p["rank"])
    return [(p["node"], (p["threads"][0]["package"] if p["threads"] else -1)) for p in by_rank]


def channel(places: list[tuple[int, int]], src: int, dst: int) -> str:
    if src == dst:
        return "self"
    (ns, ss), (nd, sd) = places[src], places[dst]
    if ns != nd:
        return "inter_node"
    return "intra_cmp" if ss == sd else "inter_cmp"


def even_distribution(places: list[tuple[int, int]]) -> dict[str, float]:
    """The channel shares if every rank sent one message to every other rank."""
    counts = dict.fromkeys(CHANNELS, 0)
    for s in range(len(places)):
        for d in range(len(places)):
            if s != d:
                counts[channel(places, s, d)] += 1
    total = sum(counts.values())
    return {c: (counts[c] / total if total else 0.0) for c in CHANNELS}


def load(path: Path) -> dict[str, Any]:
    """The last message profile of a results file; clear errors for anything else."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file; make a profile with pxq profile -- mpirun ... ./app")
    recs = records.read(path)  # the door: every record checked against its kind's schema
    if not recs and path.stat().st_size > 0:
        raise RecordError(f"{path}: no complete record in it (the file is truncated or damaged): profile again")
    if not recs:
        raise RecordError(f"{path}: empty; make a profile with pxq profile -- mpirun ... ./app")
    profiles = [r for r in recs if isinstance(r, dict) and r.get("app") == "msgprof"]
    if not profiles:
        raise RecordError(
            f"{path}: no message profile in it (no record with a message matrix); make one with "
            "pxq profile -- mpirun ... ./app"
        )
    rec = profiles[-1]
    for key in ("ranks", "p2p", "collective_model", "bins"):
        if key not in rec:
            raise RecordError(f"{path}: the message profile lacks '{key}': profile again")
    check_rows(rec, str(path))
    return rec


def check_rows(rec: dict[str, Any], where: str) -> None:
    """What the schema cannot say of a profile: every row's ranks are ranks of the profile and
    its bin one of its bins, and every rank placed at most once (RecordError, exit 2)."""
    ranks, bins = rec["ranks"], len(rec["bins"]["upper_bytes"])
    for key in ("p2p", "collective_model"):
        for i, (src, dst, b, _, _) in enumerate(rec[key]):
            if src >= ranks or dst >= ranks or b >= bins:
                raise RecordError(
                    f"{where}: {key} row {i} names rank {max(src, dst)} or bin {b} of a profile of {ranks} ranks and "
                    f"{bins} bins: not a profile pxq wrote; profile again"
                )
    placed = [p.get("rank") for p in rec.get("placement") or []]
    if any(r >= ranks for r in placed) or len(set(placed)) != len(placed):
        raise RecordError(f"{where}: its placement names ranks the profile does not have, or one twice: profile again")


@dataclass
class Tally:
    count: list[dict[str, int]]  # per range, per channel
    nbytes: list[dict[str, int]]

    @classmethod
    def empty(cls) -> Tally:
        return cls(
            [dict.fromkeys(ALL_CHANNELS, 0) for _ in ranges()], [dict.fromkeys(ALL_CHANNELS, 0) for _ in ranges()]
        )

    def total(self) -> int:
        return sum(sum(r.values()) for r in self.count)


def tally(rec: dict[str, Any], places: list[tuple[int, int]], which: str) -> Tally:
    """Messages per size range and channel (self included): which is p2p, collectives (the
    model) or all."""
    upper = rec["bins"]["upper_bytes"]
    rows = (rec["p2p"] if which in ("p2p", "all") else []) + (
        rec["collective_model"] if which in ("collectives", "all") else []
    )
    t = Tally.empty()
    for src, dst, b, count, nbytes in rows:
        ch = channel(places, src, dst)
        rng = coarse_range(upper[b])
        t.count[rng][ch] += count
        t.nbytes[rng][ch] += nbytes
    return t


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def print_tally(t: Tally, title: str, ranks: int, even: dict[str, float], console: Console) -> None:
    total = t.total()
    table = Table(title=title)
    table.add_column("size range")
    table.add_column("of all msgs", justify="right")
    for c in ALL_CHANNELS:
        table.add_column(f"msgs {CHANNEL_TEXT[c]}", justify="right")
    for c in ALL_CHANNELS:
        table.add_column(f"bytes {CHANNEL_TEXT[c]}", justify="right")
    rows = [(name, t.count[i], t.nbytes[i]) for i, name in enumerate(ranges())]
    all_count = {c: sum(r[c] for r in t.count) for c in ALL_CHANNELS}
    all_bytes = {c: sum(r[c] for r in t.nbytes) for c in ALL_CHANNELS}
    rows.append(("all", all_count, all_bytes))
    for name, cnt, nb in rows:
        n, b = sum(cnt.values()), sum(nb.values())
        table.add_row(
            name,
            pct(n, total),
            *(pct(cnt[c], n) for c in ALL_CHANNELS),
            *(pct(nb[c], b) for c in ALL_CHANNELS),
            style="bold" if name == "all" else None,
        )
    table.add_row("even", "", "", *(f"{100 * even[c]:.1f}%" for c in CHANNELS), "", "", "", "", style="dim")
    console.print(table)
    per = ", ".join(
        f"{CHANNEL_TEXT[c]} {all_count[c] / ranks:.1f} msgs / {format_volume(int(all_bytes[c] / ranks))}"
        for c in ALL_CHANNELS
    )
    console.print(f"per process: {per} (total {format_volume(sum(all_bytes.values()))})")
    console.print("[dim]even: one message from every rank to every other rank (no self messages)[/dim]")


def plot(tallies: dict[str, Tally], even: dict[str, float], path: Path, title: str) -> Path:
    """Stacked bars of the channel shares of messages (and bytes) per size range, the even
    distribution alongside (figures/channelbars.py draws them)."""
    t = tallies["all"]
    text = {c: CHANNEL_TEXT[c] for c in ALL_CHANNELS}
    return channelbars.plot(list(ranges()), text, t.count, t.nbytes, even, path, title)


def plot_profile(rec: dict[str, Any], path: Path) -> Path:
    """A profile's figure as `pxq profile` drew it: shares per channel, observed placement."""
    places, how = classify(rec, None, "block")
    tallies = {"all": tally(rec, places, "all")}
    return plot(tallies, even_distribution(places), path, f"{program_name(rec)}, {rec['ranks']} ranks: {how}")


def program_name(rec: dict[str, Any]) -> str:
    """The profiled program's name (its path's last part), for titles: letters, digits and
    ._+- only, so a profile's text is never markup (rich), math (matplotlib) or a control."""
    words = str(rec.get("program", "?")).split()
    name = Path(words[0]).name if words else "?"
    return re.sub(r"[^A-Za-z0-9._+-]", "?", name)[:64] or "?"


def classify(rec: dict[str, Any], model: Model | None, alloc: str) -> tuple[list[tuple[int, int]], str]:
    if model is None:
        return observed_places(rec), "observed placement"
    return place(model, rec["ranks"], alloc), f"model {model}, {alloc} allocation"


def report(console: Console, path: Path, model_text: str | None, alloc: str, plot_path: Path | None) -> int:
    if alloc not in ALLOCATIONS:
        raise InputError(f"unknown allocation '{alloc}': use block or cyclic")
    model = parse_model(model_text) if model_text else None
    rec = load(path)
    places, how = classify(rec, model, alloc)
    even = even_distribution(places)
    tallies = {w: tally(rec, places, w) for w in ("p2p", "collectives", "all")}
    console.print(f"[bold]{program_name(rec)}[/bold]: {rec['ranks']} ranks, classified by {how}")
    for which, name in (
        ("p2p", "point-to-point"),
        ("collectives", "collectives (model)"),
        ("all", "all: point-to-point + collectives (model)"),
    ):
        if tallies[which].total():
            print_tally(tallies[which], f"{name}: {tallies[which].total()} messages", rec["ranks"], even, console)
    calls = rec.get("collectives") or {}
    if calls:
        console.print(
            "collective calls: "
            + ", ".join(f"{k} {v['calls']} ({format_volume(v['bytes'])} given)" for k, v in sorted(calls.items()))
        )
        console.print(f"[dim]the collectives' messages are a model: {rec.get('model', '')}[/dim]")
    print_time(rec, console)
    excluded = (rec.get("excluded") or {}).get("calls", 0)
    if excluded:
        console.print(f"left out: {excluded} calls between MPI_Pcontrol(0) and MPI_Pcontrol(1) (bookkeeping)")
    if plot_path is not None and tallies["all"].total():
        title = f"{program_name(rec)}, {rec['ranks']} ranks: {how}"
        console.print(f"plot: {plot(tallies, even, plot_path, title)}")
    return 0


def print_time(rec: dict[str, Any], console: Console) -> None:
    """Seconds inside each MPI call (summed over ranks, and on the busiest rank), and what the
    profiler's timing cost, as measured in the same run."""
    time = rec.get("time_in_mpi") or {}
    if not time:
        return
    total = sum(t["seconds"] for t in time.values())
    table = Table(title=f"time in MPI by call: {1e3 * total:.3f} ms over {rec['ranks']} ranks")
    for col in ("call", "calls", "ms (all ranks)", "busiest rank ms", "per call", "share"):
        table.add_column(col, justify="left" if col == "call" else "right")
    for name, t in sorted(time.items(), key=lambda kv: -kv[1]["seconds"]):
        per_call = t["seconds"] / t["calls"] if t["calls"] else 0.0
        table.add_row(
            name,
            str(t["calls"]),
            f"{1e3 * t['seconds']:.3f}",
            f"{1e3 * t['max_rank_seconds']:.3f}",
            f"{1e6 * per_call:.2f} us",
            pct(t["seconds"], total),
        )
    console.print(table)
    over = rec.get("overhead") or {}
    if over:
        console.print(
            f"profiler timing overhead: {over['per_call_ns']:.0f} ns per call, {over['timed_calls']} calls: "
            f"about {1e3 * over['seconds_per_rank']:.3f} ms per rank, "
            f"{100 * over['share_of_time_in_mpi']:.2f}% of the time measured in MPI"
        )


def channel_totals(rec: dict[str, Any], places: list[tuple[int, int]]) -> dict[str, dict[str, int]]:
    """Bytes and messages per channel (self included) under a placement, every size range."""
    t = tally(rec, places, "all")
    return {
        "bytes": {c: sum(r[c] for r in t.nbytes) for c in ALL_CHANNELS},
        "count": {c: sum(r[c] for r in t.count) for c in ALL_CHANNELS},
    }


def compare_allocations(rec: dict[str, Any], model: Model) -> list[dict[str, Any]]:
    """Inter-node messages and bytes (and the other channels) under block and cyclic."""
    out = []
    for alloc in ALLOCATIONS:
        places = place(model, rec["ranks"], alloc)
        out.append({"alloc": alloc, **channel_totals(rec, places), "even": even_distribution(places)})
    return out


LAUNCHERS = ("mpirun", "mpiexec", "orterun")


def profiler_library() -> Path:
    lib = build_dir() / "lib" / "libpxq-msgprof.so"
    if not lib.exists():
        raise InputError(f"{lib} is missing: {build_hint()}")
    return lib


def preload_env(results: Path, trace_dir: Path | None = None) -> dict[str, str]:
    """The environment that loads the profiler into every rank and points it at the results
    (and, for a traced run, at the folder each rank writes its timeline to)."""
    env = {"LD_PRELOAD": str(profiler_library()), "PXQ_MSGPROF_OUT": str(Path(results).resolve())}
    if trace_dir is not None:
        env["PXQ_TRACE_DIR"] = str(Path(trace_dir).resolve())
    return env


def preload_flags(results: Path, trace_dir: Path | None = None) -> list[str]:
    """mpirun flags that pass preload_env on to every rank."""
    return [flag for key, value in preload_env(results, trace_dir).items() for flag in ("-x", f"{key}={value}")]


def _profiles(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for ln in records.read_bytes(path).splitlines() if b'"app":"msgprof"' in ln)


def profile(console: Console, command: list[str], results: Path, plot_path: Path) -> int:
    """Runs `mpirun ... ./app` with the profiler preloaded, then reports the distribution."""
    import os
    import uuid

    if not command:
        raise InputError("nothing to profile: pxq profile -- mpirun -np 4 ./app [args]")
    if Path(command[0]).name.split(".")[0] not in LAUNCHERS:
        raise InputError(
            f"'{command[0]}' is not an MPI launcher: give the whole command, e.g. pxq profile -- mpirun -np 4 ./app"
        )
    records.check_writable(results)
    before = _profiles(results)

    env = dict(os.environ)
    if launcher_flavour(shutil.which(command[0]) or command[0]) == "mpich":  # Hydra passes the environment on
        argv = list(command)
        env.update(preload_env(results))
    else:
        argv = [command[0], *preload_flags(results), *command[1:]]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    proc = procs.run(argv, env, uuid.uuid4().hex, None, capture=False)
    if _profiles(results) <= before:
        if proc.returncode != 0:  # the launch or the program failed: its own messages say why
            console.print(
                f"[red]no profile was written[/red]: the command ended with exit code {proc.returncode} (the "
                "launcher could not start it, or the program failed: the messages above say which)"
            )
            return records.EXIT_RUN_FAILED
        console.print(
            "[red]no profile was written[/red]: the program exited 0 without reaching MPI_Finalize, where "
            "the profiler writes (in Fortran, the profiler knows gfortran's mpi_*_ names)"
        )
        return records.EXIT_RUN_FAILED
    report(console, results, None, "block", plot_path)
    return proc.returncode


def allocation_title(rec: dict[str, Any], model: Model) -> str:
    return (
        f"Allocation: {program_name(rec)}, {rec['ranks']} ranks on model {model}, "
        "block versus cyclic (point-to-point + collectives as modelled)"
    )


def better_allocation(rows: list[dict[str, Any]], what: str) -> str | None:
    """The allocation with fewer inter-node messages (what="count") or bytes ("bytes"), or None
    when they tie."""
    block, cyclic = (next(r for r in rows if r["alloc"] == a) for a in ALLOCATIONS)
    b, c = block[what]["inter_node"], cyclic[what]["inter_node"]
    return None if b == c else ("block" if b < c else "cyclic")


def allocation_verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """The verdict by bytes (what the network carries) and by messages (what its latency
    sees), and whether they disagree."""
    out = []
    by = {what: better_allocation(rows, what) for what in ("bytes", "count")}
    for what, unit in (("bytes", "inter-node bytes"), ("count", "inter-node messages")):
        vals = {r["alloc"]: r[what]["inter_node"] for r in rows}
        text = {a: format_volume(v) if what == "bytes" else str(v) for a, v in vals.items()}
        if by[what] is None:
            out.append(f"by {unit.split()[1]}: block and cyclic tie ({text['block']} {unit} each)")
        else:
            other = "cyclic" if by[what] == "block" else "block"
            out.append(
                f"by {unit.split()[1]}: {by[what]} keeps more on the node ({text[by[what]]} {unit} against "
                f"{text[other]} with {other})"
            )
    if by["bytes"] and by["count"] and by["bytes"] != by["count"]:
        out.append(
            f"the two disagree: {by['bytes']} moves fewer bytes between nodes, {by['count']} fewer messages; "
            "bandwidth-bound traffic follows the bytes"
        )
    return out


def allocation_study(console: Console, rec: dict[str, Any], model: Model, oversubscribed: bool) -> list[dict[str, Any]]:
    rows = compare_allocations(rec, model)
    t = Table(title=allocation_title(rec, model))
    for col in (
        "allocation",
        "messages",
        "intra-CMP",
        "inter-CMP",
        "inter-node msgs",
        "inter-node bytes",
        "even inter-node",
    ):
        t.add_column(col, justify="left" if col == "allocation" else "right")
    for r in rows:
        n, b = sum(r["count"].values()), sum(r["bytes"].values())
        t.add_row(
            r["alloc"],
            str(n),
            pct(r["count"]["intra_cmp"], n),
            pct(r["count"]["inter_cmp"], n),
            f"{r['count']['inter_node']} ({pct(r['count']['inter_node'], n)})",
            f"{format_volume(r['bytes']['inter_node'])} ({pct(r['bytes']['inter_node'], b)})",
            f"{100 * r['even']['inter_node']:.1f}%",
        )
    console.print(t)
    for line in allocation_verdicts(rows):
        console.print(line)
    if oversubscribed:
        console.print(
            "note: the ranks oversubscribed the cores for this profile: its timings mean nothing, "
            "its message counts are exact"
        )
    return rows
