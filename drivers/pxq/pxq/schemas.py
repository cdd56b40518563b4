"""The record schemas (schemas/*.schema.json, JSON Schema 2020-12) and `pxq validate`.

Every record names its kind ("run", "probe", "profile", "tile-profile", "study") and the
version of that kind's schema ("schema": 2). Version 1 records, written before "kind"
existed, are still read by every command; `kind_of` tells their kind from their app, and
`validate` reports them as version 1 rather than checking them against version 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# schemas/ in the checkout, reached through the package's data/schemas link so that an
# installed driver (pip install .) carries them too.
SCHEMA_DIR = Path(__file__).resolve().parent / "data" / "schemas"
VERSION = 2
KINDS = ("run", "probe", "profile", "tile-profile", "study")


def kind_for_app(app: str) -> str:
    """The kind of what an app writes: its probes "probe", the profiler "profile", proxies "run"
    (the rule of record_kind in run_record.hpp)."""
    if app == "msgprof":
        return "profile"
    return "probe" if app.startswith("probe-") else "run"


def kind_of(rec: dict[str, Any]) -> str | None:
    """The record's kind, also for version 1 records; None for what is not a pxq record."""
    if not isinstance(rec, dict):
        return None
    if isinstance(rec.get("kind"), str):
        return rec["kind"]
    if rec.get("schema") == "pxq-tile-profile/1":
        return "tile-profile"
    if rec.get("schema") != 1 or not isinstance(rec.get("app"), str):
        return None
    return kind_for_app(rec["app"])


@cache
def _validators() -> dict[str, Any]:
    import jsonschema
    from referencing import Registry, Resource

    loaded = {p.name.removesuffix(".schema.json"): json.loads(p.read_text()) for p in SCHEMA_DIR.glob("*.schema.json")}
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in loaded.values())
    out = {}
    for kind in KINDS:
        jsonschema.Draft202012Validator.check_schema(loaded[kind])
        out[kind] = jsonschema.Draft202012Validator(loaded[kind], registry=registry)
    return out


@dataclass
class Problem:
    where: str  # "file:line"
    kind: str | None
    message: str


def problems(rec: Any, where: str) -> list[Problem]:
    """What is wrong with one record against its kind's schema (empty when it is valid)."""
    kind = kind_of(rec)
    if kind is None:
        return [Problem(where, None, 'not a pxq record (no "kind" and no version 1 "schema")')]
    if kind not in KINDS:
        return [Problem(where, kind, f'unknown kind "{kind}" (pxq writes {", ".join(KINDS)})')]
    if rec.get("schema") != VERSION:
        return []  # version 1: read, not checked against version 2
    errors = sorted(_validators()[kind].iter_errors(rec), key=lambda e: list(e.absolute_path))
    return [Problem(where, kind, f"{'/'.join(map(str, e.absolute_path)) or '(record)'}: {e.message}") for e in errors]


def load(path: Path) -> list[tuple[str, Any]]:
    """(where, record) for a JSON-lines file, or for one JSON document (a tile profile)."""
    text = path.read_text(errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" not in stripped.rstrip():
        try:
            return [(f"{path}", json.loads(text))]
        except ValueError:
            pass  # one line that is not whole: decoded line by line below
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}:{number}", json.loads(line)))
        except ValueError as e:
            out.append((f"{path}:{number}", e))
    return out
