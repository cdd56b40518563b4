"""Advice (`pxq advise`): every way to run an app on a node's cores, ranked by the time the
contention-aware roofline (pxq.analysis.models.roofline) predicts from the work each way declares, and
whether the settled proof bore the prediction out.

- **The candidates**: every layout P x Q x T whose ranks and threads fill a node's cores
  (Q x T = cores per node), each untiled (flat, or hybrid with T > 1) and tiled with each tile
  proposed (pxq's 256K, the app's share of a cache level for --tile auto).
- **The prediction**: each candidate's declared work (the app set up, nothing timed:
  `--declare`) against the ceilings of its layout, phase by phase; what runs outside the
  declared phases (communication, waiting) is not predicted here, and the proof measures it.
- **The outcome**: the predicted best against each other proved configuration on paired,
  shuffled blocks (pxq.experiments.settling): "held" when each of them is settled slower or
  equivalent, or shown no faster than the best by more than the margin (`within_margin`: the
  best is the measured best or within the margin of it), "not held" when one of them is shown
  faster by more than the margin, "unsettled" otherwise.
- **The hit rate** over advice records: the held among those whose proof settled."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.models import roofline
from pxq.analysis.verdicts.settle import Verdict
from pxq.core import escape
from pxq.core.layout import Layout, format_bytes, parse_bytes

DEFAULT_TILE = "256K"  # pxq's default tile (--mode tiled)
PROVED = 3  # configurations proved beside the plain flat run: the best and the next ones


@dataclass(frozen=True)
class Candidate:
    """One way to run the app: a layout, untiled or tiled with a tile ("256K", "auto", bytes)."""

    layout: Layout
    tile: str | None = None

    @property
    def mode(self) -> str:
        if self.tile is not None:
            return "tiled"
        return "hybrid" if self.layout.threads > 1 else "flat"

    @property
    def name(self) -> str:
        return f"{self.layout} {self.mode}" + (f" {self.tile}" if self.tile else "")


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def share_tile(levels: list[dict[str, Any]], share: str, cores: int) -> int | None:
    """The bytes of an app's --tile auto share ("L2/4": a quarter of a core's L2) of the cache
    levels LEVELS (a shared level split over the node's CORES); None without that level."""
    m = re.fullmatch(r"L(\d+)/(\d+)", share.strip())
    if not m:
        return None
    level = next((lv for lv in levels if lv.get("name") == f"L{m.group(1)}"), None)
    if level is None:
        return None
    size = int(level["bytes"]) // (cores if level.get("shared") else 1)
    return max(1, size // int(m.group(2)))


def candidates(nodes: int, cores: int, tiles: list[str]) -> list[Candidate]:
    """Every layout filling CORES per node (fewest threads first), untiled and with each tile."""
    out = []
    for t in divisors(cores):
        layout = Layout(nodes, cores // t, t)
        out.append(Candidate(layout))
        out += [Candidate(layout, tile) for tile in tiles]
    return out


def tiles_for(share: str, levels: list[dict[str, Any]], cores: int, here: bool) -> list[str]:
    """The tiles to try: pxq's default, and the app's cache share (--tile auto where the ceilings
    are this machine's, so a kept tile profile speaks; else that machine's share in bytes)."""
    out = [DEFAULT_TILE]
    if here:
        return [*out, "auto"]
    b = share_tile(levels, share, cores)
    if b is not None and b != parse_bytes(DEFAULT_TILE):
        out.append(format_bytes(b))
    return out


def predict(declared: dict[str, Any], ceilings: dict[str, Any]) -> dict[str, Any]:
    """A declared configuration's predicted seconds (its declared phases at their binding
    ceilings), the ceiling and phase that bind it, and how far the binding ceiling may be off."""
    rec = dict(declared, time={"total": 0.0})
    p = roofline.predict(rec, ceilings)
    if p is None:
        raise ValueError("no declared work")
    phase = p["phases"][p["binding_phase"]]
    return {
        "predicted_s": p["predicted"],
        "binding": p["binding"],
        "binding_phase": p["binding_phase"],
        "cores": p["cores"],
        "error": phase["error"],
        "of_seconds": {name: ph["seconds"] for name, ph in p["phases"].items()},
    }


def ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The predicted rows fastest first (refused ones last, in their order)."""
    ok = sorted((r for r in rows if "predicted_s" in r), key=lambda r: r["predicted_s"])
    return ok + [r for r in rows if "predicted_s" not in r]


def same_tile(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one layout whose tiles resolved to the same bytes: the first kept, the others
    marked as the same configuration (not predicted twice, not proved twice)."""
    seen: dict[tuple[str, int], str] = {}
    out = []
    for r in rows:
        key = (str(r.get("layout")), int(r.get("tile_bytes") or 0))
        if r.get("mode") == "tiled" and "predicted_s" in r and key in seen:
            out.append({k: v for k, v in r.items() if k not in ("predicted_s",)} | {"same_as": seen[key]})
            continue
        if "predicted_s" in r:
            seen.setdefault(key, r["name"])
        out.append(r)
    return out


def proof_set(rows: list[dict[str, Any]], flat: str, count: int = PROVED) -> list[str]:
    """The configurations the proof runs: the COUNT predicted fastest, and the plain flat run."""
    names = [r["name"] for r in ranked(rows) if "predicted_s" in r][:count]
    if flat not in names and any(r["name"] == flat and "predicted_s" in r for r in rows):
        names.append(flat)
    return names


def within_margin(v: Verdict, margin: float) -> bool:
    """Whether the proof shows OTHER no faster than the predicted best by more than MARGIN: the
    lower end of the interval of OTHER's time over the best's at least 1 / (1 + MARGIN), the
    equivalence bound (a one-sided test at the interval's level: non-inferiority). A pair
    settled slower passes it, and one settled equivalent within MARGIN; any other (faster,
    equivalent only within a wider margin its interval proved, unsettled) when its interval's
    lower end lies above the bound."""
    if v.kind == "slower" or (v.kind == "equivalent" and v.margin is not None and v.margin <= margin + 1e-9):
        return True
    return v.lo is not None and v.lo >= 1 / (1 + margin)


def outcome(verdicts: list[Verdict], margin: float) -> str:
    """The prediction against the proof (each verdict: another configuration's time over the
    predicted best's): "not held" when one is settled faster by more than MARGIN may allow,
    "held" when every one is within MARGIN of the best or behind it (within_margin), else
    "unsettled"."""
    if not verdicts:
        return "not proved"
    if any(v.kind == "faster" and not within_margin(v, margin) for v in verdicts):
        return "not held"
    if all(within_margin(v, margin) for v in verdicts):
        return "held"
    return "unsettled"


def print_margins(pairs: list[dict[str, Any]], margin: float, console: Console) -> None:
    """A line for each pair that is within the margin without being settled slower or
    equivalent: what the proof shows of it (within_margin)."""
    for p in pairs:
        if p.get("best_within_margin") and p["verdict"] in ("faster", "unsettled"):
            console.print(
                f"{escape.term(p['configuration'])}: not faster than {escape.term(p['against'])} by more than "
                f"{100 * margin:.0f}% (its time at least {p['lo']:.2f}x the best's at the interval's level): "
                f"the predicted best is the measured best or within {100 * margin:.0f}% of it",
                highlight=False,
            )


def order_checks(pairs: list[dict[str, Any]], predicted: dict[str, float]) -> tuple[int, int]:
    """Of the proof's settled faster-or-slower pairs, how many the prediction ordered rightly:
    (right, settled). Equivalent and unsettled pairs order nothing."""
    right = settled = 0
    for p in pairs:
        if p["verdict"] not in ("faster", "slower"):
            continue
        a, b = predicted.get(p["against"]), predicted.get(p["configuration"])
        if a is None or b is None or a == b:
            continue
        settled += 1
        right += (b < a) == (p["verdict"] == "faster")
    return right, settled


def hit_rate(advice: list[dict[str, Any]]) -> dict[str, Any]:
    """Over advice records: how many were proved, held, not held, unsettled; the hit rate is
    the held over those whose proof settled (held or not held); None without one."""
    counts = {k: 0 for k in ("held", "not held", "unsettled", "not proved")}
    for rec in advice:
        counts[rec.get("outcome", "not proved")] = counts.get(rec.get("outcome", "not proved"), 0) + 1
    decided = counts["held"] + counts["not held"]
    right = sum(int((r.get("order") or {}).get("right", 0)) for r in advice)
    settled = sum(int((r.get("order") or {}).get("settled", 0)) for r in advice)
    return {
        **counts,
        "records": len(advice),
        "rate": counts["held"] / decided if decided else None,
        "order_right": right,
        "order_settled": settled,
    }


def hit_rate_text(h: dict[str, Any]) -> str:
    rate = "no proof settled" if h["rate"] is None else f"{100 * h['rate']:.0f}% of the settled proofs"
    order = (
        f"; the predicted order held in {h['order_right']} of {h['order_settled']} settled pairs"
        if h["order_settled"]
        else ""
    )
    return (
        f"advice: {h['records']} record(s): {h['held']} held, {h['not held']} not held, {h['unsettled']} unsettled, "
        f"{h['not proved']} not proved; hit rate {rate}{order}"
    )


NOT_PREDICTED = (
    "not predicted: what runs outside the declared phases (waiting, and communication a proxy does not declare: all "
    "but the ring's hand-over and FT's and IS's all-to-alls within a node); the proof measures it"
)


def separation_text(rows: list[dict[str, Any]]) -> str:
    """Whether the model separates the best from the next: the configurations predicted within
    the best's binding ceiling's own spread of it, said when there are several ("" otherwise)."""
    ok = [r for r in ranked(rows) if "predicted_s" in r]
    if len(ok) < 2:
        return ""
    best = ok[0]
    band = max(best["error"], 0.0)
    close = [r for r in ok[1:] if r["predicted_s"] <= best["predicted_s"] * (1 + band)]
    if not close:
        return (
            f"the model separates {best['name']} from the next by more than its ceilings' spread (+-{100 * band:.0f}%)"
        )
    return (
        f"{len(close) + 1} configurations are predicted within the ceilings' spread (+-{100 * band:.0f}%) of "
        f"{best['name']}: the model does not separate them; the proof does"
    )


def seconds_text(s: float) -> str:
    return f"{s:.3g} s" if math.isfinite(s) else "-"


def table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="predicted: the declared phases at their binding ceilings, fastest first")
    for col, just in (("", "right"), ("configuration", "left"), ("predicted", "right"), ("+-", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    t.add_column("what binds it (ceiling @ cores busy: phase)")
    rank = 0
    for r in ranked(rows):
        if "predicted_s" in r:
            rank += 1
            binds = f"{r['binding']} @ {r['cores']}: {r['binding_phase']}"
            tiled = int(r.get("tile_bytes") or 0)
            resolved = (format_bytes(tiled) if tiled else "off") if r.get("mode") == "tiled" else ""
            tile = f" (tile {resolved})" if resolved and resolved != r.get("tile") else ""
            t.add_row(
                str(rank),
                escape.term(r["name"]) + tile,
                seconds_text(r["predicted_s"]),
                f"{100 * r['error']:.0f}%",
                escape.term(binds),
            )
        elif "same_as" in r:
            same = "runs untiled here: the same run as" if not r.get("tile_bytes") else "the same tile as"
            t.add_row("", escape.term(r["name"]), "", "", f"[dim]{same} {escape.term(r['same_as'])}[/dim]")
        else:
            t.add_row("", escape.term(r["name"]), "", "", f"[yellow]refused:[/yellow] {escape.term(r['refused'])}")
    return t


STOPS = {
    "budget": "the budget was spent",
    "blocks": "the rule's last block was run",
    "settled": "every pair reached its verdict",
}


def blocks_to_bound(pair: dict[str, Any], margin: float) -> str:
    """About how many blocks would put the pair's interval above the bound 1 / (1 + MARGIN) at
    the spread its interval shows (its half-width in log ratio shrinking as one over the root of
    the blocks), or that its estimate lies below the bound, where more blocks would not."""
    ratio, lo, hi, n = pair.get("ratio"), pair.get("lo"), pair.get("hi"), pair.get("blocks")
    if not (ratio and lo and hi and n) or min(ratio, lo, hi) <= 0:
        return ""
    room = math.log(ratio) + math.log1p(margin)  # from the estimate down to the bound
    if room <= 0:
        return f"; its estimate lies more than {100 * margin:.0f}% below: more blocks would not show it within"
    half = (math.log(hi) - math.log(lo)) / 2
    return f"; about {math.ceil(n * (half / room) ** 2)} blocks would show it within {100 * margin:.0f}%"


def short_of_margin(pair: dict[str, Any], margin: float) -> str:
    """What keeps one pair of a proof from holding the prediction: its verdict as it stood."""
    name = escape.term(pair["configuration"])
    interval = f" [{pair['lo']:.2f}-{pair['hi']:.2f}]" if pair.get("lo") is not None else ""
    ratio = f"{pair['ratio']:.2f}x{interval}" if pair.get("ratio") is not None else "no interval yet"
    if pair["verdict"] == "equivalent":
        return (
            f"{name} (equivalent only within +-{100 * float(pair['margin']):.1f}%, {ratio} of the best's time: "
            f"it may be more than {100 * margin:.0f}% faster{blocks_to_bound(pair, margin)})"
        )
    need = f"; about {pair['needed']} would settle it" if pair.get("needed") else ""
    return f"{name} ({pair['verdict']} after {pair.get('blocks', 0)} blocks, {ratio}{need})"


def outcome_text(rec: dict[str, Any]) -> str:
    best = rec.get("predicted_best")
    stopped = (rec.get("proof") or {}).get("stopped", "")
    share = float((rec.get("proof") or {}).get("precision") or 0.05)
    margin = f"{100 * share:.0f}%"
    short = [p for p in (rec.get("proof") or {}).get("pairs", []) if not p.get("best_within_margin")]
    return {
        "held": f"prediction held: {best} was faster than, equivalent to or within {margin} of every other "
        "configuration proved",
        "not held": f"prediction not held: proved faster than the predicted best, {best}, by more than {margin}: "
        + ", ".join(short_of_margin(p, share) for p in short if p["verdict"] == "faster"),
        "unsettled": f"prediction unsettled ({STOPS.get(stopped, stopped)}): {best} is not shown faster than, "
        f"equivalent to or within {margin} of "
        + (", ".join(short_of_margin(p, share) for p in short) or "every configuration proved"),
        "not proved": f"predicted best: {best} (not proved)",
    }[rec["outcome"]]
