"""A placement suggestion shown: its table, its verdict beside block and cyclic, its figure, and
the channels a run measured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pxq.analysis.messages import msgdist
from pxq.analysis.messages.placement import Suggestion, measure_of, traffic
from pxq.core.layout import format_volume
from pxq.figures import trafficmap


def print_suggestion(console: Any, s: Suggestion, title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    for col in ("order", "intra-CMP bytes", "inter-CMP bytes", "inter-node bytes", "inter-node msgs", "messages"):
        table.add_column(col, justify="left" if col == "order" else "right")
    for c in s.candidates:
        b, n = c.cost["bytes"], c.cost["count"]
        tb, tn = sum(b.values()), sum(n.values())
        name = f"suggested (= {s.chosen})" if c.name == "suggested" else c.name
        table.add_row(
            name,
            msgdist.pct(b["intra_cmp"], tb),
            msgdist.pct(b["inter_cmp"], tb),
            f"{format_volume(b['inter_node'])} ({msgdist.pct(b['inter_node'], tb)})",
            f"{n['inter_node']} ({msgdist.pct(n['inter_node'], tn)})",
            str(tn),
            style="bold" if c.name == "suggested" else None,
        )
    console.print(table)
    for line in verdict(s):
        console.print(line)
    self_bytes = s.candidate("block").cost["bytes"]["self"]
    if self_bytes:
        console.print(f"[dim]a rank's messages to itself ({format_volume(self_bytes)}) stay put under any order[/dim]")


def verdict(s: Suggestion) -> list[str]:
    """How the suggestion compares with the better of block and cyclic, by the objective."""
    what = measure_of(s.objective)
    unit = "bytes" if what == "bytes" else "messages"
    show = format_volume if what == "bytes" else str
    mine = s.candidate("suggested").cost[what]["inter_node"]
    best = min(("block", "cyclic"), key=lambda a: s.candidate(a).cost[what]["inter_node"])
    theirs = s.candidate(best).cost[what]["inter_node"]
    if mine < theirs:
        gain = f"{100 * (1 - mine / theirs):.1f}% fewer than {best}, the better of block and cyclic ({show(theirs)})"
    else:
        gain = f"the same as {best}, the better of block and cyclic: {best} is already as good as METIS finds"
    return [
        f"suggested order: {show(mine)} inter-node {unit}, {gain}",
        f"partitioner: METIS through pymetis, {s.seconds:.2f} s for {len(s.order)} ranks",
    ]


def plot(rec: dict[str, Any], s: Suggestion, path: Path, title: str) -> Path:
    """The traffic matrix in block order and in the suggested order, each panel titled with what
    crosses between nodes (figures/trafficmap.py draws it)."""
    panels = []
    for name, order in (("block", list(range(len(s.order)))), ("suggested", s.order)):
        inter = s.candidate(name).cost[measure_of(s.objective)]["inter_node"]
        shown = format_volume(inter) if s.objective == "bytes" else f"{inter} messages"
        panels.append((name, order, f"{name}: {shown} between nodes"))
    per_node = s.model.sockets * s.model.cores
    return trafficmap.plot(traffic(rec, s.objective) / 2, panels, per_node, s.objective, path, title)


def print_channels(console: Any, channels: dict[str, Any]) -> None:
    """A run's channels as its profile measured them, beside the prediction."""
    seen, predicted = channels.get("observed"), channels.get("predicted")
    if seen is None:
        console.print(f"[yellow]channels: {channels.get('note', 'not measured')}[/yellow]")
        return
    total = sum(seen["bytes"].values())
    parts = ", ".join(f"{msgdist.CHANNEL_TEXT[c]} {msgdist.pct(seen['bytes'][c], total)}" for c in msgdist.CHANNELS)
    line = f"channels measured (the run's message profile): {format_volume(seen['bytes']['inter_node'])} between nodes"
    console.print(f"{line} ({parts} of {format_volume(total)})")
    if predicted is not None:
        want = predicted["bytes"]["inter_node"]
        same = "as predicted" if want == seen["bytes"]["inter_node"] else "the prediction differs"
        console.print(f"predicted for model {channels.get('model')}: {format_volume(want)} between nodes: {same}")
