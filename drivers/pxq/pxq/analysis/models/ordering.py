"""How well the roofline's prediction orders an app's variants: the order their runs measure
(paired rounds of one sweep judged as a settled sweep judges a pair, else a rank-sum test), the
order predicted (a tie where the ceilings' own spread could swap the two predictions, or where
they differ by no more than the runs' equivalence margin), and
Kendall's tau-b between them over the settled pairs (pxq.analysis.models.roofline's points)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from pxq.analysis.verdicts import settle


def kendall_per_app(pts: list[dict[str, Any]]) -> dict[str, float | None]:
    """Kendall's tau between predicted and measured times over each app's points of one size
    and layout family (None with fewer than three points)."""
    from scipy.stats import kendalltau

    out: dict[str, float | None] = {}
    for app in sorted({p["app"] for p in pts}):
        mine = [p for p in pts if p["app"] == app]
        if len(mine) < 3:
            out[app] = None
            continue
        tau = kendalltau([p["predicted"] for p in mine], [p["median"] for p in mine]).statistic
        out[app] = None if tau is None or math.isnan(tau) else float(tau)
    return out


ORDER_P = 0.05  # a pair's runs order it when a rank-sum test says their times differ at this level
ORDER_TEST_RUNS = 4  # fewer runs of either: no test can reach ORDER_P (3 against 3: p >= 0.1)


def ordered_by_runs(a: list[float], b: list[float]) -> bool:
    """Whether two configurations' measured times order them: a two-sided Mann-Whitney rank-sum
    test at ORDER_P with ORDER_TEST_RUNS or more runs of each, else ranges that do not overlap."""
    from scipy.stats import mannwhitneyu

    if min(len(a), len(b)) >= ORDER_TEST_RUNS:
        return bool(mannwhitneyu(a, b, alternative="two-sided").pvalue < ORDER_P)
    return max(a) < min(b) or max(b) < min(a)


ORDER_RULE = settle.Rule()  # paired rounds are judged as a settled sweep judges its pairs (+-5%)
SETTLED_ORDER = {"slower": 1, "faster": -1, "equivalent": 0}


def measured_order(a: dict[str, Any], b: dict[str, Any]) -> tuple[int | None, bool]:
    """The order two points' runs measure (1: B slower, -1: B faster, 0: a tie, None: unsettled)
    and whether it was judged on paired rounds. Runs of one interleaved sweep (a settled sweep's
    blocks, or a sweep's repeats) in at least ORDER_TEST_RUNS rounds are paired and judged as a
    settled sweep judges a pair (ORDER_RULE, replayed round by round): faster or slower is an
    order, equivalent within the margin a tie, and unsettled (neither shown) is None: not in the
    settled order at all. Otherwise ordered_by_runs on the two sides' times (not ordered: a tie)."""
    both = settle.pair_rounds(a.get("rounds") or [], b.get("rounds") or [])
    if len(both) >= ORDER_TEST_RUNS:
        verdict = settle.replay([y / x for x, y in both], ORDER_RULE)
        return SETTLED_ORDER.get(verdict.kind), True
    return (_sign(b["median"] - a["median"]) if ordered_by_runs(a["times"], b["times"]) else 0), False


def tie_margin(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """The margin within which two points' paired rounds show them equivalent (ORDER_RULE's, or
    the wider one a narrow interval proves); None unless their paired rounds tie them."""
    both = settle.pair_rounds(a.get("rounds") or [], b.get("rounds") or [])
    if len(both) < ORDER_TEST_RUNS:
        return None
    verdict = settle.replay([y / x for x, y in both], ORDER_RULE)
    return verdict.margin if verdict.kind == "equivalent" else None


def pairs_per_app(pts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per app, the pairs of configurations its runs order (measured_order: paired rounds of one
    sweep where there are enough, else the two sides' times) and how many of those the
    prediction orders the same way; the pairs they tie, and the pairs paired rounds left
    unsettled, are listed: no prediction can be right or wrong about an order the runs did not
    measure. With tau-b over the settled pairs (ordered and tied; an unsettled pair is in
    neither ranking), and how many pairs were judged on paired rounds."""
    out: dict[str, dict[str, Any]] = {}
    for app in sorted({p["app"] for p in pts}):
        mine = [p for p in pts if p["app"] == app]
        judged = _pair_signs(mine, with_pairing=True)
        signs = [(a, b, meas, pred) for a, b, meas, pred, _ in judged]
        ordered = sum(meas not in (0, None) for _, _, meas, _ in signs)
        agree = sum(meas not in (0, None) and meas == pred for _, _, meas, pred in signs)
        unresolved = sum(meas not in (0, None) and pred == 0 for _, _, meas, pred in signs)
        unordered = [(a, b) for a, b, meas, _ in signs if meas == 0]
        unsettled = [(a, b) for a, b, meas, _ in signs if meas is None]
        alike = [(a, b) for a, b, _, pred in signs if pred == 0]  # predictions the ceilings cannot order
        paired = sum(was_paired for *_, was_paired in judged)
        out[app] = {
            "ordered": ordered,
            "agree": agree,
            "ordered_alike": unresolved,  # of the ordered pairs, those the prediction cannot order
            "unordered": unordered,
            "unsettled": unsettled,
            "predicted_alike": alike,
            "tau_b": _tau_b(signs),
            "alike_all": _all_alike(signs),
            "paired": paired,
            "pairs": len(signs),
        }
    return out


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def prediction_margin(a: dict[str, Any], b: dict[str, Any]) -> float:
    """How far apart two points' predictions could be moved by the ceilings they rest on: per
    ceiling (and cores busy), the difference of the seconds each prediction takes at it times
    how far that ceiling may be off (ceilings.spread_at), combined as independent errors (the
    root of their sum of squares: each ceiling is measured by runs of its own). A ceiling both
    take the same time at moves both alike and cannot reorder them; what was measured outside
    the declared phases is not predicted."""
    sa, sb = a.get("sources") or {}, b.get("sources") or {}
    squares = 0.0
    for key in set(sa) | set(sb):
        x, y = sa.get(key, [0.0, 0.0]), sb.get(key, [0.0, 0.0])
        squares += (abs(y[0] - x[0]) * max(x[1], y[1])) ** 2
    return math.sqrt(squares)


def predicted_order(a: dict[str, Any], b: dict[str, Any]) -> int:
    """The order the prediction gives two points (1: B slower, -1: B faster), or a tie (0) where
    they differ by no more than the ceilings' own spread could move them (prediction_margin),
    or by no more than the margin within which the runs call a pair equivalent (ORDER_RULE's
    +-5%): the two rankings are read at one resolution, so a prediction 3% apart claims what
    a measured tie says (alike within 5%), not an order the runs could not show."""
    diff = b["predicted"] - a["predicted"]
    within = ORDER_RULE.equivalence * min(abs(a["predicted"]), abs(b["predicted"]))
    return 0 if abs(diff) <= max(prediction_margin(a, b), within) else _sign(diff)


def _pair_signs(mine: list[dict[str, Any]], with_pairing: bool = False) -> list[tuple[Any, ...]]:
    """Each pair with the order its runs measure (0: a tie, None: unsettled; measured_order) and
    the order predicted (and, WITH_PAIRING, whether the runs were paired): one
    judgment per pair."""
    out = []
    for a, b in itertools.combinations(mine, 2):
        meas, was_paired = measured_order(a, b)
        pred = predicted_order(a, b)
        out.append((a, b, meas, pred, was_paired) if with_pairing else (a, b, meas, pred))
    return out


def _tau_b(signs: list[tuple[Any, Any, int | None, int]]) -> float | None:
    """Kendall's tau-b over the settled pairs: an unsettled one (None) is left out of both rankings."""
    signs = [s for s in signs if s[2] is not None]
    pairs = len(signs)
    tied_meas = sum(meas == 0 for _, _, meas, _ in signs)
    tied_pred = sum(pred == 0 for _, _, _, pred in signs)
    if pairs < 3 or tied_meas == pairs or tied_pred == pairs:
        return None
    score = sum(int(meas or 0) * pred for _, _, meas, pred in signs)
    return score / math.sqrt((pairs - tied_meas) * (pairs - tied_pred))


def _all_alike(signs: list[tuple[Any, Any, int | None, int]]) -> bool:
    """Whether the prediction ties every settled pair while the runs order some (so tau-b has
    no predicted order to judge: the model does not separate these variants)."""
    settled = [s for s in signs if s[2] is not None]
    return len(settled) >= 3 and all(pred == 0 for *_, pred in settled) and any(s[2] for s in settled)


def tau_b_by_runs(mine: list[dict[str, Any]]) -> float | None:
    """Kendall's tau-b between the predicted order and the order the runs measure: a pair the
    runs do not order (ordered_by_runs) or show equivalent is a tie of the measured ranking, as
    tau-b counts ties, rather than an order read from two medians the noise decides; a pair paired
    rounds left unsettled is left out; None with fewer than three settled pairs, or when the runs
    or the prediction order none of them."""
    return _tau_b(_pair_signs(mine)) if len(mine) >= 3 else None
