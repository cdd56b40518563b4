"""Runs as Extra-P's text input, for scaling models (`extrap --text FILE`): one region per
variant, the sweep's varying dimensions as its parameters, every repeat's time as a value.

Parameters (at most 4, Extra-P's limit for this format): `ranks`, `threads`, `nodes`, `tile`
(bytes, tiled runs), `n` (the problem's size: CG's rows, MG's and FT's grid points, IS's keys,
the ring's block bytes). A region is a variant with everything that is not a parameter fixed
(app, mode, backend and the other dimensions), so runs that differ in what is not modelled are
never pooled. Extra-P reads one DATA line per point for every region, so only the points every
exported region has are written (those of the variants most of them share); `Export.left_out`
says which variants and points were dropped.

Alongside the models, `crossings` names, for one parameter, where two variants of an app
trade places between measured points (only where the ranges of their repeats do not overlap):
what a model's crossing can then be checked against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pxq.core.errors import InputError

PARAMETERS = ("ranks", "threads", "nodes", "tile", "n")
MAX_PARAMETERS = 4


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def problem_size(rec: dict[str, Any]) -> float | None:
    size = rec.get("size") or {}
    if "na" in size:
        return float(size["na"])
    if all(k in size for k in ("nx", "ny", "nz")):
        return float(size["nx"] * size["ny"] * size["nz"])
    for key in ("total_keys", "block_bytes"):
        if key in size:
            return float(size[key])
    return None


def value(rec: dict[str, Any], param: str) -> float | None:
    lay, var = rec.get("layout") or {}, rec.get("variant") or {}
    got = {
        "ranks": lay.get("ranks"),
        "threads": lay.get("threads"),
        "nodes": lay.get("nodes"),
        "tile": var.get("tile_bytes") if var.get("mode") == "tiled" else None,
        "n": problem_size(rec),
    }[param]
    return None if got is None else float(got)


def _region(rec: dict[str, Any], params: list[str]) -> str:
    var = rec.get("variant") or {}
    words = [rec["app"], str(var.get("mode")), str(var.get("backend", "openmp"))]
    for p in PARAMETERS:
        v = value(rec, p)
        if p not in params and v is not None and not (p == "tile" and var.get("mode") != "tiled"):
            words.append(f"{p}={_num(v)}")
    return ".".join(words)


def choose(recs: list[dict[str, Any]], asked: str | None) -> list[str]:
    """The parameters: as asked (checked), else every dimension that takes two or more values."""
    if asked:
        params = [p.strip() for p in asked.split(",") if p.strip()]
        unknown = [p for p in params if p not in PARAMETERS]
        if unknown or not params or len(set(params)) != len(params):
            raise InputError(f"--params {asked}: give 1 to {MAX_PARAMETERS} of {', '.join(PARAMETERS)}, each once")
    else:
        params = [p for p in PARAMETERS if len({value(r, p) for r in recs} - {None}) >= 2]
    if not params:
        raise InputError("the runs vary in none of ranks, threads, nodes, tile, n: nothing to model (sweep one)")
    if len(params) > MAX_PARAMETERS:
        raise InputError(f"the runs vary in {', '.join(params)}: Extra-P's text input takes at most 4 (--params)")
    return params


@dataclass
class Export:
    params: list[str]
    points: list[tuple[float, ...]]
    regions: dict[str, dict[tuple[float, ...], list[float]]]
    left_out: list[str] = field(default_factory=list)

    def text(self) -> str:
        lines = [f"PARAMETER {' '.join(self.params)}", ""]
        if len(self.params) == 1:
            lines.append("POINTS " + " ".join(_num(p[0]) for p in self.points))
        else:
            lines.append("POINTS " + " ".join("(" + " ".join(_num(v) for v in p) + ")" for p in self.points))
        lines += ["", "METRIC time"]
        for name, by_point in self.regions.items():
            lines += ["", f"REGION {name}"]
            lines += ["DATA " + " ".join(f"{t:.9g}" for t in by_point[p]) for p in self.points]
        return "\n".join(lines) + "\n"


def build(recs: list[dict[str, Any]], asked: str | None = None) -> Export:
    """The export of the ok runs (their total times), over the points every region has."""
    ok = [r for r in recs if r.get("status") == "ok" and (r.get("time") or {}).get("total") is not None]
    if not ok:
        raise InputError("no completed runs to model")
    params = choose(ok, asked)
    regions: dict[str, dict[tuple[float, ...], list[float]]] = {}
    for rec in ok:
        point = tuple(value(rec, p) for p in params)
        if None in point:
            continue  # e.g. an untiled run when tile is a parameter
        regions.setdefault(_region(rec, params), {}).setdefault(point, []).append(float(rec["time"]["total"]))  # type: ignore[arg-type]
    if not regions:
        raise InputError(f"no run has a value for every parameter ({', '.join(params)})")
    # Extra-P wants every region at the same points: the point set of the variant that covers the
    # most regions (then the most points) among sets of 2 or more, and the regions that have it all.
    candidates = [set(by) for by in regions.values() if len(by) >= 2]
    if not candidates:
        raise InputError(
            f"no variant ran at 2 or more points of ({', '.join(params)}): nothing to fit; sweep more "
            "layouts or sizes, or choose --params"
        )

    def cover(points: set) -> tuple[int, int]:
        return sum(points <= set(by) for by in regions.values()), len(points)

    common = max(candidates, key=cover)
    points = sorted(common)
    kept = {name: {p: by[p] for p in points} for name, by in sorted(regions.items()) if common <= set(by)}
    notes = [
        f"{name} left out: it lacks some of the points the others share" for name in sorted(regions) if name not in kept
    ]
    notes += [
        f"point ({', '.join(_num(v) for v in p)}) left out: not every variant ran it"
        for p in sorted({p for by in regions.values() for p in by} - common)
    ]
    return Export(params, points, kept, notes)


def crossings(export: Export) -> list[str]:
    """Where two variants of one app trade places along a single parameter: between two points
    where the ranges of their repeats do not overlap, the earlier ordered one way, the later the other."""
    if len(export.params) != 1:
        return []
    out = []
    names = list(export.regions)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if a.split(".")[0] != b.split(".")[0]:
                continue
            # Between the last point where one was clearly faster and the next where the other was
            # (points where noise cannot order them lie in between).
            clear = [(p[0], s) for p in export.points if (s := _order(export.regions[a][p], export.regions[b][p]))]
            for (lo, before), (hi, after) in zip(clear, clear[1:]):
                if before != after:
                    first = a if before < 0 else b
                    out.append(
                        f"{a} and {b} cross between {export.params[0]}={_num(lo)} and {_num(hi)}: {first} faster below"
                    )
    return out


def _order(xs: list[float], ys: list[float]) -> int:
    """-1 when xs is faster, 1 when ys is, 0 when their ranges overlap (noise cannot order them)."""
    if max(xs) < min(ys):
        return -1
    if max(ys) < min(xs):
        return 1
    return 0


def few_points(export: Export, wanted: int = 5) -> list[str]:
    """A warning per parameter measured at fewer points than a model needs to tell laws apart."""
    out = []
    for i, p in enumerate(export.params):
        n = len({point[i] for point in export.points})
        if n < wanted:
            out.append(
                f"warning: {p} has {n} point(s); Extra-P needs {wanted} or more to tell one law from another "
                f"(with fewer, a model is a guess): sweep more values of {p}"
            )
    return out
