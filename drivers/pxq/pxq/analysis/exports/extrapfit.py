"""Extra-P's models of an exported sweep (``pxq report --format extrap --model``): the model
Extra-P's default modeler fits to each variant, its fit quality (SMAPE, adjusted R^2), and, on
one parameter, where two variants' models cross inside the measured range.

The extrap package (PyPI) is optional and wants numpy 1.x. This module runs wherever it is
importable: in pxq's own environment when it is there, otherwise in .deps/ecosystem (``./pxq
setup --ecosystem``) as ``python -m pxq.analysis.exports.extrapfit EXPORT.txt``."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.core.paths import python_with

INSTALL_HINT = (
    "--model fits with Extra-P, which is not installed: ./pxq setup --ecosystem installs it "
    "(the export itself needs nothing: drop --model and run extrap --text FILE yourself)"
)
GRID = 400  # points per measured range at which two models are compared
MIN_POINTS = 5  # Extra-P's guidance: a model (a constant and a term) wants five values of each parameter


def interpreter() -> str | None:
    """A Python that can import extrap: this one, or the ecosystem environment's; None if neither."""
    return python_with("extrap")


def fit(path: Path) -> dict[str, Any]:
    """Extra-P's model of every region in the text file: its formula, fit quality, and (on one
    parameter) its values on a grid over the measured range."""
    from extrap.fileio.file_reader.text_file_reader import TextFileReader  # the optional package
    from extrap.modelers.model_generator import ModelGenerator

    exp = TextFileReader().read_experiment(str(path))
    ModelGenerator(exp).model_all()
    names = [str(p) for p in exp.parameters]
    xs = sorted({c[0] for c in exp.coordinates}) if len(names) == 1 else []
    grid = [xs[0] + (xs[-1] - xs[0]) * k / (GRID - 1) for k in range(GRID)] if len(xs) >= 2 else []
    per_param = [len({c[k] for c in exp.coordinates}) for k in range(len(names))]
    out: dict[str, Any] = {"params": names, "grid": grid, "models": {}, "values_per_param": per_param}
    for (callpath, _metric), model in exp.modelers[0].models.items():
        h = model.hypothesis
        out["models"][callpath.name] = {
            "text": h.function.to_string(*exp.parameters),
            "smape": float(h.SMAPE),
            "ar2": float(h.AR2),
            "values": [float(h.function.evaluate(x)) for x in grid],
        }
    return out


def run_fit(path: Path) -> dict[str, Any]:
    """fit(path), in this interpreter or the ecosystem's; InputError naming the fix otherwise."""
    python = interpreter()
    if python is None:
        raise InputError(INSTALL_HINT)
    if python == sys.executable:
        return fit(path)
    p = subprocess.run(
        [python, "-m", "pxq.analysis.exports.extrapfit", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[3]), "PATH": "/usr/bin:/bin"},
    )
    if p.returncode != 0:
        raise InputError(f"Extra-P could not model {path}: {(p.stderr or p.stdout).strip()[-400:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _num(v: float) -> str:
    return f"{v:.3g}"


def crossings(fitted: dict[str, Any]) -> list[str]:
    """Where the models of two variants of one app trade places inside the measured range."""
    grid, models = fitted["grid"], fitted["models"]
    if not grid:
        return []
    out = []
    names = sorted(models)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if a.split(".")[0] != b.split(".")[0]:
                continue
            diff = [x - y for x, y in zip(models[a]["values"], models[b]["values"])]
            for k in range(1, len(grid)):
                if diff[k - 1] == 0 or math.copysign(1, diff[k - 1]) != math.copysign(1, diff[k]):
                    x = grid[k - 1] + (grid[k] - grid[k - 1]) * diff[k - 1] / (diff[k - 1] - diff[k] or 1)
                    first = a if diff[k - 1] < 0 else b
                    out.append(
                        f"the models of {a} and {b} cross at {fitted['params'][0]}={_num(x)}: {first} faster below"
                    )
    return out


def formula(text: str) -> str:
    """Extra-P's formula with its coefficients to 4 significant digits (1.0000000000000009 -> 1)."""
    return re.sub(r"\d+\.\d+(?:e[-+]?\d+)?", lambda m: f"{float(m.group()):.4g}", text)


def lines(fitted: dict[str, Any]) -> list[str]:
    """The models as the report prints them, with their fit quality and crossings; none from
    fewer than MIN_POINTS values of a parameter (two points fit any term: neither the model nor
    a crossing would mean anything)."""
    few = [(p, n) for p, n in zip(fitted["params"], fitted.get("values_per_param") or []) if n < MIN_POINTS]
    if few:
        said = ", ".join(f"{n} value(s) of {p}" for p, n in few)
        return [
            f"not modelled: {said}; a model (a constant and a term) needs {MIN_POINTS} or more values of each "
            "parameter to mean anything: sweep more of them"
        ]
    out = []
    for name, m in sorted(fitted["models"].items()):
        out.append(f"{name}: time = {formula(m['text'])}  (SMAPE {m['smape']:.1f}%, adjusted R^2 {m['ar2']:.3f})")
    return out + crossings(fitted)


if __name__ == "__main__":  # python -m pxq.analysis.exports.extrapfit EXPORT.txt
    print(json.dumps(fit(Path(sys.argv[1]))))
