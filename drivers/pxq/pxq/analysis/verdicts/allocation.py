"""The allocation study's verdicts on bytes (block against cyclic on a machine model) and on time
(block against cyclic timed on nodes with a network between them), shared by the allocation and
placement studies."""

from __future__ import annotations

from typing import Any

from pxq.analysis.messages import msgdist
from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.findings import Finding
from pxq.analysis.verdicts.paired import judge_rows
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
        "counted on a machine model, no time measured: this study times it on a cluster of this machine "
        "(pxq cluster up, or --network), pxq study placement on real nodes (--hostfile or Slurm)"
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


TIME_PARTS = {"cg": ("cg/time",), "mg": ("mg/time", "mg/network_time"), "ft": ("ft_is/time", "ft_is/network_time")}


def cluster_of(recs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cluster of this machine the runs went to (its record), if they did."""
    return next((r["driver"]["cluster"] for r in recs if (r.get("driver") or {}).get("cluster")), None)


def why_untimed(recs: list[dict[str, Any]], ranks: int, cores: int, real_nodes: bool) -> str | None:
    """Why the runs' times cannot test the paper's time claims here (None when they can). On a
    cluster of this machine they can, oversubscribed or not: its shaped links are what the
    allocation changes (the findings name the cluster and the cores its ranks share)."""
    if any((r.get("layout") or {}).get("virtual_nodes") for r in recs):
        return "virtual nodes of one host talk TCP over loopback: no network whose time the allocation changes"
    if ranks > cores and not real_nodes and cluster_of(recs) is None:
        return f"{ranks} ranks oversubscribe this machine's {cores} cores: the times mean little"
    return None


def time_findings(
    app: str, by: dict[str, dict[str, Any]], why_not: str | None, where: str = "", crowded: str | None = None
) -> list[Finding]:
    """The paper's time and network-time claims, from block's and cyclic's timed runs (`by`:
    times, median_s, comm_median_s, spread per allocation, and the rounds of the sweep each ran
    in, when there are any); `where` says where they ran. CROWDED (why the ranks shared cores,
    as more ranks than cores on a cluster of this machine) makes every claim inconclusive: the
    times are measured and shown, but core sharing mixes into what the allocation changes."""
    refs = [f"allocation/{p}" for p in TIME_PARTS.get(app, ())]
    if why_not is not None:
        return [findings.untestable(ref, why_not) for ref in refs]
    blk, cyc = by["block"], by["cyclic"]
    if not blk["times"] or not cyc["times"]:
        return [findings.untestable(ref, "block or cyclic left no timed run") for ref in refs]
    out = []
    noise, n = max(blk["spread"], cyc["spread"]), min(len(blk["times"]), len(cyc["times"]))
    for ref in refs:
        key = "comm_median_s" if ref.endswith("network_time") else "median_s"
        ratio = blk[key] / cyc[key] if cyc[key] else float("inf")
        here = f"block / cyclic {'network time' if 'network' in ref else 'time'} = {ratio:.2f}x{where}"
        if crowded is not None:
            verdict, why = "inconclusive", crowded
        elif ref.endswith("cg/time"):  # 17% faster: at least half of it, on paired rounds where it ran in them
            verdict, why = _time_verdict(blk, cyc, noise, n, ratio)
        elif ref.endswith("ft_is/time"):  # "about the same": within 10%, which the noise must not swamp
            if noise > 0.1:
                verdict, why = "inconclusive", f"repeats spread {noise:.0%}, wider than the 10% that 'the same' allows"
            elif abs(ratio - 1) <= 0.1:
                verdict, why = "reproduced", "within 10%"
            else:
                verdict, why = "not reproduced", "more than 10% apart"
        elif ref.endswith("mg/network_time"):
            verdict, why = findings.judge(ratio, noise, n, True, 2.5)  # six times: at least half of it
        else:  # mg time slower with block, ft network time higher with block
            verdict, why = findings.judge(ratio, noise, n, True, 0.02)
        out.append(findings.part(ref, here, verdict, why, evidence={"repeats": n, "spread": noise}))
    return out


def _time_verdict(blk: dict[str, Any], cyc: dict[str, Any], noise: float, n: int, ratio: float) -> tuple[str, str]:
    if blk.get("rounds") and cyc.get("rounds"):
        verdict, why, _ = judge_rows(blk, cyc, False, 0.085)
        return verdict, why
    return findings.judge(ratio, noise, n, False, 0.085)


def where_timed(recs: list[dict[str, Any]], cores: int) -> str:
    """Where timed runs ran, for a finding's text: a cluster of this machine names its link and
    how many ranks shared the cores."""
    c = cluster_of(recs)
    if c is None:
        return ""
    ranks = max((r.get("layout") or {}).get("ranks", 1) for r in recs)
    shared = f", {ranks} ranks on {cores} cores" if ranks > cores else ""
    return f" (cluster '{c['name']}' of this machine, link {c['link']['name']}{shared})"
