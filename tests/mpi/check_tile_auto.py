"""`--tile auto` tiles only where tiling can pay: a buffer that already fits in the cache the
app's share targets runs untiled (the record's tile_source auto:untiled, tile_bytes 0, fusion off
with --fuse auto, a note saying why), even beside a tile profile of this machine that names a
tile; a buffer larger than that cache takes its share of the cache, as before; a profile whose
tune found its best tile not beating one window leaves buffers up to that window's untiled. IS on one
rank runs untiled whatever the caches say (its untiled code counts the keys without the bucket sort a
tile's windows need), and a tile asked for there is told so; on two ranks the caches decide. Sizes
are taken from this machine's caches (pxq-envinfo), so the check holds on any machine.

usage: check_tile_auto.py ENVINFO RING CG MG IS WORKDIR MPIRUN"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(mpirun: str, exe: str, args: list[str], record: Path, env: dict[str, str], ranks: int = 2) -> dict:
    """One run of `ranks` ranks; its record (exit 0, verified, exactly one line)."""
    cmd = [mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", exe, *args, "--json", str(record)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    lines = record.read_text().splitlines() if record.exists() else []
    if p.returncode != 0 or len(lines) != 1:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, {len(lines)} record(s)\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    rec = json.loads(lines[0])
    if rec.get("status") != "ok" or not rec.get("verification", {}).get("passed"):
        fail(f"{' '.join(cmd)}: not a verified run: {rec.get('status')}")
    return rec


def expect_untiled(rec: dict, what: str, why: str = "fits in") -> None:
    v = rec["variant"]
    notes = " ".join(rec.get("notes", []))
    if (v["mode"], v["tile_source"], v["tile_bytes"], v["fused"]) != ("tiled", "auto:untiled", 0, False):
        fail(f"{what}: expected an untiled auto run, unfused; got {v}")
    if "auto runs untiled" not in notes or why not in notes or "--tile SIZE" not in notes:
        fail(f"{what}: the note should say why auto runs untiled and how to tile anyway: {rec.get('notes')}")


def check_is(mpirun: str, exe: str, work_dir: Path, env: dict[str, str]) -> None:
    """IS on one rank: auto runs untiled for its own reason, without buckets, even where its
    counters (class W: 256 KiB) would not fit the cache; a tile asked for runs the bucket sort and is
    told it cannot pay. On two ranks the caches decide (class S: 4 KiB of counters a rank)."""
    one = "one rank exchanges with no one"
    args = ["--quiet", "--mode", "tiled"]
    rec = run(mpirun, exe, ["--class", "W", *args, "--tile", "auto"], work_dir / "is-one.jsonl", env, ranks=1)
    expect_untiled(rec, "is on one rank", one)
    if rec["variant"].get("buckets") is not False:
        fail(f"is on one rank untiled should count its keys without buckets: {rec['variant']}")
    rec = run(mpirun, exe, ["--class", "W", *args, "--tile", "4K"], work_dir / "is-one-asked.jsonl", env, ranks=1)
    notes = " ".join(rec.get("notes", []))
    if rec["variant"].get("buckets") is not True or "these tiles cannot pay here" not in notes or one not in notes:
        fail(f"a tile asked for on one rank: the bucket sort's windows, with the note why: {rec['variant']} {notes}")
    rec = run(mpirun, exe, ["--class", "S", *args, "--tile", "auto"], work_dir / "is-two.jsonl", env)
    expect_untiled(rec, "is class S on two ranks")
    if one in " ".join(rec.get("notes", [])) or rec["variant"].get("buckets") is not True:
        fail(f"is on two ranks exchanges its keys: the caches decide, with buckets: {rec['variant']} {rec['notes']}")


def main() -> int:
    envinfo, ring, cg, mg, is_, work, mpirun = sys.argv[1:8]
    work_dir = Path(work)
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    info = json.loads(subprocess.run([envinfo], capture_output=True, text=True, check=True).stdout)
    caches = {k: int(info["caches"][k]["bytes"]) for k in ("l1d", "l2", "l3")}
    l2 = caches["l2"]
    env = dict(os.environ, PXQ_TILE_PROFILE=str(work_dir / "no-profile.json"), OMP_WAIT_POLICY="passive")
    if l2 == 0:  # no cache known: auto cannot judge, so it tiles by its fallback rule
        rec = run(
            mpirun,
            ring,
            ["--block", "64K", "--iterations", "1", "--mode", "tiled", "--tile", "auto"],
            work_dir / "unknown.jsonl",
            env,
        )
        if rec["variant"]["tile_source"] != "auto:fallback":
            fail(f"no L2 known: expected the fallback tile, got {rec['variant']}")
        print("PASS: no cache known here: auto took its fallback tile")
        return 0
    ring_args = ["--iterations", "1", "--mode", "tiled", "--tile", "auto"]
    # A block half an L2: it stays in the L2 untiled.
    small = run(mpirun, ring, ["--block", str(l2 // 2), *ring_args], work_dir / "ring-small.jsonl", env)
    expect_untiled(small, "the ring's block of half an L2")
    # A block of four L2s: the ring's share of the L2 (apps.def: L2/4).
    large = run(mpirun, ring, ["--block", str(4 * l2), *ring_args], work_dir / "ring-large.jsonl", env)
    v = large["variant"]
    if (v["tile_source"], v["tile_bytes"]) != ("auto:L2/4", l2 // 4):
        fail(f"the ring's block of four L2s: expected auto:L2/4 of {l2 // 4} B, got {v}")
    # A tile asked for: tiled as asked, and where its buffer fits the L2 the record says it cannot pay.
    asked = ["--iterations", "1", "--mode", "tiled", "--tile", str(l2 // 8)]
    cut = run(mpirun, ring, ["--block", str(l2 // 2), *asked], work_dir / "ring-asked-small.jsonl", env)
    notes = " ".join(cut.get("notes", []))
    if cut["variant"]["tile_bytes"] != l2 // 8 or "these tiles cannot pay here" not in notes or "fits in" not in notes:
        fail(f"a tile asked for on half an L2: tiled, with the note that it cannot pay: {cut['variant']} {notes}")
    big = run(mpirun, ring, ["--block", str(4 * l2), *asked], work_dir / "ring-asked-large.jsonl", env)
    if any("cannot pay" in n for n in big.get("notes", [])):
        fail(f"a tile asked for on four L2s can pay: no such note, got {big.get('notes')}")
    # A profile of this machine naming a tile does not tile a buffer that fits: the model first.
    profile = work_dir / "tiles.json"
    profile.write_text(
        json.dumps(
            {
                "kind": "tile-profile",
                "schema": 2,
                "machine": {"host": info["host"], "cpu_model": info["cpu_model"], "caches": caches},
                "date": "2026-12-02T00:00:00Z",
                "benchmark": "check_tile_auto.py",
                "kernels": {"ring_pass": {"1": {"tile": 16384, "gbs": 1.0, "spread": 0.0, "repetitions": 1}}},
            }
        )
    )
    env_profile = dict(env, PXQ_TILE_PROFILE=str(profile))
    small = run(mpirun, ring, ["--block", str(l2 // 2), *ring_args], work_dir / "ring-profile.jsonl", env_profile)
    expect_untiled(small, "the ring's block of half an L2 beside a profile")
    large = run(mpirun, ring, ["--block", str(4 * l2), *ring_args], work_dir / "ring-profile-large.jsonl", env_profile)
    if (large["variant"]["tile_source"], large["variant"]["tile_bytes"]) != ("auto:profile", 16384):
        fail(f"a block of four L2s beside the profile should take its tile: {large['variant']}")
    # A profile where pxq tune weighed the tile against one window of an 8-L2 buffer and it lost:
    # buffers up to that one run untiled (the measurement says so), longer ones take its tile.
    lost = json.loads(profile.read_text())
    lost["kernels"]["ring_pass"]["1"] |= {"buffer": 8 * l2, "untiled_gbs": 2.0, "pays": False}
    profile.write_text(json.dumps(lost))
    rec = run(mpirun, ring, ["--block", str(4 * l2), *ring_args], work_dir / "ring-lost.jsonl", env_profile)
    expect_untiled(rec, "a block of four L2s where the profile says tiling did not pay", "pxq tune's best tile of")
    if rec["variant"]["tile_profile"] != str(profile):
        fail(f"the untiled run should name the profile it followed: {rec['variant']}")
    rec = run(mpirun, ring, ["--block", str(16 * l2), *ring_args], work_dir / "ring-lost-large.jsonl", env_profile)
    if (rec["variant"]["tile_source"], rec["variant"]["tile_bytes"]) != ("auto:profile", 16384):
        fail(f"a block longer than the profile's buffer should take its tile: {rec['variant']}")
    # Class S: CG's x and MG's grid fit in any cache of today; both have fused sweeps (--fuse auto).
    for name, exe in (("cg", cg), ("mg", mg)):
        rec = run(
            mpirun,
            exe,
            ["--class", "S", "--quiet", "--mode", "tiled", "--tile", "auto"],
            work_dir / f"{name}.jsonl",
            env,
        )
        expect_untiled(rec, f"{name} class S")
    check_is(mpirun, is_, work_dir, env)
    print(f"PASS: auto left off the buffers that fit (L2 {l2} B), tiled one of four L2s, the model before the profile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
