"""`pxq probe osu TEST` through the driver: every OSU test prints OSU's header and one row per
power of two in -m's range, with the figures its record holds; -i and -x are the counts the
record states; -c validates every size (a Pass column); -f adds min, max and iterations to the
collectives; messages/s is MB/s over the size; the records validate; bad input exits 2 and
writes no record.

usage: check_osu.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from driver_check import fail, pxq, records  # noqa: E402

# test, layout, -m, extra flags, OSU's header, the sizes expected
CASES = [
    ("latency", "1x2", "0:4K", ["-c"], "# Size          Latency (us)", [0] + [1 << k for k in range(13)]),
    ("bw", "2x1", "1:64K", ["-c", "-W", "16"], "# Size      Bandwidth (MB/s)", [1 << k for k in range(17)]),
    ("bibw", "1x2", "1K:64K", [], "# Size      Bandwidth (MB/s)", [1 << k for k in range(10, 17)]),
    ("mbw_mr", "1x2", "1:1K", [], "# Size                  MB/s        Messages/s", [1 << k for k in range(11)]),
    (
        "allreduce",
        "1x2",
        "1:64K",
        ["-f", "-c"],
        "# Size       Avg Latency(us)   Min Latency(us)",
        [1 << k for k in range(3, 17)],
    ),
    ("bcast", "2x1", "1:16K", ["-c"], "# Size       Avg Latency(us)", [1 << k for k in range(15)]),
    ("alltoall", "1x2", "4:4K", ["-f", "-c"], "# Size       Avg Latency(us)", [1 << k for k in range(2, 13)]),
    ("barrier", "1x2", None, ["-f"], "# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations", [0]),
]
ITERS, WARMUP = 40, 4


def printed_rows(out: str, header: str) -> list[list[str]]:
    lines = out.splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.startswith(header)), None)
    if at is None:
        fail(f"no OSU header '{header}' in:\n{out[-2000:]}")
    rows = []
    for ln in lines[at + 1 :]:
        if not re.match(r"^\s*\d", ln):
            break
        rows.append(ln.split())
    return rows


def check_case(work: Path, test: str, layout: str, sizes: str | None, extra: list[str], header: str, want: list[int]):
    results = work / f"{test}.jsonl"
    args = ["probe", "osu", test, "--layout", layout, "-i", str(ITERS), "-x", str(WARMUP), "--results", str(results)]
    p = pxq(*args, *(["-m", sizes] if sizes else []), *extra)
    if p.returncode != 0:
        fail(f"osu {test}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    rec = records(results)[-1]
    rows, printed = rec["osu"]["rows"], printed_rows(p.stdout, header)
    if [r["bytes"] for r in rows] != want or len(printed) != len(want):
        fail(f"osu {test}: sizes {[r['bytes'] for r in rows]}, {len(printed)} printed; expected {want}")
    for r, line in zip(rows, printed):
        value = r.get("latency_us", r.get("mb_per_s"))
        cols = line if test == "barrier" else line[1:]
        if test != "barrier" and int(line[0]) != r["bytes"]:
            fail(f"osu {test}: printed size {line[0]}, recorded {r['bytes']}")
        if abs(float(cols[0]) - value) > 0.006 or not value > 0:
            fail(f"osu {test} {r['bytes']} B: printed {cols[0]}, recorded {value}")
        if r["iterations"] != ITERS or r["warmup"] != WARMUP:
            fail(f"osu {test}: -i {ITERS} -x {WARMUP} recorded as {r['iterations']}, {r['warmup']}")
        if (
            test == "mbw_mr"
            and abs(r["messages_per_s"] - r["mb_per_s"] * 1e6 / r["bytes"]) > 1e-6 * r["messages_per_s"]
        ):
            fail(f"osu mbw_mr: {r['messages_per_s']} messages/s is not {r['mb_per_s']} MB/s over {r['bytes']} B")
        if "-f" in extra and (not r["min_us"] <= r["latency_us"] <= r["max_us"] or int(cols[3]) != ITERS):
            fail(f"osu {test} -f: avg {r['latency_us']} outside min {r['min_us']} .. max {r['max_us']}, or {cols}")
        if "-c" in extra and (r.get("wrong") != 0 or cols[-1] != "Pass"):
            fail(f"osu {test} -c: {r.get('wrong')} wrong, printed {cols[-1]}")
    if "-c" in extra and (rec["validation"] != {"on": True, "wrong": 0} or "Validation      = PASSED" not in p.stdout):
        fail(f"osu {test}: validation {rec['validation']}")
    figure = work / f"{test}-{test}-{layout}.png"  # results' name, the test and the layout: one figure each
    if not figure.exists() or not figure.stat().st_size or f"plot: {figure}" not in p.stdout:
        fail(f"osu {test}: no plot {figure}")
    print(f"osu {test} on {layout}: {len(rows)} sizes, e.g. {rows[-1]['bytes']} B -> {cols[0]}")


def check_bad_input(work: Path) -> None:
    results = work / "bad.jsonl"
    for args, words in (
        (["latency", "--layout", "2x2"], "runs on 2 ranks"),
        (["bw", "-f"], "belongs to the collective tests"),
        (["bw", "-m", "4M:1K"], "MAX is below MIN"),
        (["latency", "-i", "0"], "-i 0"),
        (["mbw_mr", "--layout", "1x3", "--oversubscribe"], "even number"),
        (["allreduce", "-m", "1:4"], "8 bytes or more"),
    ):
        p = pxq("probe", "osu", *args, "--results", str(results))
        if p.returncode != 2 or words not in p.stderr or "Traceback" in p.stderr:
            fail(f"osu {' '.join(args)}: exit {p.returncode}, wanted 2 and '{words}':\n{p.stderr[-1500:]}")
    if results.exists():
        fail("bad input wrote a record")


def main() -> int:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for case in CASES:
        check_case(work, *case)
    check_bad_input(work)
    valid = pxq("validate", str(work))
    if valid.returncode != 0 or " 0 invalid" not in valid.stdout:
        fail(f"pxq validate:\n{valid.stdout}{valid.stderr}")
    print("PASS: 8 OSU tests with OSU's headers, rows as recorded, -i/-x/-f/-c honoured; bad input refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
