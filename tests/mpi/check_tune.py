"""`pxq tune` for real on a tiny sweep, then `--tile auto` in a miniapp: the profile is valid
and the ring takes its tile (the record says auto:profile); a profile from another machine
is ignored with a note (auto:L2/4); a corrupt profile is a clear error, exit 2, no record.

usage: check_tune.py WORKDIR MPIRUN   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pxq.cli import main as pxq_main
from pxq.core.paths import binary


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def block() -> str:
    """2M, or four of this machine's L2s where that is more: a block --tile auto tiles (one that
    fits in an L2 runs untiled)."""
    info = json.loads(subprocess.run([str(binary("envinfo"))], capture_output=True, text=True, check=True).stdout)
    return str(max(2 << 20, 4 * int(info["caches"]["l2"]["bytes"])))


def ring(mpirun: str, record: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            mpirun,
            "-np",
            "1",
            "--bind-to",
            "none",
            str(binary("ring")),
            "--block",
            block(),
            "--iterations",
            "1",
            "--mode",
            "tiled",
            "--tile",
            "auto",
            "--json",
            str(record),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def main() -> int:
    work, mpirun = Path(sys.argv[1]), sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    profile = work / "cfg" / "tiles.json"
    os.environ["PXQ_TILE_PROFILE"] = str(profile)
    code = pxq_main(
        [
            "tune",
            "ring",
            "--tiles",
            "16K,64K",
            "--threads",
            "1",
            "--repeat",
            "2",
            "--min-time",
            "0.01",
            "--out",
            str(work / "bench.json"),
        ]
    )
    if code != 0:
        fail(f"pxq tune exited {code}")
    data = json.loads(profile.read_text())
    entry = data["kernels"]["ring_pass"]["1"]
    if (
        (data["kind"], data["schema"]) != ("tile-profile", 2)
        or entry["tile"] not in (16384, 65536)
        or entry["repetitions"] != 2
    ):
        fail(f"unexpected profile {data}")

    rec_path = work / "r1.jsonl"
    p = ring(mpirun, rec_path)
    rec = json.loads(rec_path.read_text()) if rec_path.exists() else {}
    v = rec.get("variant", {})
    if (
        p.returncode != 0
        or v.get("tile_source") != "auto:profile"
        or v.get("tile_bytes") != entry["tile"]
        or v.get("tile_profile") != str(profile)
    ):
        fail(f"the ring did not take the profile's tile: exit {p.returncode}, variant {v}\n{p.stdout}{p.stderr}")

    data["machine"]["host"] = "elsewhere"
    profile.write_text(json.dumps(data))
    rec_path = work / "r2.jsonl"
    p = ring(mpirun, rec_path)
    rec = json.loads(rec_path.read_text()) if rec_path.exists() else {}
    if (
        p.returncode != 0
        or rec.get("variant", {}).get("tile_source") != "auto:L2/4"  # the ring's share (apps.def)
        or not any("another machine (elsewhere" in n for n in rec.get("notes", []))
    ):
        fail(
            f"a profile from another machine should be ignored with a note: {rec.get('variant')} "
            f"{rec.get('notes')}\n{p.stdout}{p.stderr}"
        )

    good = profile.read_text()
    profile.write_text('{"kind": "tile-profile", "schema": 2, "machine": ')
    rec_path = work / "r3.jsonl"
    p = ring(mpirun, rec_path)
    if p.returncode != 2 or "is not valid" not in p.stderr or str(profile) not in p.stderr or rec_path.exists():
        fail(f"a corrupt profile should be a clear error (exit 2, no record): exit {p.returncode}\n{p.stderr}")
    profile.write_text(good)  # the folder keeps a whole profile for records.schema to check
    print(f"PASS: tuned ring_pass -> {entry['tile']} B; auto took it; other machine ignored; corrupt rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
