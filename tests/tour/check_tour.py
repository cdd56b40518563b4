"""The README's five-minute tour, run as written: every line of the block after
`<!-- tour-commands -->`, from the checkout as a user types it, with `results/` standing for this
check's own folder (and PXQ_RESULTS_DIR set to it, where the demo writes), each exiting 0. The
tour's last line compares two sweeps taken minutes apart, and the README says it exits 1 on a
regression: that exit passes only with the regression in its table (a host that moved between the
sweeps), never as a crash. Then every record the tour wrote validates, and the files the tour
names are there: the demo's chart, the sweep's chart, the two sweeps.

usage: check_tour.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR as for the other driver checks)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE.parent / "mpi")]
from driver_check import fail, readme_commands  # noqa: E402


def as_here(cmd: str, work: Path) -> str:
    """A README command with results/ standing for this check's own folder."""
    return re.sub(r"(?<![\w/])results/", f"{work}/results/", cmd)


def main() -> int:
    work = Path(sys.argv[1]).resolve()
    shutil.rmtree(work / "results", ignore_errors=True)
    (work / "results").mkdir(parents=True)
    env = dict(os.environ, PXQ_NO_INSTALL="1", PXQ_RESULTS_DIR=str(work / "results"))
    lines = readme_commands("tour-commands")
    if not lines or not lines[0].startswith("./pxq demo"):
        fail(f"the README's tour should open with the main job, ./pxq demo: {lines[:1]}")
    for line in lines:
        cmd = as_here(line.split("  #")[0].strip(), work)
        start = time.monotonic()
        out = subprocess.run(cmd, shell=True, env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200)
        print(f"$ {cmd}  -> {out.returncode} ({time.monotonic() - start:.0f} s)", flush=True)
        said = out.stdout + out.stderr
        if "Traceback" in said:
            fail(f"{cmd}: a traceback\n{said[-3000:]}")
        documented = " compare " in cmd and out.returncode == 1 and "regression" in out.stdout
        if out.returncode != 0 and not documented:
            fail(f"{cmd}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    for name in ("demo-ring.png", "demo.jsonl", "cg.jsonl", "cg-again.jsonl", "cg.png"):
        if not (work / "results" / name).is_file():
            fail(f"the tour should have written results/{name}: {sorted(p.name for p in (work / 'results').iterdir())}")
    valid = subprocess.run(
        [sys.executable, "-m", "pxq", "validate", str(work / "results"), "--require", "run"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if valid.returncode != 0 or " 0 invalid" not in valid.stdout:
        fail(f"pxq validate on the tour's records:\n{valid.stdout[-2000:]}")
    print(f"check_tour: PASS ({len(lines)} lines of the README's tour, each as written)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
