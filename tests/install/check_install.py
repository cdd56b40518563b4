"""`cmake --install` gives a usable tree: the installed `pxq` runs a proxy on virtual nodes from
any folder and writes a valid record carrying the build's commit; the tree still works when
moved; `find_package(pxq)` builds a program of one's own with the message profiler linked in,
whose profile the installed driver reads.

usage: check_install.py BUILD WORKDIR MPIRUN   (the driver's Python is this one)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "mpi"))
from driver_check import fail, records  # noqa: E402


def run(argv: list, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        fail(f"{' '.join(str(a) for a in argv)} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def main() -> None:
    build, work, mpirun = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    prefix = work / "prefix"
    run(["cmake", "--install", build, "--prefix", prefix], work)
    # The user's environment, not the test's: no PXQ_* pointing back at the build or checkout.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PXQ_") and k != "PYTHONPATH"}
    env["PXQ_PYTHON"] = sys.executable
    pxq = prefix / "bin" / "pxq"
    facts = json.loads((prefix / "share/pxq/driver/pxq/data/installed.json").read_text())

    # A Python without the driver's requirements: exit 2 and what to install, no traceback.
    run([sys.executable, "-m", "venv", "--without-pip", work / "bare"], work)
    bare = subprocess.run(
        [pxq, "report"],
        cwd=work,
        env=dict(env, PXQ_PYTHON=str(work / "bare/bin/python")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if bare.returncode != 2 or "pip install" not in bare.stderr or "Traceback" in bare.stderr:
        fail(f"bin/pxq on a bare Python: exit {bare.returncode}\n{bare.stderr}")

    run([pxq, "run", "ring", "--layout", "2x1", "--repeat", "2", "--", "--block", "1M", "--iterations", "3"], work, env)
    recs = records(work / "results" / "ring.jsonl")
    if len(recs) != 2 or any(r["status"] != "ok" for r in recs):
        fail(f"installed pxq run: {[r.get('status') for r in recs]}")
    if {r["context"]["git_commit"] for r in recs} != {facts["commit"]}:
        fail(f"records carry {recs[0]['context']['git_commit']}, the install was built from {facts['commit']}")
    out = run([pxq, "validate", work / "results"], work, env)
    if "0 invalid" not in out.stdout:
        fail(out.stdout)

    # Moved elsewhere, the tree still finds its binaries, its Kokkos and its driver.
    moved = work / "moved"
    prefix.rename(moved)
    prefix, pxq = moved, moved / "bin" / "pxq"
    out = run([pxq, "env"], work, env)
    if "topology" not in out.stdout:
        fail(f"pxq env from the moved tree:\n{out.stdout}")
    out = run([prefix / "bin" / "pxq-envinfo", "registry"], work, env)
    if not json.loads(out.stdout)["apps"]:
        fail("pxq-envinfo registry from the moved tree lists no apps")

    # find_package(pxq): the consumer project, linked to pxq::msgprof, profiled with no preload.
    cbuild = work / "consumer"
    run(["cmake", "-S", HERE / "consumer", "-B", cbuild, f"-DCMAKE_PREFIX_PATH={prefix}"], work, env)
    run(["cmake", "--build", cbuild], work, env)
    profile = work / "profile.jsonl"
    penv = dict(env, PXQ_MSGPROF_OUT=str(profile))
    launch = [mpirun, "-np", "3", "--oversubscribe", "--bind-to", "none"]
    run([*launch, cbuild / "traffic", "4", "1024"], work, penv)
    prof = records(profile)
    if len(prof) != 1 or prof[0]["status"] != "ok" or prof[0]["ranks"] != 3:
        fail(f"the consumer's profile: {prof}")
    sent = sum(row[3] for row in prof[0]["p2p"] if row[0] != row[1])
    if sent != 3 * 4:
        fail(f"the consumer's profile counts {sent} neighbour messages, the program sent 12")
    out = run([pxq, "msgdist", profile, "--model", "1x1x3"], work, env)
    if "intra" not in out.stdout.lower():
        fail(f"pxq msgdist of the consumer's profile:\n{out.stdout}")
    print(f"PASS: install tree at {prefix} (moved), run + validate, find_package(pxq) consumer profiled")


if __name__ == "__main__":
    main()
