"""The tile benchmarks run (tiny minimum time) and their Google Benchmark JSON parses, with
one entry per kernel x tile x threads asked for, names that carry the parameters, and
positive bytes/s and items/s counters.

usage: check_bench_json.py OUT.json EXE [MPIRUN -np N]"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

TILES = (4096, 262144)


APPS_DEF = Path(__file__).resolve().parents[2] / "miniapps" / "apps.def"


def bench_kernels() -> tuple[str, ...]:
    """Every app's tile kernels, as miniapps/apps.def lists them (PXQ_APP's fifth field)."""
    rows = re.findall(r'^PXQ_APP\(\w+, "[A-Z]*", "\w+", "[^"]*", "([^"]*)"', APPS_DEF.read_text(), re.M)
    return tuple(k for row in rows for k in row.split())


def main() -> int:
    out, exe, launch = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    out.unlink(missing_ok=True)
    mpi = bool(launch)
    if launch:
        launch = [launch[0], *launch[1:], "--oversubscribe", "--bind-to", "none"]
    tiles = "|".join(str(t) for t in TILES)
    cmd = [
        *launch,
        exe,
        f"--benchmark_filter=/tile:({tiles})/threads:",
        "--benchmark_min_time=0.001",
        f"--benchmark_out={out}",
        "--benchmark_out_format=json",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}")
        return 1
    data = json.loads(out.read_text())
    threads = int(data["context"].get("pxq_max_threads", data["context"].get("num_cpus", 1)))
    kernels = ("ring_pipeline",) if mpi else bench_kernels()
    want = {(k, t, n) for k in kernels for t in TILES for n in range(1, threads + 1)}
    got = set()
    for b in data["benchmarks"]:
        m = re.fullmatch(r"(\w+)/tile:(\d+)/threads:(\d+)/(real|manual)_time", b["name"])
        if not m:
            print(f"FAIL: unexpected benchmark name {b['name']!r}")
            return 1
        if not (b["bytes_per_second"] > 0 and b["items_per_second"] > 0 and b["iterations"] > 0):
            print(f"FAIL: {b['name']} has no positive counters: {b}")
            return 1
        got.add((m.group(1), int(m.group(2)), int(m.group(3))))
    if got != want:
        print(f"FAIL: expected {sorted(want)}, got {sorted(got)}")
        return 1
    if mpi and data["context"].get("mpi_ranks") != "2":
        print(f"FAIL: the MPI benchmark should say it ran on 2 ranks: {data['context']}")
        return 1
    if mpi:
        # A random order would differ between ranks and hang their collectives: refused.
        p = subprocess.run(
            [*launch, exe, "--benchmark_enable_random_interleaving=true"], capture_output=True, text=True, timeout=120
        )
        if p.returncode == 0 or "is not supported" not in p.stderr:
            print(f"FAIL: random interleaving should be refused under MPI: exit {p.returncode}\n{p.stderr}")
            return 1
    print(f"PASS: {len(got)} benchmarks, JSON parsed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
