"""OTF2's own reader loads the archive `pxq run --trace FILE.otf2` writes: one location group
per rank, the phases and MPI calls of each rank's main thread as Enter/Leave pairs, the MPI
calls as MPI regions, as many per rank as the run's Chrome trace holds."""

from __future__ import annotations

import json

from conftest import eco_env, eco_tool, pxq, run

READ = """
import json, sys
import otf2
enters, leaves, mpi = {}, {}, {}
with otf2.reader.open(sys.argv[1]) as r:
    for location, event in r.events:
        key = location.group.name
        if isinstance(event, otf2.events.Enter):
            enters[key] = enters.get(key, 0) + 1
            if event.region.paradigm == otf2.Paradigm.MPI:
                mpi[key] = mpi.get(key, 0) + 1
        elif isinstance(event, otf2.events.Leave):
            leaves[key] = leaves.get(key, 0) + 1
print(json.dumps({"enters": enters, "leaves": leaves, "mpi": mpi}))
"""


def test_otf2_reads_a_traced_cg_run(tmp_path):
    res, archive = tmp_path / "cg.jsonl", tmp_path / "cg.otf2"
    p = pxq(
        ["run", "cg", "--layout", "1x2", "--results", str(res), "--trace", str(archive), "--", "--class", "S"], tmp_path
    )
    assert p.returncode == 0, p.stdout + p.stderr
    rec = json.loads(res.read_text().splitlines()[-1])
    t = rec["trace"]
    assert t["path"] == str(archive / "traces.otf2") and t["read_back"]["spans"] == t["read_back"]["of"] > 0
    proc = run([str(eco_tool("python")), "-c", READ, t["path"]], cwd=tmp_path, env=eco_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not (tmp_path / "cg.trace.json").exists()  # the Chrome twin is inside the archive, never beside it
    chrome = json.loads((archive / "timeline.trace.json").read_text())
    assert t["chrome_path"] == str(archive / "timeline.trace.json")
    for rank in (0, 1):
        group = next(g for g in got["enters"] if g.startswith(f"rank {rank} "))
        xs = [e for e in chrome["traceEvents"] if e["ph"] == "X" and e["pid"] == rank]
        assert got["enters"][group] == got["leaves"][group] == len(xs)
        assert got["mpi"][group] == sum(1 for e in xs if e["cat"] == "mpi") > 0
