"""Runs one miniapp command and checks what it did, not what it printed: exit code 0, and
exactly one record written to the given file, status ok, verification passed, the app and
rank count expected. An optional --expect REGEX must also match the output.

    check_run.py --record FILE [--expect REGEX] -- mpirun -np 2 ... pxq-cg --class S
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

INIT = Path(__file__).resolve().parents[2] / "drivers" / "pxq" / "pxq" / "__init__.py"


WORK_LINE = re.compile(
    r"^ Work +?= (\S+): (?:([\d.]+) GFlop/s, )?([\d.]+) GB/s at the cores, ([\d.]+) GB/s compulsory", re.M
)


# The access kind each proxy's phases declare (the ceiling pxq roofline bounds them by).
KIND_OF = {
    "cg": lambda phase: "gather" if phase == "spmv" else "stream",
    "is": lambda phase: "alltoall" if phase == "alltoall" else "update",
    "mg": lambda phase: {"restrict": "restrict", "interpolate": "interp"}.get(phase.rsplit(".", 1)[-1], "stencil"),
    "ring": lambda phase: "stream",
}


def kind_problems(app: str, work: dict) -> list[str]:
    """Each phase's declared access kind is the one its kernel has (FT: its transforms fft,
    its all-to-alls within a node alltoall, its copies and evolve streams, at least one
    transform)."""
    kinds = {phase: w.get("kind") for phase, w in work.items()}
    if app == "ft":
        exchange = {p for p, w in work.items() if str(w.get("what", "")).startswith("an all-to-all")}
        bad = [f"{p}: {k}" for p, k in kinds.items() if k not in ("fft", "stream") and p not in exchange]
        bad += [f"{p}: {kinds[p]}, expected 'alltoall'" for p in exchange if kinds[p] != "alltoall"]
        return bad + ([] if "fft" in kinds.values() else ["no phase of ft declares kind fft"])
    # A phase fusing two kinds' loops names the other and its share: MG's finest residual fused
    # with the restriction, nothing else.
    also = {phase: w["also"] for phase, w in work.items() if "also" in w}
    bad = [
        f"work.{p}.also {a!r}: only MG's residual fused with the restriction, a share in (0, 1)"
        for p, a in also.items()
        if not (app == "mg" and p.endswith(".residual") and a.get("kind") == "restrict" and 0 < a.get("share", 0) < 1)
    ]
    expect = KIND_OF.get(app)
    if expect is None:
        return bad
    return bad + [f"work.{p}.kind {k!r}, expected {expect(p)!r}" for p, k in kinds.items() if k != expect(p)]


def work_problems(rec: dict, out: str) -> list[str]:
    """The declared work: every phase with bytes, compulsory bytes within them, rates that are
    the amounts over the phase's time, and the banner's Work lines the record's figures."""
    work = rec.get("work")
    if not isinstance(work, dict) or not work:
        return [f"record has no declared work: {work!r}"]
    problems = kind_problems(rec.get("app", ""), work)
    tiled = (rec.get("variant") or {}).get("tile_bytes") or 0
    for phase, w in work.items():
        # A tile's edge bytes (MG's rows moved again where its blocks of rows meet): within the
        # compulsory bytes, the largest rank's within the sum, and only where a tile cut planes.
        edge = w.get("edge_bytes")
        if edge is not None and not (
            rec.get("app") == "mg"
            and tiled
            and 0 < w["rank_max"].get("edge_bytes", 0) <= edge <= w["memory_bytes"] * (1 + 1e-12)
        ):
            problems.append(f"work.{phase}.edge_bytes {edge}: only MG's tiled passes, within the compulsory bytes")
        # Row visits: CG's SpMV declares them (every row once per SpMV, once per row and window
        # tiled), nothing else; the largest rank's within the sum.
        visits, cg_spmv = w.get("row_visits"), rec.get("app") == "cg" and phase == "spmv"
        if cg_spmv != (visits is not None) or (
            visits is not None and not 0 < w["rank_max"].get("row_visits", 0) <= visits * (1 + 1e-12)
        ):
            problems.append(f"work.{phase}.row_visits {visits}: CG's SpMV only, its largest rank's within the sum")
        if not (w["bytes"] > 0 and 0 <= w["memory_bytes"] <= w["bytes"] * (1 + 1e-12) and w["flops"] >= 0):
            problems.append(f"work.{phase}: bytes {w['bytes']}, compulsory {w['memory_bytes']}, flops {w['flops']}")
        if w["seconds"] > 0 and abs(w["gbs"] - w["bytes"] / w["seconds"] / 1e9) > 1e-9 * w["gbs"]:
            problems.append(f"work.{phase}.gbs {w['gbs']} is not bytes over seconds")
    # A block of a few rows (under 8) cuts the planes of every rank at the classes these checks
    # run (S and up: 16 rows or more a rank): its edges must be declared.
    rows = (rec.get("variant") or {}).get("rows_per_block") or 0
    if rec.get("app") == "mg" and 0 < rows < 8 and not any(w.get("edge_bytes") for w in work.values()):
        problems.append(f"MG tiled in blocks of {rows} rows declares no edge_bytes")
    shown = WORK_LINE.findall(out)
    if not shown:
        problems.append("the banner shows no Work line")
    for phase, gflops, gbs, mem in shown:
        w = work.get(phase)
        if w is None:
            problems.append(f"the banner's Work line for {phase!r} has no record entry")
            continue
        pairs = [(gbs, w["gbs"]), (mem, w["memory_gbs"])] + ([(gflops, w["gflops"])] if gflops else [])
        for text, value in pairs:
            if abs(float(text) - value) > 0.006:
                problems.append(f"work.{phase}: the banner says {text}, the record {value}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", type=Path, required=True, help="the record file (recreated)")
    ap.add_argument("--expect", help="a regular expression the output must match as well")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    args.record.parent.mkdir(parents=True, exist_ok=True)
    args.record.unlink(missing_ok=True)
    proc = subprocess.run(cmd + ["--json", str(args.record)], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    print(out)
    problems = []
    if proc.returncode != 0:
        problems.append(f"exit code {proc.returncode}, expected 0")
    lines = args.record.read_text().splitlines() if args.record.exists() else []
    if len(lines) != 1:
        problems.append(f"{len(lines)} records in {args.record}, expected exactly 1")
    else:
        rec = json.loads(lines[0])
        if rec.get("status") != "ok":
            problems.append(f"record status {rec.get('status')!r}, expected 'ok'")
        if rec.get("verification", {}).get("passed") is not True:
            problems.append(f"verification not passed: {rec.get('verification')}")
        app = next(Path(c).name for c in cmd if Path(c).name.startswith("pxq-")).removeprefix("pxq-")
        if rec.get("app") != app:
            problems.append(f"record of app {rec.get('app')!r}, expected {app!r}")
        version = re.search(r'^__version__ = "(.*)"$', INIT.read_text(), re.M).group(1)
        if rec.get("context", {}).get("pxq_version") != version:
            problems.append(f"record of pxq {rec.get('context', {}).get('pxq_version')!r}, expected {version!r}")
        ctx = rec.get("context", {})
        # What moves the numbers beside the hardware: the build's flags, the OS and kernel, huge
        # pages, the governor, the load (a fact or "unavailable", never missing).
        for key in ("compile_flags", "os", "kernel", "thp", "cpu_governor"):
            if not isinstance(ctx.get(key), str) or not ctx[key]:
                problems.append(f"context.{key} is {ctx.get(key)!r}, expected a text")
        if "-O" not in ctx.get("compile_flags", "") or "load_at_start" not in ctx:
            problems.append(f"context.compile_flags {ctx.get('compile_flags')!r} names no -O; load_at_start missing")
        eff = rec.get("efficiency", {})
        lb, ce, pe = (eff.get(k) for k in ("load_balance", "communication", "parallel"))
        if not all(isinstance(x, float) and 0 < x <= 1 for x in (lb, ce, pe)) or abs(lb * ce - pe) > 1e-12:
            problems.append(f"efficiency {eff}: expected factors in (0, 1] whose product is the parallel one")
        elif len(eff.get("useful_s", [])) != rec.get("layout", {}).get("ranks"):
            problems.append(f"efficiency has {len(eff.get('useful_s', []))} ranks' useful times")
        problems += work_problems(rec, out)
        t = rec.get("time", {})
        # Start-up is a phase of its own: MPI_Init (slowest rank) within rank 0's seconds from
        # main to its record, which hold the set-up and the timed iterations too.
        init, wall = t.get("mpi_init"), t.get("app_wall")
        if not (isinstance(init, float) and isinstance(wall, float) and 0 < init < wall):
            problems.append(f"time.mpi_init {init!r} and time.app_wall {wall!r}: expected 0 < mpi_init < app_wall")
        elif wall < t.get("total", 0.0) + t.get("setup", 0.0):
            problems.append(f"time.app_wall {wall} is shorter than the set-up and the timed iterations it holds")
        if "-np" in cmd and rec.get("layout", {}).get("ranks") != int(cmd[cmd.index("-np") + 1]):
            problems.append(
                f"record has {rec.get('layout', {}).get('ranks')} ranks, expected {cmd[cmd.index('-np') + 1]}"
            )
    if args.expect and not re.search(args.expect, out, re.DOTALL):
        problems.append(f"output does not match {args.expect!r}")
    for p in problems:
        print(f"check_run: FAIL: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
