"""Probe, profile and study records as tables of plain values, so that `pxq report --format
csv|json|markdown` exports them as it exports runs: one row per measured point (a message size
of a channel, a rank pair, a memory stride, a core count, a profile's sender, receiver and size
bin, a study's row), each naming the record it came from."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from pxq.analysis.messages import rankpair_map
from pxq.core import outputs, schemas
from pxq.core.escape import csv_cell, md

Rows = list[dict[str, Any]]


def _origin(rec: dict[str, Any]) -> dict[str, Any]:
    ctx, driver = rec.get("context", {}), rec.get("driver", {})
    return {
        "record": rec.get("study") and f"study-{rec['study']}" or rec.get("app", "?"),
        "layout": driver.get("layout") or "",
        "host": ctx.get("host", ""),
        "date": ctx.get("date", ""),
    }


def _osu(rec: dict[str, Any]) -> Rows:
    return [{"test": rec["osu"]["test"], **row} for row in rec["osu"]["rows"]]


def _pingpong(rec: dict[str, Any]) -> Rows:
    out = []
    for ch in rec.get("channels", []):
        bandwidth = {p["bytes"]: p for p in ch.get("bandwidth", [])}
        for lat in ch.get("latency", []):
            bw = bandwidth.get(lat["bytes"], {})
            out.append(
                {
                    "channel": ch["channel"],
                    "detail": ch.get("detail", ""),
                    "pair": "-".join(str(r) for r in ch.get("pair", [])),
                    "bytes": lat["bytes"],
                    "latency_median_us": lat["median_us"],
                    "latency_min_us": lat["min_us"],
                    "latency_max_us": lat["max_us"],
                    "bandwidth_median_gbs": bw.get("median_gbs"),
                    "bandwidth_min_gbs": bw.get("min_gbs"),
                    "bandwidth_max_gbs": bw.get("max_gbs"),
                }
            )
    return out


def _rankpairs(rec: dict[str, Any]) -> Rows:
    return [{"from_rank": i, "to_rank": j, "gbs": v} for i, j, v in rankpair_map.timed_pairs(rec)]


def _collective(rec: dict[str, Any]) -> Rows:
    s, size = rec["stats"], rec["size"]
    return [
        {
            "op": size["op"],
            "bytes": size["bytes"],
            "calls": size["calls"],
            **{f"{k}_s": s[k] for k in ("median", "p90", "p95", "p99", "max") if k in s},
            "tail_fraction": s.get("tail_fraction"),
            "tail_share": s.get("tail_share"),
            "clusters": len(s.get("clusters", [])),
        }
    ]


def _stride(rec: dict[str, Any]) -> Rows:
    return [
        {"array_bytes": p["bytes"], "stride": p["stride"], "ns": p["ns"], "contention": p.get("contention")}
        for p in rec.get("points", [])
    ]


def _bandwidth(rec: dict[str, Any]) -> Rows:
    return [{"kernel": k["kernel"], **row} for k in rec.get("kernels", []) for row in k.get("rows", [])]


def _profile(rec: dict[str, Any]) -> Rows:
    columns = rec.get("columns", ["src", "dst", "bin", "count", "bytes"])
    uppers = rec.get("bins", {}).get("upper_bytes", [])
    out = []
    for kind, cells in (("p2p", rec.get("p2p", [])), ("collective_model", rec.get("collective_model", []))):
        for cell in cells:
            row = dict(zip(columns, cell))
            b = row.get("bin")
            row["bin_upper_bytes"] = uppers[b] if isinstance(b, int) and 0 <= b < len(uppers) else None
            out.append({"traffic": kind, **row})
    return out


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """Nested objects one level down as dotted columns (bytes.inter_node); deeper ones as JSON."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = json.dumps(v2) if isinstance(v2, dict | list) else v2
        else:
            out[k] = json.dumps(v) if isinstance(v, list) else v
    return out


def _study(rec: dict[str, Any]) -> Rows:
    return [_flat(row) for row in rec["rows"]]


TABLES: dict[str, Callable[[dict[str, Any]], Rows]] = {
    "probe-osu": _osu,
    "probe-pingpong": _pingpong,
    "probe-rankpairs": _rankpairs,
    "probe-collective": _collective,
    "probe-stride": _stride,
    "probe-bandwidth": _bandwidth,
}


def rows_of(rec: dict[str, Any]) -> Rows:
    """A probe's, profile's or study's table (empty for anything else)."""
    kind = schemas.kind_of(rec)
    table: Callable[[dict[str, Any]], list[dict[str, Any]]]
    if kind == "study":
        table = _study
    elif kind == "profile":
        table = _profile
    else:
        table = TABLES.get(rec.get("app", ""), lambda r: [])
    origin = _origin(rec)
    return [{**origin, **row} for row in table(rec)]


def export(recs: Iterable[dict[str, Any]], fmt: str) -> tuple[str, int]:
    """Every record's rows as csv, json (a list of objects) or markdown; the columns are the
    union of the rows' in the order first met. Returns the text and the row count."""
    rows = [row for rec in recs for row in rows_of(rec)]
    names = list(dict.fromkeys(k for row in rows for k in row))
    if fmt == "json":
        return outputs.dumps(outputs.finite(rows), indent=1) + "\n", len(rows)
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n", restval="")
        writer.writerow({n: csv_cell(n) for n in names})
        writer.writerows(
            {k: "" if v is None else (csv_cell(v) if isinstance(v, str) else v) for k, v in r.items()} for r in rows
        )
        return buf.getvalue(), len(rows)

    def cell(v: Any) -> str:
        return "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else md(str(v)))

    lines = ["| " + " | ".join(md(n) for n in names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(cell(r.get(n)) for n in names) + " |" for r in rows]
    return "\n".join(lines) + "\n", len(rows)
