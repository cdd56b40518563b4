"""Thicket reads pxq's Caliper export of a sweep: one profile per run, each phase's time as the
record has it, pxq's context (layout, variant, placement) as the profiles' metadata, and in the
tree Hatchet builds no parent smaller than its children."""

from __future__ import annotations

import json

from conftest import ROOT, eco_env, eco_tool, pxq, run

DATA = ROOT / "tests" / "python" / "data" / "figures" / "runs.jsonl"
READ = """
import glob, json, sys
import thicket as th
files = sorted(glob.glob(sys.argv[1] + "/*.json"))
tk = th.Thicket.from_caliper(files, disable_tqdm=True)
meta = tk.metadata.reset_index()
df = tk.dataframe.reset_index()
out = {
    "metadata": json.loads(meta.to_json(orient="records")),
    "rows": [
        {"profile": int(r["profile"]), "name": r["name"], "time": r["time"], "inc": r["time (inc)"]}
        for _, r in df.iterrows()
    ],
    "children": {n.frame["name"]: [c.frame["name"] for c in n.children] for n in tk.graph.traverse()},
}
print(json.dumps(out))
"""


def test_thicket_reads_an_exported_sweep_with_its_metadata(tmp_path):
    out = tmp_path / "cali"
    export = pxq(["report", str(DATA), "--format", "caliper", "--out", str(out)], tmp_path)
    assert export.returncode == 0, export.stderr
    proc = run([str(eco_tool("python")), "-c", READ, str(out)], cwd=tmp_path, env=eco_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    recs = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    done = [r for r in recs if r["status"] == "ok"]
    meta = got["metadata"]
    assert len(meta) == len(done)
    for rec in done:
        lay = rec["layout"]
        match = [
            m
            for m in meta
            if m["ranks"] == lay["ranks"] and m["mode"] == rec["variant"]["mode"] and m["threads"] == lay["threads"]
        ]
        assert len(match) == 1, (rec["variant"], lay)
        m = match[0]
        assert m["app"] == rec["app"] and m["layout"].startswith(f"{lay['nodes']}x{lay['ranks_per_node']}")
        assert m["placement"] and m["rank_pairs_same_l3"] == rec["placement_summary"]["rank_pairs_on_a_node"]["same_l3"]
        times = {r["name"]: r["time"] for r in got["rows"] if r["profile"] == m["profile"]}
        for phase, seconds in rec["time"].items():
            if phase not in ("total", "setup"):
                assert abs(times[phase] - seconds) <= 1e-12 * max(1.0, seconds), phase
        inclusive = {r["name"]: r["inc"] for r in got["rows"] if r["profile"] == m["profile"]}
        for parent, children in got["children"].items():
            below = sum(inclusive.get(c, 0.0) for c in children)
            assert inclusive[parent] >= below - 1e-12, (parent, inclusive[parent], below)
    # The data holds runs whose slowest-rank phases add up to more than their timed total: the
    # check above is then the export's own rule (the root holds their sum), not a coincidence.
    assert any(sum(v for k, v in r["time"].items() if k not in ("total", "setup")) > r["time"]["total"] for r in done)
