"""A lab's prediction, made before its runs and graded against `pxq advise`'s model: the
student's prediction.toml (read through pxq.core.door and checked against its schema before
anything is built: exit 2 naming the line), the model's answers to the same questions on this
machine's kept ceilings (each configuration declared by pxq's own proxy and priced at its
binding ceiling, as `pxq advise --no-prove` does: pxq.experiments.advising), and every answer
graded with the model's reasoning beside it and the lab's own measurement after it.

A prediction is graded, never required: a lab's grade (done, not done, not correct) stays the
code's; the prediction's score is its own line, record field and class-table column. The first
prediction a check graded is sealed in the copy (pxq.teaching.sealing) and graded from then on."""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
from rich.console import Console

from pxq.analysis.models import advice
from pxq.core import door, escape
from pxq.core.errors import InputError
from pxq.core.layout import Layout, format_bytes
from pxq.experiments import advising
from pxq.machine import ceilings as ceil
from pxq.teaching import sealing

FILE = "prediction.toml"
LEVELS = ("l1", "l2", "l3", "memory", "compute")
ORDERS = ("faster", "slower", "alike")
SECONDS_OFF = 0.25  # a predicted time within +-25% of the model's (or its ceilings' spread, if wider) agrees
ALIKE = 0.05  # two times within 5% are alike: the settled sweep's equivalence margin
FIX = "fill in the values the file's comments ask for (its questions are in the lab's guide, step 1)"


@dataclass(frozen=True)
class Plan:
    """What a lab asks predicted: pxq's APP run with ARGS (the lab program's own work), at one
    rank per core (1xN) untiled and with each tile of TILED (question table -> tile), and the
    same untiled as one rank's threads (1x1xN) against it; BLOCK the bytes one rank sweeps."""

    app: str
    args: tuple[str, ...]
    tiled: dict[str, str]  # question table -> its tile ("256K")
    block: int


def schema(plan: Plan) -> dict[str, Any]:
    config = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"binds": {"enum": ["", *LEVELS]}, "seconds": {"type": "number", "minimum": 0, "maximum": 1e6}},
    }
    compare = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "hybrid_vs_flat": {"enum": ["", *ORDERS]},
            "knee": {"anyOf": [{"enum": ["", "none"]}, {"type": "integer", "minimum": 1, "maximum": 1 << 20}]},
        },
    }
    tables = {"untiled": config, **{name: config for name in plan.tiled}, "compare": compare}
    return {"type": "object", "additionalProperties": False, "properties": tables}


def _lower(value: Any) -> Any:
    """Words compared without their case or spaces around them ("L2 " is "l2")."""
    if isinstance(value, dict):
        return {k: _lower(v) for k, v in value.items()}
    return value.strip().lower() if isinstance(value, str) else value


def read(path: Path, plan: Plan) -> dict[str, Any] | None:
    """The prediction (its tables, words lower-cased), or None where there is no file; a file
    that is not the prediction's shape is refused naming the line (exit 2)."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink():
        raise InputError(f"{path}: a link: the prediction is a plain file: replace the link with the file itself")
    data, text = door.toml_doc(path, "", FIX, 1 << 16)
    data = _lower(data)
    errors = sorted(jsonschema.Draft202012Validator(schema(plan)).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        err = errors[0]
        keys = [str(p) for p in err.absolute_path]
        if err.validator == "additionalProperties":  # the first unexpected key, named
            keys += [str(k) for k in err.instance if k not in err.schema.get("properties", {})][:1]
        where = escape.plain(".".join(keys)) or "(top level)"
        line = _line_of(text, keys)
        what = "an unexpected key" if err.validator == "additionalProperties" else "not an answer it takes"
        raise InputError(f"{path}{f':{line}' if line else ''}: {where}: {what}; {_allowed(err)}")
    for table, key in questions(plan):  # TOML's nan passes every bound a schema can state
        value = (data.get(table) or {}).get(key)
        if isinstance(value, float) and not math.isfinite(value):
            line = _line_of(text, [table, key])
            raise InputError(
                f"{path}{f':{line}' if line else ''}: {table}.{key}: not an answer it takes; it takes seconds, a "
                "number from 0 (not predicted yet) to 1e6"
            )
    return data


def _allowed(err: jsonschema.ValidationError) -> str:
    """What the key takes, in words (never the value given: it is the student's)."""
    if err.validator == "additionalProperties":
        return "the keys here are: " + ", ".join(sorted(err.schema.get("properties", {})))
    if err.validator == "enum":
        return "it takes one of: " + ", ".join(repr(v) for v in err.schema["enum"])
    if err.validator == "anyOf":
        return "it takes 'none' or a number of cores"
    last = list(err.absolute_path)[-1:] or [""]
    if err.validator in ("minimum", "maximum", "type") and last[0] == "seconds":
        return "it takes seconds, a number from 0 (not predicted yet) to 1e6"
    if err.validator == "type" and err.validator_value == "object":
        return "it is a table of answers ([name] on a line of its own, then key = value lines)"
    return FIX


def _line_of(text: str, keys: list[str]) -> int | None:
    """The line of the table or key named last in KEYS, when it appears once."""
    for key in reversed(keys):
        hits = [
            i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith((f"[{key}]", f"{key} ", key + "="))
        ]
        if len(hits) == 1:
            return hits[0]
    return None


def questions(plan: Plan) -> list[tuple[str, str]]:
    """(table, key) of every answer, in the file's order."""
    out = [(t, k) for t in ("untiled", *plan.tiled) for k in ("binds", "seconds")]
    return out + [("compare", "hybrid_vs_flat"), ("compare", "knee")]


def given(pred: dict[str, Any], table: str, key: str) -> Any:
    """The answer, or None where it is left blank ("" or 0 seconds)."""
    value = (pred.get(table) or {}).get(key)
    return None if value in ("", None) or (key == "seconds" and value == 0) else value


def model(plan: Plan, cores: int, c: dict[str, Any], console: Console) -> dict[str, dict[str, Any]]:
    """pxq advise's rows for the plan's configurations on ceilings C (nothing timed): "untiled",
    each tiled table and "hybrid"; a configuration the proxy refused is absent."""
    cands = {"untiled": advice.Candidate(Layout(1, cores))}
    cands |= {name: advice.Candidate(Layout(1, cores), tile) for name, tile in plan.tiled.items()}
    cands["hybrid"] = advice.Candidate(Layout(1, 1, cores))
    with tempfile.TemporaryDirectory(prefix="pxq-predict-") as tmp:
        declared = advising.declare_all(
            plan.app, list(cands.values()), list(plan.args), c, Path(tmp) / "r.jsonl", console
        )
    return {name: d.row for name, d in zip(cands, declared) if "predicted_s" in d.row}


def order_of(ratio: float) -> str:
    """A speed ratio in words: "faster" or "slower" beyond the ALIKE margin, else "alike"."""
    if abs(math.log(ratio)) <= math.log1p(ALIKE):
        return "alike"
    return "faster" if ratio > 1 else "slower"


def _seconds(row: dict[str, Any]) -> float:
    """The model's time of the compute the lab measures: its compute phase where declared."""
    return float((row.get("of_seconds") or {}).get("compute", row["predicted_s"]))


def _level(row: dict[str, Any]) -> str:
    """The binding ceiling's level ("gather (memory)" reads as memory)."""
    word = str(row["binding"]).lower()
    return next((lv for lv in LEVELS if lv in word), word)


def answer(plan: Plan, table: str, key: str, mine: Any, rows: dict, c: dict) -> dict[str, Any]:
    """One answer graded: the model's, whether they agree, and the model's reason."""
    if (table, key) == ("compare", "knee"):
        k = ceil.knee(c)
        theirs: Any = "none" if k is None else k
        return {"model": theirs, "agrees": mine == theirs, "why": ceil.knee_text(c)}
    if (table, key) == ("compare", "hybrid_vs_flat"):
        flat, hybrid = _seconds(rows["untiled"]), _seconds(rows["hybrid"])
        theirs = order_of(flat / hybrid)
        why = f"pxq advise: {rows['hybrid']['name']} {hybrid:.3g} s against {rows['untiled']['name']} {flat:.3g} s"
        return {"model": theirs, "agrees": mine == theirs, "why": why + f" ({flat / hybrid:.2f}x; within 5% is alike)"}
    row = rows[table]
    swept = min(int(row.get("tile_bytes") or 0) or plan.block, plan.block)
    reason = (
        f"pxq advise: {row['name']}, a pass sweeps {format_bytes(swept)} a rank: {row['binding']} @ {row['cores']} "
        f"busy cores binds it, {_seconds(row):.3g} s (+-{100 * row['error']:.0f}%)"
    )
    if key == "binds":
        return {"model": _level(row), "agrees": mine == _level(row), "why": reason}
    off = max(SECONDS_OFF, float(row["error"]))
    theirs = _seconds(row)
    return {
        "model": theirs,
        "agrees": abs(mine / theirs - 1) <= off,
        "why": f"{reason}; within {100 * off:.0f}% agrees",
    }


def grade(plan: Plan, pred: dict[str, Any], rows: dict[str, dict], c: dict[str, Any]) -> dict[str, Any]:
    """Every answer against the model's ROWS on ceilings C: the record's prediction block."""
    answers = []
    for table, key in questions(plan):
        mine = given(pred, table, key)
        item: dict[str, Any] = {"question": f"{table}.{key}", "yours": mine}
        needs = {"untiled", "hybrid"} if key == "hybrid_vs_flat" else set() if key == "knee" else {table}
        if mine is None:
            item.update(agrees=False, why="not predicted")
        elif not needs <= set(rows):
            item.update(agrees=None, why="pxq advise could not predict this configuration here")
        else:
            item.update(answer(plan, table, key, mine, rows, c))
        answers.append(item)
    judged = [a for a in answers if a["agrees"] is not None]
    return {
        "state": "graded",
        "agree": sum(1 for a in judged if a["agrees"]),
        "of": len(judged),
        "ceilings": {"cpu_model": c.get("cpu_model"), "date": c.get("date")},
        "answers": answers,
    }


def graded(
    plan: Plan,
    pred: dict[str, Any] | None,
    c: dict[str, Any] | None,
    cores: int,
    console: Console,
    first: sealing.First | None = None,
) -> dict[str, Any]:
    """The prediction block of a lab's grade: "none" (no file here), "not made" (every answer
    blank), "not graded" (no ceilings kept to grade against), or graded against the model. With
    a FIRST prediction sealed in the copy, that one is graded ("sealed": when), and a file
    changed since is scored beside it ("revised"); a seal that could not be read is named
    ("seal") and the file graded as it stands."""
    first = first or sealing.First()
    if first.answers is None or c is None:
        block = _as_it_stands(plan, pred, c, cores, console)
        return block | ({"seal": first.problem} if first.problem else {})
    rows = model(plan, cores, c, console)
    block = grade(plan, first.answers, rows, c) | {"sealed": first.sealed}
    if answers_of(plan, pred) != answers_of(plan, first.answers):
        made = any(v is not None for v in answers_of(plan, pred).values())
        now = grade(plan, pred, rows, c) if pred is not None and made else {"agree": 0, "of": len(questions(plan))}
        block["revised"] = {"agree": now["agree"], "of": now["of"]}
    return block


def _as_it_stands(
    plan: Plan, pred: dict[str, Any] | None, c: dict[str, Any] | None, cores: int, console: Console
) -> dict[str, Any]:
    if pred is None:
        return {"state": "none", "why": f"no {FILE} here (the student's copy holds one)"}
    if all(given(pred, t, k) is None for t, k in questions(plan)):
        return {"state": "not made", "why": f"every answer in {FILE} is blank: predict before your runs (step 1)"}
    if c is None:
        return {
            "state": "not graded",
            "why": "no ceilings are kept on this machine to grade against: ./pxq probe ceilings measures them "
            "(a few minutes, once)",
        }
    return grade(plan, pred, model(plan, cores, c, console), c)


def answers_of(plan: Plan, pred: dict[str, Any] | None) -> dict[str, Any]:
    """Every question's answer ("table.key": the value, None where blank or without a file)."""
    return {f"{t}.{k}": None if pred is None else given(pred, t, k) for t, k in questions(plan)}


def with_measured(block: dict[str, Any], measured: dict[str, float]) -> dict[str, Any]:
    """The lab's own medians beside the timed answers ("untiled.seconds": its measured seconds)."""
    for a in block.get("answers", []):
        if a["question"] in measured:
            a["measured"] = measured[a["question"]]
    return block


def lines(block: dict[str, Any]) -> list[str]:
    """The prediction's grade in words: a head line, then one line an answer."""
    if block["state"] != "graded":
        return [f"prediction: {block['state']}: {block['why']}"]
    c = block["ceilings"]
    out = [
        f"prediction ({FILE}): {block['agree']} of {block['of']} answers agree with pxq advise "
        f"(ceilings of {escape.plain(c.get('cpu_model'))}, {c.get('date')})"
    ]
    out += _seal_lines(block)
    for a in block["answers"]:
        said = "agrees" if a["agrees"] else "not predicted" if a["yours"] is None else "differs"
        if a["agrees"] is None:
            said = "not graded"
        mine = "-" if a["yours"] is None else escape.plain(a["yours"])
        model_said = "" if "model" not in a else f"; the model: {_shown(a['model'])}"
        seen = "" if "measured" not in a else f"; measured here: {a['measured']:.3g} s"
        out.append(f"  {a['question']} = {mine}: {said}{model_said}{seen} ({a['why']})")
    return out


def _seal_lines(block: dict[str, Any]) -> list[str]:
    """How the graded prediction stands to the first one sealed in the copy."""
    out = []
    if block.get("sealed_now"):
        out.append(f"  sealed now ({sealing.SEAL}): later checks grade these answers, as first made")
    elif block.get("sealed"):
        out.append(f"  the prediction as first graded, {block['sealed']} ({sealing.SEAL})")
    if "revised" in block:
        r = block["revised"]
        out.append(
            f"  {FILE} was changed after the model's answers were shown: as it stands it would agree on "
            f"{r['agree']} of {r['of']}, not graded (predict before the runs)"
        )
    if block.get("seal"):
        out.append(f"  seal: {escape.plain(block['seal'])}")
    return out


def _shown(value: Any) -> str:
    return f"{value:.3g} s" if isinstance(value, float) else str(value)
