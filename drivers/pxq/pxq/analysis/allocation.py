"""The allocation study's verdicts on bytes (block against cyclic on a machine model), shared by
the allocation and placement studies."""

from __future__ import annotations

from typing import Any

from pxq.analysis import findings, msgdist
from pxq.analysis.findings import Finding
from pxq.core.errors import InputError
from pxq.core.layout import format_volume


def check_ranks(ranks: int, model: msgdist.Model) -> None:
    if ranks < 2:
        raise InputError(f"--ranks {ranks}: use at least 2")
    if ranks > model.slots:
        raise InputError(
            f"model {model} has {model.slots} cores for {ranks} ranks: use a model with at least {ranks} cores"
        )


def byte_findings(app: str, rows: list[dict[str, Any]]) -> list[Finding]:
    """The parts of the paper's allocation findings that bytes on a model can test: the byte
    parts; the time and network-time parts need timed runs on real nodes (study placement)."""
    block, cyclic = (next(r for r in rows if r["alloc"] == a) for a in ("block", "cyclic"))
    b, c = block["bytes"]["inter_node"], cyclic["bytes"]["inter_node"]
    here = f"inter-node bytes block {format_volume(b)}, cyclic {format_volume(c)}"
    ratio = b / c if c else float("inf")
    here = f"{here} ({ratio:.2f}x)"
    timed = (
        "counted on a machine model, no time measured: pxq study placement on a cluster (--hostfile or Slurm) times it"
    )
    same = (0.9 <= ratio <= 1.1, "more than 10% apart", "within 10% (the cause the paper names, not its claim)")
    rules = {  # app: (finding, holds, why not, why, the time parts bytes cannot test)
        "cg": ("cg", ratio <= 0.6, "block more than 0.6x cyclic's bytes", "block at most 0.6x cyclic", ("time",)),
        "mg": (
            "mg",
            ratio > 1.0,
            "cyclic moves no fewer bytes than block",
            "cyclic moves fewer",
            ("time", "network_time"),
        ),
        "ft": ("ft_is", *same, ("time", "network_time")),
        "is": ("ft_is", *same, ("time",)),
    }
    if app not in rules:
        return []
    name, ok, why_not, why_ok, timed_parts = rules[app]
    out = [findings.held(f"allocation/{name}/bytes", here, ok, why_not, why_ok)]
    return out + [findings.untestable(f"allocation/{name}/{p}", timed) for p in timed_parts]
