"""Counters for a run (`--counters hw|sim|sim-llc`): what each rank's timed iterations cost in
cache misses.

- hw: the proxies count with PAPI's presets (perf_event where PAPI is missing) and record
  them. On a machine without a performance-monitoring unit (most virtual machines) the record
  and the output say so, and how to get simulated counts; never zeros.
- sim: the driver starts every rank under valgrind's callgrind, whose cache simulator is set
  to this machine's L1d and L2 (hwloc's sizes, line and ways): the L2 stands in the
  simulator's last-level slot because pxq's tiles are sized for it. sim-llc puts the real
  last-level cache there instead. The proxy zeroes the counts before its timed iterations and
  dumps them after; the driver reads the dumps into the same record format, labelled
  simulated. Valgrind cannot decode AVX-512, so simulated runs use a build of their own
  (build/sim, without AVX-512) that the driver makes once.
"""

from __future__ import annotations

import functools
import math
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pxq.core import registry
from pxq.core.errors import InputError
from pxq.core.paths import ROOT, build_dir
from pxq.machine import envinfo

MODES = ("hw", "sim", "sim-llc")
SOURCE = "callgrind"
# The simulator's events, per record name: sums of callgrind's own.
SIM_EVENTS = {
    "instructions": ("Ir",),
    "data_accesses": ("Dr", "Dw"),
    "l1d_misses": ("D1mr", "D1mw"),
    "ll": ("DLmr", "DLmw"),  # renamed to the level the last-level slot simulates
}
SLOWDOWN = "valgrind runs a rank 20-100x slower than natively: give a reduced size (--class S or W, --block 8M)"
PMU_ROOT = Path("/sys/bus/event_source/devices")


def add_option(p: Any) -> None:
    p.add_argument(
        "--counters",
        nargs="?",
        const="hw",
        choices=MODES,
        help="count the timed iterations' cache misses: hw (the default: PAPI or perf_event), sim (valgrind's "
        "cache simulator with this machine's L1d and L2), sim-llc (L1d and the last-level cache)",
    )


def pmu_present(root: Path = PMU_ROOT) -> bool:
    return (root / "cpu").exists() or (root / "cpu_core").exists()


def no_pmu_note() -> str:
    return (
        "no hardware counters: this machine exposes no CPU performance-monitoring unit "
        f"({PMU_ROOT}/cpu is missing, as on many virtual machines); for simulated cache misses use --counters sim"
    )


# ------------------------------------------------------------------------ cache geometry
@dataclass(frozen=True)
class Geometry:
    level: str  # l1d, l2, l3
    bytes: int
    ways: int
    line: int
    machine_bytes: int  # what hwloc reported (the simulated size is rounded to whole sets)

    def flag(self) -> str:
        return f"{self.bytes},{self.ways},{self.line}"

    def as_record(self) -> dict[str, Any]:
        out = {"level": self.level, "bytes": self.bytes, "ways": self.ways, "line": self.line}
        if self.bytes != self.machine_bytes:
            out["machine_bytes"] = self.machine_bytes
        return out


def geometry(level: str, cache: dict[str, Any]) -> Geometry:
    """The simulator's geometry for one of the machine's caches: its line and ways, and its size
    rounded down to a power-of-two number of sets (the simulator's rule). Unknown ways: 8."""
    size = int(cache.get("bytes") or 0)
    if size <= 0:
        raise InputError(
            f"--counters sim: hwloc reports no {level.upper()} cache here, so there is nothing to simulate"
        )
    line = int(cache.get("line") or 64)
    ways = int(cache.get("ways") or 8)
    if ways < 0:  # fully associative
        ways = size // line
    sets = max(1, size // (ways * line))
    sets = 2 ** int(math.log2(sets))
    return Geometry(level, sets * ways * line, ways, line, size)


def simulated(mode: str, caches: dict[str, Any]) -> tuple[Geometry, Geometry]:
    """(D1, LL): the L1d, and the L2 (sim) or the last-level cache (sim-llc)."""
    d1 = geometry("l1d", caches["l1d"])
    if mode == "sim":
        return d1, geometry("l2", caches["l2"])
    last = "l3" if (caches.get("l3") or {}).get("bytes") else "l2"
    return d1, geometry(last, caches[last])


def simulating(mode: str | None) -> bool:
    """Whether a run with these counters runs under the simulator (it needs valgrind)."""
    return mode in ("sim", "sim-llc") and valgrind() is not None


@functools.lru_cache(maxsize=1)
def machine_caches() -> dict[str, Any]:
    return envinfo.machine()["caches"]


# ------------------------------------------------------------------------ the sim build
def sim_dir() -> Path:
    return build_dir() / "sim"


def sim_binary(app: str) -> Path:
    return sim_dir() / "bin" / f"pxq-{app}"


def valgrind() -> str | None:
    return shutil.which("valgrind")


_SIM_BUILT: set[tuple[Path, str]] = set()


def ensure_sim_build(apps: list[str], say: Any = print) -> None:
    """Builds the proxies without AVX-512 in build/sim (once; later calls are up-to-date checks)."""
    folder = sim_dir()
    log = folder / "build.log"
    targets = [f"pxq-{a}" for a in sorted(set(apps)) if (folder, a) not in _SIM_BUILT]
    if not targets:  # checked once per driver process: a sweep does not re-run the build per run
        return
    if not (folder / "CMakeCache.txt").exists():
        say(f"building the simulator's binaries in {folder} (once, about 2 minutes): valgrind cannot run AVX-512")
        folder.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(folder),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPXQ_NO_AVX512=ON",
            "-DPXQ_ENABLE_KOKKOS=OFF",
            "-DPXQ_ENABLE_TESTS=OFF",
            "-DPXQ_ENABLE_BENCHMARKS=OFF",
        ]
        _build_step(configure, log, "configure")
    _build_step(["cmake", "--build", str(folder), "--target", *targets], log, "build")
    _SIM_BUILT.update((folder, a) for a in apps)


def _build_step(argv: list[str], log: Path, what: str) -> None:
    with open(log, "a") as out:
        rc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise OSError(f"the simulator's {what} failed (see {log}); remove {log.parent} to start it again")


def check(app: str, backend: str) -> None:
    """What the simulator's build can run: the proxies, with the OpenMP backend."""
    if app not in registry.apps():
        raise InputError(f"--counters sim: {app} is not a proxy; count ring, cg, mg or ft")
    if backend != "openmp":
        raise InputError(
            f"--counters sim with --backend {backend}: the simulator's build has the openmp backend only; "
            "use --backend openmp"
        )


def wrapper(d1: Geometry, ll: Geometry, outdir: Path) -> list[str]:
    """The command every rank runs under: callgrind with the machine's caches, one dump per
    rank in `outdir` (named by process; the proxy labels its dump with its rank)."""
    return [
        valgrind() or "valgrind",
        "--tool=callgrind",
        "--cache-sim=yes",
        f"--D1={d1.flag()}",
        f"--LL={ll.flag()}",
        "--dump-instr=no",
        f"--callgrind-out-file={outdir}/callgrind.%p",
        "-q",
    ]


# ------------------------------------------------------------------------ reading the dumps
TRIGGER = re.compile(r"^desc: Trigger: Client Request: pxq rank (\d+) timed iterations\s*$", re.M)


def read_dump(path: Path) -> tuple[int, dict[str, int]] | None:
    """(rank, callgrind's totals by event) of one timed-iterations dump; None for other dumps."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    m = TRIGGER.search(text)
    events = re.search(r"^events: (.+)$", text, re.M)
    summary = re.search(r"^(?:summary|totals): (.+)$", text, re.M)
    if not (m and events and summary):
        return None
    names, values = events.group(1).split(), summary.group(1).split()
    counts = {n: int(v) for n, v in zip(names, values)}
    return int(m.group(1)), counts


def ll_key(mode: str) -> str:
    """The record's name for the simulator's last-level misses: the L2's (sim), or the
    last-level cache's (sim-llc), as hardware counters name them."""
    return "l2_misses" if mode == "sim" else "llc_misses"


def record_names(counts: dict[str, int], key: str) -> dict[str, int]:
    return {(key if name == "ll" else name): sum(counts.get(p, 0) for p in parts) for name, parts in SIM_EVENTS.items()}


def sim_record(outdir: Path, ranks: int, mode: str, d1: Geometry, ll: Geometry) -> dict[str, Any]:
    """The record's "counters" from the dumps the ranks left; a note instead when any is missing."""
    found: dict[int, dict[str, int]] = {}
    for path in sorted(outdir.glob("callgrind.*")):
        got = read_dump(path)
        if got is not None:
            found[got[0]] = got[1]
    base: dict[str, Any] = {
        "scope": "timed iterations",
        "simulated": True,
        "caches": {"d1": d1.as_record(), "ll": ll.as_record()},
    }
    missing = [r for r in range(ranks) if r not in found]
    if missing:
        return {
            **base,
            "source": "none",
            "note": f"the simulator left no counts for rank(s) {', '.join(map(str, missing))} of {ranks}",
        }
    key = ll_key(mode)
    per_rank = [record_names(found[r], key) for r in range(ranks)]
    total = {k: sum(p[k] for p in per_rank) for k in per_rank[0]}
    events = {
        (key if k == "ll" else k): "+".join(v) + (f" (LL = the {ll.level.upper()})" if k == "ll" else "")
        for k, v in SIM_EVENTS.items()
    }
    note = (
        f"simulated by valgrind's callgrind: L1d {d1.bytes // 1024} KiB {d1.ways}-way, "
        f"{ll.level.upper()} {_size(ll.bytes)} {ll.ways}-way in the last-level slot"
        + (f" (rounded from {_size(ll.machine_bytes)} to whole sets)" if ll.bytes != ll.machine_bytes else "")
        + "; each rank alone (no sharing between ranks), its threads sharing one set of caches"
    )
    return {**base, "source": SOURCE, "events": events, "per_rank": per_rank, "total": total, "note": note}


NO_VALGRIND = (
    "no simulated counts: valgrind is not installed (apt-get install valgrind; ./pxq setup installs it where it can)"
)


def run_record(mode: str, workdir: Path, ranks: int) -> dict[str, Any]:
    """The record's "counters" of a simulated run (the dumps in its folder), or why there are none."""
    if not simulating(mode):
        return {"source": "none", "simulated": True, "scope": "timed iterations", "note": NO_VALGRIND}
    return sim_record(workdir, ranks, mode, *simulated(mode, machine_caches()))


def _size(n: int) -> str:
    return f"{n / 2**20:.4g} MiB" if n >= 2**20 else f"{n / 1024:.4g} KiB"


def misses(rec: dict[str, Any]) -> tuple[str, float] | None:
    """(name, count) of the outermost level a record's counters counted, or None."""
    c = rec.get("counters") or {}
    total = c.get("total") or {}
    for name in ("llc_misses", "l2_misses", "l1d_misses"):
        if name in total:
            return name, float(total[name])
    return None


def label(name: str) -> str:
    """A record name as a column title: "l2_misses" -> "L2 misses"."""
    head, _, rest = name.partition("_")
    if rest != "misses":
        return name.replace("_", " ")
    return ("L1d" if head == "l1d" else head.upper()) + " misses"


def print_summary(console: Any, recs: Sequence[dict[str, Any] | None]) -> None:
    """The counters of a command's last counted run: per rank and in all, or why there are none."""
    from rich.table import Table

    counted = [r["counters"] for r in recs if r and r.get("counters")]
    if not counted:
        return
    c = counted[-1]
    if c.get("source") == "none" or not c.get("total"):
        console.print(f"[yellow]counters:[/yellow] {c.get('note', 'none counted')}")
        return
    names = list(c["total"])
    kind = "simulated" if c.get("simulated") else "hardware"
    t = Table(title=f"counters ({kind}, {c['source']}, {c.get('scope', '')})")
    t.add_column("rank")
    for n in names:
        t.add_column(label(n), justify="right")
    for rank, per in enumerate(c.get("per_rank", [])):
        t.add_row(str(rank), *(f"{per[n]:.4g}" if n in per else "-" for n in names))
    t.add_row("all", *(f"{c['total'][n]:.4g}" for n in names))
    console.print(t)
    if c.get("note"):
        console.print(f"[dim]{c['note']}[/dim]")
    if c.get("skipped"):
        console.print(f"[dim]not counted here: {', '.join(f'{k} ({v})' for k, v in c['skipped'].items())}[/dim]")


def say_before(console: Any, mode: str | None) -> None:
    """Before counted runs: what to expect (the simulator's slowdown), or why nothing will be counted."""
    if mode == "hw" and not pmu_present():
        console.print(f"[yellow]counters:[/yellow] {no_pmu_note()}; the runs go ahead, their records say so")
    elif mode in ("sim", "sim-llc"):
        console.print(
            f"[yellow]counters:[/yellow] {SLOWDOWN}" if valgrind() else f"[yellow]counters:[/yellow] {NO_VALGRIND}"
        )
