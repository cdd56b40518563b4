"""Every record kind's figure, redrawn from its record (`pxq report FILE`): the probes', the
message profile's and the studies'. Run records have the report's own bar chart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pxq.analysis.messages import msgdist
from pxq.core import schemas
from pxq.experiments import studykit as studies
from pxq.figures import collective, memory, pingpong
from pxq.probes import chanprobe, memprobe, osuprobe

Draw = Callable[[list[dict[str, Any]], Path], Path]


def _last(recs: list[dict[str, Any]]) -> dict[str, Any]:
    return recs[-1]


def _pingpong(recs: list[dict[str, Any]], path: Path) -> Path:
    return pingpong.pingpong(_last(recs), path)


def _rankpairs(recs: list[dict[str, Any]], path: Path) -> Path:
    return chanprobe.plot_rankpairs(_last(recs), path)


def _osu(recs: list[dict[str, Any]], path: Path) -> Path:
    return osuprobe.plot(recs, path)  # pxq's and an imported OSU run of the same test together


def _collective(recs: list[dict[str, Any]], path: Path) -> Path:
    return collective.plot(_last(recs), path)


def _stride(recs: list[dict[str, Any]], path: Path) -> Path:
    return memory.stride(_last(recs), path)


def _bandwidth(recs: list[dict[str, Any]], path: Path) -> Path:
    latest = {r["size"]["as"]: r for r in recs}  # the last run as ranks and as threads
    return memory.bandwidth(list(latest.values()), memprobe.KERNELS, path)


def _profile(recs: list[dict[str, Any]], path: Path) -> Path:
    return msgdist.plot_profile(_last(recs), path)


def _study(recs: list[dict[str, Any]], path: Path) -> Path:
    """Each study draws its figure from its study record alone (pxq.studies)."""
    rec = _last(recs)
    return studies.get(rec["study"]).plot(rec, path)


DRAW: dict[str, Draw] = {
    "probe-pingpong": _pingpong,
    "probe-rankpairs": _rankpairs,
    "probe-collective": _collective,
    "probe-osu": _osu,
    "probe-stride": _stride,
    "probe-bandwidth": _bandwidth,
    "profile": _profile,
    "study": _study,
}


def figure_key(rec: dict[str, Any]) -> str | None:
    """Which figure a record belongs to: its probe, "profile", "study"; None for runs and the rest."""
    kind = schemas.kind_of(rec)
    if kind == "probe" and rec.get("status") == "ok":
        return rec["app"] if rec["app"] in DRAW else None
    if kind in ("profile", "study") and rec.get("status") != "error":
        return kind
    return None


def redraw(recs: list[dict[str, Any]], path: Path) -> list[Path]:
    """One figure per record kind found (the latest record of each), at `path`, or at
    `path` with the kind in its name when there are several."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in recs:
        key = figure_key(rec)
        if key:
            groups.setdefault(key, []).append(rec)
    out = []
    for key, group in groups.items():
        target = path if len(groups) == 1 else path.with_name(f"{path.stem}-{key}{path.suffix}")
        out.append(DRAW[key](group, target))
    return out
