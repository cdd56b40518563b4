"""Experiments in a file: `pxq sweep --file EXPERIMENT.toml`.

A TOML file names what a `pxq sweep` command line would: the app, its class and arguments, the
layouts, modes, tiles, threads, backends and repeats, and in [launch] and [batch] the launch and
batch options. It is checked against a JSON Schema (the message names the file, the line and
the fix), then applied to the sweep's options, so the file and the command line it stands for
run the same sweep. Each run's record carries the file's name, its SHA-256 and its text
(driver.experiment), so `pxq report --group-by driver.experiment.name` shows which experiment a
row came from, and `--resume` with the same file carries on where it stopped.

    app = "ring"
    layouts = ["1x2", "1x1x2"]
    modes = ["flat", "tiled", "hybrid"]
    repeat = 3
    app_args = ["--block", "64M"]
    [launch]
    timeout = 300
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path
from typing import Any

from pxq.core import bounds, door, paths
from pxq.core.errors import InputError
from pxq.launch import launchers

MAX_TEXT = 64 << 10  # bytes of the file kept in every record

_STRINGS = {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["app"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "the experiment's name (default: the file's)"},
        "description": {"type": "string"},
        "app": {"type": "string", "minLength": 1},
        "class": {"type": "string", "minLength": 1},
        "layouts": _STRINGS,
        "modes": _STRINGS,
        "tiles": _STRINGS,
        "threads": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "integer", "minimum": 1, "maximum": bounds.MAX_THREADS},
        },
        "backends": _STRINGS,
        "repeat": {"type": "integer", "minimum": 1, "maximum": bounds.MAX_REPEAT},
        "fuse": {"enum": ["auto", "on", "off"]},
        "precision": {"type": "number", "minimum": 0.001, "maximum": 0.5, "description": "a settled sweep"},
        "budget": {"type": "string", "minLength": 1, "description": "with precision: e.g. '5m'"},
        "pairs": {"enum": ["baseline", "all"]},
        "max_blocks": {"type": "integer", "minimum": 4, "maximum": 1000},
        "results": {"type": "string", "minLength": 1},
        "app_args": {"type": "array", "items": {"type": "string"}},
        "launch": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "alloc": {"enum": ["block", "cyclic"]},
                "placement": {"enum": ["packed", "spread", "custom"]},
                "cores": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": bounds.MAX_THREADS}},
                "launcher": {"enum": list(launchers.ORDER)},
                "hostfile": {"type": "string", "minLength": 1},
                "oversubscribe": {"type": "boolean"},
                "timeout": {"type": "number", "minimum": bounds.MIN_TIMEOUT, "maximum": bounds.MAX_TIMEOUT},
                "network": {"type": "string", "minLength": 1},
                "counters": {"enum": ["hw", "sim", "sim-llc"]},
            },
        },
        "batch": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "time": {"type": "string", "minLength": 1},
                "account": {"type": "string", "minLength": 1},
                "partition": {"type": "string", "minLength": 1},
                "exclusive": {"type": "boolean"},
                "sbatch": {"type": "array", "items": {"type": "string", "minLength": 1}},
            },
        },
    },
}

# Key in the file -> the sweep option's destination, and how a value becomes the option's.
_JOINED = ("layouts", "modes", "tiles", "backends")
_DEST = {"class": "problem_class", "cores": "placement_cores"}


def _line_of(text: str, path: list[Any]) -> int | None:
    """The line that sets the last key of `path` (within its table, when it has one)."""
    keys = [p for p in path if isinstance(p, str)]
    if not keys:
        return None
    table = keys[0] if len(keys) > 1 else None
    inside = table is None
    for i, line in enumerate(text.splitlines(), 1):
        head = re.match(r"\s*\[([^\]]+)\]\s*(#.*)?$", line)
        if head:
            inside = head.group(1).strip() == table
            continue
        if inside and re.match(rf"\s*{re.escape(keys[-1])}\s*=", line):
            return i
    return None


def load(path: Path) -> tuple[dict[str, Any], str]:
    """The file's table and text, checked: exit 2 naming the line on a malformed file."""
    import jsonschema

    fix = "an experiment is a TOML file of a few lines (docs/EXPERIMENTS.md)"
    try:
        data, text = door.toml_doc(path, "--file", fix)
    except FileNotFoundError:
        raise InputError(
            f"--file {path}: no such file (an experiment is a TOML file; see docs/EXPERIMENTS.md)"
        ) from None
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        keys = list(err.absolute_path)
        if err.validator == "additionalProperties":  # the line of the first unexpected key
            keys += [k for k in err.instance if k not in err.schema.get("properties", {})][:1]
        line = _line_of(text, keys)
        at = f"{path}:{line}" if line else str(path)
        if err.validator == "additionalProperties":
            allowed = ", ".join(sorted(err.schema.get("properties", {})))
            raise InputError(f"{at}: {err.message}; the keys here are: {allowed}")
        raise InputError(f"{at}: {where}: {err.message}")
    return data, text


def apply(args: argparse.Namespace, app_args: list[str], defaults: argparse.Namespace) -> list[str]:
    """Sets the sweep's options from args.file's experiment and returns the app's arguments.
    An option given both on the command line and in the file is refused (exit 2)."""
    path = Path(args.file)
    data, text = load(path)
    if args.app is not None:
        raise InputError(f"give the app in {path} or on the command line, not both (the file says {data['app']!r})")
    if app_args and data.get("app_args"):
        raise InputError(f"app arguments both after -- and in {path}'s app_args: give them in one place")
    values: dict[str, Any] = {"app": data["app"]}
    for key, value in {**data, **data.get("launch", {}), **data.get("batch", {})}.items():
        if key in ("name", "description", "app", "app_args", "launch", "batch"):
            continue
        dest = _DEST.get(key, key)
        if key in _JOINED or key in ("threads", "cores"):
            value = ",".join(str(v) for v in value)
        elif key == "results":
            if args.results is not None:
                continue  # the command line redirects the file's results, as PXQ_RESULTS_DIR does
            value = file_results(value)
        if getattr(args, dest, None) != getattr(defaults, dest, None):
            raise InputError(f"--{key.replace('_', '-')} is given on the command line and in {path}: keep one")
        values[dest] = value
    for dest, value in values.items():
        setattr(args, dest, value)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    args.experiment = {
        "name": data.get("name", path.stem),
        "file": str(path),
        "sha256": digest,
        "text": text if len(text.encode("utf-8")) <= MAX_TEXT else None,
    }
    return list(data.get("app_args", [])) or app_args


def file_results(value: str) -> Path:
    """An experiment file's `results`: an absolute path as given; a relative one names a file in
    the results folder (PXQ_RESULTS_DIR, default results/), a leading `results/` being that
    folder, so the same file writes where the user's results go. The folder is made."""
    given = Path(value)
    if given.is_absolute():
        return given
    parts = given.parts[1:] if given.parts[:1] == ("results",) else given.parts
    if not parts:
        raise InputError(f"results = {value!r} names a folder: give a file name such as {value.rstrip('/')}/run.jsonl")
    path = paths.results_dir().joinpath(*parts)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create {path.parent} ({e.strerror}): set PXQ_RESULTS_DIR or give --results") from None
    return path


IDENTITY_KEYS: dict[str, type | tuple[type, ...]] = {"name": str, "file": str, "sha256": str, "text": (str, type(None))}


def identity(text: str) -> dict[str, Any]:
    """The experiment's identity as a job of `--submit` carries it (driver.experiment's JSON),
    checked: the record gets exactly what a run from the file would give it."""
    got, why = door.parse_json(text.encode("utf-8", errors="replace"), door.SMALL)
    if why is not None:
        raise InputError(f"--experiment-identity: {why}; it is written by pxq sweep --file --submit")
    if not isinstance(got, dict) or set(got) != set(IDENTITY_KEYS):
        raise InputError(f"--experiment-identity: give an object with exactly {', '.join(IDENTITY_KEYS)}")
    for key, kind in IDENTITY_KEYS.items():
        if not isinstance(got[key], kind):
            raise InputError(f"--experiment-identity: '{key}' has the wrong type")
    if not re.fullmatch(r"[0-9a-f]{64}", got["sha256"]):
        raise InputError("--experiment-identity: 'sha256' is not a SHA-256 in hex")
    return got
