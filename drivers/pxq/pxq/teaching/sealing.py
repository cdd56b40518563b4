"""The first prediction a lab's check graded, kept in the student's copy (SEAL): a lab asks for a
prediction before the runs, and `pxq lab check` shows the model's answers beside the student's.
A prediction revised after that would grade what the check showed, not what the student
predicted, so the first one graded stands: later checks grade the sealed answers and say how the
file as it stands now would have scored ("revised after the model's answers were shown").

The seal is a plain JSON file that pxq writes once, beside prediction.toml (a ".pxq" name the
copy may hold), never over anything: a seal that is a link, too large, not JSON or not a
prediction's shape is named and left as it is, and the file as it stands is graded. It records
the student's own first answers for the teacher; it is not a defence against a student who edits
or deletes it (their folder is theirs), and `pxq lab grade` says when a copy has none."""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema

from pxq.core import door
from pxq.core.errors import InputError

SEAL = ".pxq-prediction.json"
LIMIT = 1 << 16  # bytes: a prediction's answers are a few hundred
FIX = "delete it to seal the prediction as it stands at the next check"


@dataclass(frozen=True)
class First:
    """The sealed prediction: its answers (prediction.toml's tables) and when it was first
    graded, or None (no seal, or one that could not be read: PROBLEM says why)."""

    answers: dict[str, Any] | None = None
    sealed: str | None = None
    problem: str = ""


def first(folder: Path, schema: dict[str, Any]) -> First:
    """The seal in FOLDER, read through the door and checked against the prediction's SCHEMA."""
    path = Path(folder) / SEAL
    if not path.exists() and not path.is_symlink():
        return First()
    if path.is_symlink() or not path.is_file():
        return First(problem=f"{path}: not a plain file: {FIX}")
    try:
        data = door.json_doc(path, "the first prediction's seal", FIX, LIMIT)
    except InputError as e:
        return First(problem=str(e))
    answers = data.get("answers") if isinstance(data, dict) else None
    sealed = data.get("sealed") if isinstance(data, dict) else None
    shaped = isinstance(answers, dict) and isinstance(sealed, str) and len(sealed) <= 64
    if not shaped or not jsonschema.Draft202012Validator(schema).is_valid(answers) or not _finite(answers):
        return First(problem=f"{path}: not the shape of a sealed prediction: {FIX}")
    return First(answers=answers, sealed=sealed)


def _finite(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return not (isinstance(value, float) and not math.isfinite(value))


def seal(folder: Path, answers: dict[str, Any]) -> tuple[str | None, str]:
    """Writes ANSWERS as FOLDER's seal when it has none: (the time sealed, "") or (None, why
    not). Whole or not at all (a temporary file linked into place), never over a file."""
    path = Path(folder) / SEAL
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = json.dumps({"sealed": now, "answers": answers}, indent=1, sort_keys=True) + "\n"
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pxq-seal-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)  # fails on anything already there: a seal is written once
    except FileExistsError:
        return None, f"{path} appeared meanwhile: left as it is"
    except OSError as e:
        return None, f"cannot write {path} ({e.strerror})"
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return now, ""
