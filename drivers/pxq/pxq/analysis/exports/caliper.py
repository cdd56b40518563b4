"""Runs as Caliper JSON profiles (cali-query's json-split form), one file per run: what Thicket
and Hatchet read (``Thicket.from_caliper``), so a sweep can be compared as an ensemble.

Each profile is a tree: the app at the root (its timed total), one child per phase (the
slowest rank's time, as the record keeps it), with the bytes and flops the proxy declared for
that phase where it did. Every fact that moves the numbers is the profile's metadata: the
layout, the variant, the machine, the experiment, and the placement (each rank's cores, and
how many rank pairs share a core, an L2, an L3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq.core import outputs, records

# "Node order": each node's place in the tree, which Thicket asks its reader to keep.
COLUMNS = ["path", "sum#time.duration", "inclusive#sum#time.duration", "bytes", "flops", "Node order"]
METADATA_FIELDS = {
    "app": ("app",),
    "status": ("status",),
    "class": ("size", "class"),
    "node_count": ("layout", "nodes"),  # not "nodes": that is the profile's tree
    "ranks": ("layout", "ranks"),
    "ranks_per_node": ("layout", "ranks_per_node"),
    "threads": ("layout", "threads"),
    "launcher": ("layout", "launcher"),
    "virtual_nodes": ("layout", "virtual_nodes"),
    "mode": ("variant", "mode"),
    "backend": ("variant", "backend"),
    "tile_bytes": ("variant", "tile_bytes"),
    "fused": ("variant", "fused"),
    "verified": ("verification", "passed"),
    "host": ("context", "host"),
    "cpu_model": ("context", "cpu_model"),
    "mpi_library": ("context", "mpi_library"),
    "compiler": ("context", "compiler"),
    "pxq_version": ("context", "pxq_version"),
    "date": ("context", "date"),
    "run_id": ("driver", "run_id"),
    "repeat": ("driver", "repeat"),
    "experiment": ("driver", "experiment", "name"),
    "mops_total": ("metrics", "mops_total"),
}


def _get(rec: dict[str, Any], keys: tuple[str, ...]) -> Any:
    value: Any = rec
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def placement_text(rec: dict[str, Any]) -> str:
    """Each rank's node and cores: "r0@n0:0 r1@n0:1" (threads' cores joined by commas)."""
    parts = []
    for p in rec.get("placement") or []:
        cpus = ",".join(str(t.get("cpu")) for t in p.get("threads") or [])
        parts.append(f"r{p.get('rank')}@n{p.get('node')}:{cpus}")
    return " ".join(parts)


def metadata(rec: dict[str, Any], source: str) -> dict[str, Any]:
    meta = {name: _get(rec, keys) for name, keys in METADATA_FIELDS.items()}
    lay = rec.get("layout") or {}
    if lay.get("nodes") and lay.get("ranks_per_node"):
        threads = lay.get("threads") or 1
        meta["layout"] = f"{lay['nodes']}x{lay['ranks_per_node']}" + (f"x{threads}" if threads > 1 else "")
    meta["placement"] = placement_text(rec)
    pairs = _get(rec, ("placement_summary", "rank_pairs_on_a_node")) or {}
    for key, count in pairs.items():
        meta[f"rank_pairs_{key}"] = count
    meta["placement_requested"] = _get(rec, ("placement_summary", "requested"))
    meta["source"] = source
    return {k: v for k, v in meta.items() if v is not None}


def profile(rec: dict[str, Any], source: str = "") -> dict[str, Any]:
    """One run's Caliper json-split profile: nodes, columns, data and the run's metadata."""
    times = rec.get("time") or {}
    work = rec.get("work") or {}
    total = float(times.get("total", 0.0))
    nodes: list[dict[str, Any]] = [{"label": rec["app"], "column": "path"}]
    data: list[list[Any]] = [[0, 0.0, total, 0.0, 0.0, 0]]
    for phase, seconds in times.items():
        if phase in records.NOT_PHASES or not isinstance(seconds, (int, float)):
            continue
        declared = work.get(phase) or {}
        nodes.append({"label": phase, "column": "path", "parent": 0})
        row = [len(nodes) - 1, float(seconds), float(seconds)]
        data.append(row + [float(declared.get("bytes", 0.0)), float(declared.get("flops", 0.0)), len(nodes) - 1])
    # The root's own (exclusive) time: the total less its phases. Each phase is its slowest
    # rank's, and different ranks can be slowest in different phases, so the phases can add up to
    # more than the timed total: the root's inclusive time is then their sum (a tree's children
    # never add up to more than their parent, as Hatchet reads it), and the metadata keeps the
    # measured total and by how much the phases exceed it.
    phases = sum(row[1] for row in data[1:])
    data[0][1] = max(0.0, total - phases)
    data[0][2] = max(total, phases)
    extra = {"total_s": total, "phases_over_total_s": max(0.0, phases - total)}
    return {
        "data": data,
        "columns": COLUMNS,
        "column_metadata": [{"is_value": False}] + [{"is_value": True}] * (len(COLUMNS) - 1),
        "nodes": nodes,
        **metadata(rec, source),
        **extra,
    }


def file_name(rec: dict[str, Any], index: int) -> str:
    run_id = str(_get(rec, ("driver", "run_id")) or index)
    return f"{index:04d}-{rec['app']}-{run_id[:12]}.json"


def write_folder(recs: list[tuple[dict[str, Any], str]], out: Path) -> int:
    """One profile per ok run into `out` (made if needed), each written whole; the count."""
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for index, (rec, source) in enumerate(recs):
        if rec.get("status") != "ok":
            continue
        outputs.write(out / file_name(rec, index), outputs.dumps(profile(rec, source), indent=1), "json", "--out")
        count += 1
    return count
