"""The record schemas (schemas/*.schema.json, JSON Schema 2020-12) and `pxq validate`.

Every record names its kind ("run", "probe", "profile", "tile-profile", "study", "lab-grade",
"advice") and the
version of that kind's schema ("schema": 2). Version 1 records, written before "kind"
existed, are still read by every command; `kind_of` tells their kind from their app, and
each field they have is checked for the type version 2 gives it (the fields version 2
added are not asked of them). `problems` is what pxq.core.records' door checks every record by:
the schema, then what one field says of another that a schema cannot (a run's declared work,
`work_problems`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# schemas/ in the checkout, reached through the package's data/schemas link so that an
# installed driver (pip install .) carries them too.
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "data" / "schemas"
# The app registry as the binaries export it (core/registry.py keeps this copy equal to them):
# the apps' own choices give variant.<option> its values.
REGISTRY_SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "registry.json"
VERSION = 2
KINDS = ("run", "probe", "profile", "tile-profile", "study", "lab-grade", "advice")


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
def app_choices() -> dict[str, dict[str, Any]]:
    """Every app's own choice by option name ({"exchange": {"app": "ring", "values": [...],
    "default": "p2p", "what": ...}}), from the registry (miniapps/apps.def)."""
    reg = json.loads(REGISTRY_SNAPSHOT.read_text())
    return {c["name"]: dict(c, app=a["name"]) for a in reg["apps"] for c in a.get("choices", [])}


@cache
def access_kinds() -> list[str]:
    """The access kinds of the roofline's ceilings, from the registry (pxq/probes/kinds.hpp)."""
    return [k["name"] for k in json.loads(REGISTRY_SNAPSHOT.read_text())["access_kinds"]]


@cache
def _loaded() -> dict[str, Any]:
    """The schemas by kind, with the apps' choices as variant properties of the registry's values
    and the registry's access kinds as the values of a phase's kind."""
    loaded = {p.name.removesuffix(".schema.json"): json.loads(p.read_text()) for p in SCHEMA_DIR.glob("*.schema.json")}
    variant = loaded["common"]["$defs"]["variant"]["properties"]
    for name, c in app_choices().items():
        variant[name] = {"enum": c["values"], "description": f"{c['app']}: {c['what']} (--{name})"}
    phase = loaded["run"]["properties"]["work"]["additionalProperties"]["properties"]
    phase["kind"]["enum"] = ["stream", *access_kinds()]
    phase["also"]["properties"]["kind"]["enum"] = access_kinds()
    return loaded


@cache
def _validators() -> dict[str, Any]:
    import jsonschema
    from referencing import Registry, Resource

    loaded = _loaded()
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in loaded.values())
    out = {}
    for kind in KINDS:
        jsonschema.Draft202012Validator.check_schema(loaded[kind])
        out[kind] = jsonschema.Draft202012Validator(loaded[kind], registry=registry)
    return out


def _inline(node: Any, doc: dict[str, Any], by_id: dict[str, Any]) -> Any:
    """A schema with every $ref replaced by what it names (pxq's schemas have no cycles)."""
    if isinstance(node, list):
        return [_inline(x, doc, by_id) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        uri, _, fragment = node["$ref"].partition("#")
        target = by_id[uri] if uri else doc
        part: str
        for part in filter(None, fragment.split("/")):
            target = target[part]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        found = _inline(target, by_id[uri] if uri else doc, by_id)
        return {"allOf": [found, _inline(rest, doc, by_id)]} if rest else found
    return {k: _inline(v, doc, by_id) for k, v in node.items() if k not in ("$defs", "$id", "$schema")}


@cache
def _fast() -> dict[str, Callable[[Any], bool]]:
    """Each kind's quick yes: its schema compiled once, by jsonschema_rs (Rust, about 10x
    fastjsonschema's speed on a run record) or, where that cannot be installed, fastjsonschema.
    Only a record it does not pass goes to jsonschema, which decides and names every problem:
    the quick yes only ever saves time, never changes a verdict."""
    by_id = {s["$id"]: s for s in _loaded().values()}
    flat = {}
    for kind in KINDS:
        doc = by_id[f"urn:pxq:schema:{kind}:{VERSION}"]
        flat[kind] = {"$schema": "http://json-schema.org/draft-07/schema#", **_inline(doc, doc, by_id)}
    try:
        import jsonschema_rs
    except ImportError:
        return {kind: _fastjsonschema(schema) for kind, schema in flat.items()}
    return {kind: _rust(jsonschema_rs.Draft7Validator(schema)) for kind, schema in flat.items()}


def _rust(validator: Any) -> Callable[[Any], bool]:
    def valid(rec: Any) -> bool:
        try:
            return bool(validator.is_valid(rec))
        except (ValueError, OverflowError, TypeError):  # what it cannot convert (an integer past 64 bits)
            return False

    return valid


def _fastjsonschema(schema: dict[str, Any]) -> Callable[[Any], bool]:
    import fastjsonschema

    compiled = fastjsonschema.compile(schema)

    def valid(rec: Any) -> bool:
        try:
            compiled(rec)
            return True
        except fastjsonschema.JsonSchemaException:
            return False

    return valid


def _valid_fast(kind: str, rec: dict[str, Any]) -> bool:
    return _fast()[kind](rec)


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
    if rec.get("schema") == VERSION:
        if _valid_fast(kind, rec):
            return [Problem(where, kind, m) for m in work_problems(rec)] if kind == "run" else []
        errors = list(_validators()[kind].iter_errors(rec))
    elif kind == "tile-profile":
        return []  # version 1 tile profiles: pxq.analysis.models.tiles reads them by their own rules
    elif rec.get("schema") == 1 or (kind == "lab-grade" and "schema" not in rec):  # grades before their schema
        # Version 1: every field it has must have the type version 2 gives it; the fields
        # version 2 added are not asked for.
        errors = [
            e
            for e in _validators()[kind].iter_errors(dict(rec, kind=kind, schema=VERSION))
            if e.validator not in ("required", "const") or e.absolute_path
        ]
    else:
        return [Problem(where, kind, f"unknown schema version {rec.get('schema')!r} (pxq reads 1 and {VERSION})")]
    # The field that is wrong before what its being wrong made the record miss.
    errors.sort(key=lambda e: (not e.absolute_path, [str(p) for p in e.absolute_path]))
    return [Problem(where, kind, f"{'/'.join(map(str, e.absolute_path)) or '(record)'}: {e.message}") for e in errors]


# A sum over the ranks may round a hair below its largest term.
_ROUNDING = 1e-9


def work_problems(rec: dict[str, Any]) -> list[str]:
    """What a valid run record's declared work says against itself, which its schema cannot
    check: the largest rank's figure above the sum over the ranks, bytes at the tile's edges
    above the bytes from memory they are part of, those above the bytes at the cores, or more
    row starts than bytes (a row's start reads its pointer at least). A record like that would
    have pxq roofline price absurd work."""
    found: list[str] = []
    for name, w in (rec.get("work") or {}).items():
        top = w["rank_max"]
        for field in ("flops", "bytes", "memory_bytes", "edge_bytes", "row_visits"):
            if field in w and top.get(field, 0.0) > w[field] * (1 + _ROUNDING):
                found.append(
                    f"work/{name}/rank_max/{field}: {top[field]:g} is above the sum over the ranks ({w[field]:g})"
                )
        for part, whole in (("edge_bytes", "memory_bytes"), ("memory_bytes", "bytes"), ("row_visits", "bytes")):
            for where, figures in ((f"work/{name}", w), (f"work/{name}/rank_max", top)):
                if figures.get(part, 0.0) > figures.get(whole, 0.0) * (1 + _ROUNDING):
                    found.append(f"{where}/{part}: {figures[part]:g} is above {whole} ({figures.get(whole, 0.0):g})")
    return found
