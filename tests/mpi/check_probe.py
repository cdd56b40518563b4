"""`pxq probe allreduce` through the driver: on 2 ranks and on 2 virtual nodes it records N
samples per rank and a valid record; with a background load the record holds the noise
settings and the load is gone afterwards; interrupting the driver mid-run stops both the
probe and the load; bad input exits 2 and writes no record.

usage: check_probe.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

CALLS = 300


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def pxq(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pxq", *args], capture_output=True, text=True, timeout=300, **kw)


def procs(needle: str) -> list[str]:
    """Command lines of live processes containing `needle`."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if needle in cmd and "check_probe.py" not in cmd:
                out.append(cmd)
    return out


def check_record(path: Path, nodes: int, noise: dict | None) -> None:
    lines = path.read_text().splitlines() if path.exists() else []
    if len(lines) != 1:
        fail(f"{path}: expected 1 record, found {len(lines)}")
    r = json.loads(lines[0])
    s = r["samples"]
    if r["status"] != "ok" or len(s["slowest_rank"]) != CALLS or [len(x) for x in s["per_rank"]] != [CALLS, CALLS]:
        fail(f"{path}: expected {CALLS} samples per rank, got {[len(x) for x in s['per_rank']]}")
    if any(m < max(rank[i] for rank in s["per_rank"]) for i, m in enumerate(s["slowest_rank"])):
        fail("a call's time must be the slowest rank's")
    st = r["stats"]
    if not (0 < st["median"] <= st["p90"] <= st["p95"] <= st["p99"] <= st["max"]) or not 0 < st["tail_share"] <= 1:
        fail(f"inconsistent statistics {st}")
    if sum(c["count"] for c in st["clusters"]) != CALLS:
        fail(f"clusters must hold every call: {st['clusters']}")
    if r["layout"]["observed_nodes"] != nodes:
        fail(f"expected {nodes} observed node(s), got {r['layout']}")
    if r["driver"].get("noise") != noise:
        fail(f"the record should hold the noise settings {noise}, got {r['driver'].get('noise')}")


def main() -> int:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for layout, nodes in (("1x2", 1), ("2x1", 2)):
        res = work / f"plain-{layout}.jsonl"
        p = pxq("probe", "allreduce", "--layout", layout, "--calls", str(CALLS), "--results", str(res))
        if p.returncode != 0:
            fail(f"probe on {layout} exited {p.returncode}\n{p.stdout}{p.stderr}")
        check_record(res, nodes, None)
        if not res.with_suffix(".png").exists():
            fail("no plot written")

    res = work / "noise.jsonl"
    p = pxq(
        "probe",
        "allreduce",
        "--calls",
        str(CALLS),
        "--noise",
        "compute",
        "--noise-cores",
        "1",
        "--noise-intensity",
        "0.5",
        "--results",
        str(res),
    )
    if p.returncode != 0:
        fail(f"probe with noise exited {p.returncode}\n{p.stdout}{p.stderr}")
    check_record(res, 1, {"mode": "compute", "cores": [1], "intensity": 0.5})
    time.sleep(0.5)
    if procs("pxq-noise"):
        fail(f"background load left running: {procs('pxq-noise')}")

    # Interrupt a long probe (with a load) once both run: nothing may be left behind.
    res = work / "interrupted.jsonl"
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pxq",
            "probe",
            "allreduce",
            "--calls",
            "100000000",
            "--noise",
            "memory",
            "--noise-cores",
            "0",
            "--results",
            str(res),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    tag = f"pxq-{driver.pid}"
    deadline = time.monotonic() + 60
    while not (procs(tag) and procs(str(res))) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not procs(tag):
        driver.kill()
        fail("the background load never started")
    time.sleep(1.0)
    driver.send_signal(signal.SIGINT)
    try:
        _, err = driver.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        driver.kill()
        fail("the driver did not stop on SIGINT")
    deadline = time.monotonic() + 10
    while (procs(tag) or procs("pxq-probe-collective")) and time.monotonic() < deadline:
        time.sleep(0.2)
    if procs(tag) or procs("pxq-probe-collective"):
        fail(f"left behind after the interrupt: {procs(tag) + procs('pxq-probe-collective')}")
    if driver.returncode != 130 or "interrupted" not in err or res.exists() and res.read_text().strip():
        fail(f"interrupt: exit {driver.returncode}, stderr {err!r}")

    for args, needle in (
        (["--calls", "0"], "--calls 0: use 1 to"),
        (["--noise", "compute", "--noise-intensity", "0"], "--noise-intensity 0: use above 0 to 1"),
        (["--noise", "compute", "--noise-cores", "99"], "core 99 does not exist"),
        (["--layout", "1x1x2"], "one thread per rank"),
        (["--size", "12"], "multiple of 8 bytes"),
    ):
        bad = work / "bad.jsonl"
        p = pxq("probe", "allreduce", *args, "--results", str(bad))
        if p.returncode != 2 or needle not in p.stdout + p.stderr or bad.exists() and bad.read_text().strip():
            fail(f"{args}: expected exit 2 naming '{needle}', got {p.returncode}\n{p.stdout}{p.stderr}")
    p = pxq("probe", "gather")
    if p.returncode != 2 or "invalid choice" not in p.stderr:
        fail(f"an unknown collective should be refused: {p.returncode} {p.stderr}")
    if procs("pxq-noise"):
        fail(f"background load left running: {procs('pxq-noise')}")
    print("PASS: probe on 2 ranks and 2 virtual nodes, noise recorded and stopped, interrupt cleans up, bad input")
    return 0


if __name__ == "__main__":
    sys.exit(main())
