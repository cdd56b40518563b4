"""Extra-P reads pxq's export of a sweep (`pxq report --format extrap`) and fits, from the
repeats, the laws the runs were made from: flat time growing linearly with the ranks, tiled
time nearly flat; pxq names the crossing Extra-P's models imply."""

from __future__ import annotations

import importlib.util
import json
import re
import sys

from conftest import ROOT, eco_env, eco_tool, pxq, run

# The driver's own test of the export makes the runs (same file name as this one: loaded by path).
_spec = importlib.util.spec_from_file_location("pxq_export_test", ROOT / "tests" / "python" / "test_extrap.py")
_export_test = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_export_test)
law_runs = _export_test.law_runs

FIT = """
import json, sys
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator
exp = TextFileReader().read_experiment(sys.argv[1])
ModelGenerator(exp).model_all()
models = exp.modelers[0].models
out = {}
for (callpath, metric), model in models.items():
    f = model.hypothesis.function
    out[callpath.name] = {"text": f.to_string(*exp.parameters), "at": {p: f.evaluate(p) for p in (1, 4, 8, 16, 32)}}
print(json.dumps(out))
"""


def test_extrap_fits_the_laws_of_an_exported_sweep(tmp_path):
    results = tmp_path / "sweep.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in law_runs()))
    out = tmp_path / "model.txt"
    export = pxq(["report", str(results), "--format", "extrap", "--out", str(out)], tmp_path)
    assert export.returncode == 0, export.stderr
    assert "cross between ranks=4 and 8" in export.stdout
    cli = run([str(eco_tool("extrap")), "--text", str(out)], cwd=tmp_path, env=eco_env(tmp_path))
    assert cli.returncode == 0 and "Model:" in cli.stdout, cli.stderr[-3000:]
    proc = run([str(eco_tool("python")), "-c", FIT, str(out)], cwd=tmp_path, env=eco_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    models = json.loads(proc.stdout.strip().splitlines()[-1])
    flat = next(m for name, m in models.items() if ".flat." in name)
    tiled = next(m for name, m in models.items() if ".tiled." in name)
    # flat: 1 + 0.5 p; tiled: 3.2 + 0.01 p (both within the 1% the repeats wobble)
    assert re.search(r"ranks\^\(1\)", flat["text"]), flat["text"]
    for p, want in ((1, 1.5), (16, 9.0), (32, 17.0)):
        assert abs(flat["at"][str(p)] - want) <= 0.03 * want, (p, flat)
    for p, want in ((1, 3.21), (16, 3.36)):
        assert abs(tiled["at"][str(p)] - want) <= 0.03 * want, (p, tiled)
    # The models cross where the measured repeats did: tiled slower at 4 ranks, faster at 8.
    assert tiled["at"]["4"] > flat["at"]["4"] and tiled["at"]["8"] < flat["at"]["8"]


def test_pxq_reports_extrap_models_fit_quality_and_where_they_cross(tmp_path):
    results = tmp_path / "sweep.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in law_runs()))
    out = tmp_path / "model.txt"
    env_cols = {"COLUMNS": "400"}  # one line per model
    proc = run(
        [sys.executable, "-m", "pxq", "report", str(results), "--format", "extrap", "--out", str(out), "--model"],
        cwd=tmp_path,
        env=eco_env(tmp_path, PYTHONPATH=str(ROOT / "drivers" / "pxq"), **env_cols),
    )
    assert proc.returncode == 0, proc.stderr
    flat = next(line for line in proc.stdout.splitlines() if ".flat." in line and "time =" in line)
    law = r"time = 1 \+ 0\.5 \* ranks\^\(1\)  \(SMAPE \d+\.\d%, adjusted R\^2 (?:0\.9\d\d|1\.000)\)"
    assert re.search(law, flat), flat
    cross = re.search(r"the models of \S+ and \S+ cross at ranks=([\d.]+)", proc.stdout)
    assert cross and 4 < float(cross.group(1)) < 8, proc.stdout  # 1 + 0.5 p = 3.2 + 0.01 p at p = 4.49
