"""A study's timed comparison of two configurations, judged on the rounds of one interleaved
sweep by the settled-comparison rule (pxq.analysis.verdicts.settle), and mapped onto a study verdict:
reproduced, not reproduced, inconclusive (docs/VERDICTS.md, "Timed parts")."""

from __future__ import annotations

import math
import statistics
from typing import Any

from pxq.analysis.verdicts import findings, settle

__all__ = ["judge_rows", "study_rule"]


def study_rule(threshold: float) -> settle.Rule:
    """The settled-comparison rule a study's timed comparison is judged with: equivalent within
    the effect the paper claims (THRESHOLD) is "absent or smaller", and the interval is narrow
    at half that."""
    return settle.Rule(precision=max(0.01, threshold / 2), margin=threshold)


def judge_rows(
    a: dict[str, Any], b: dict[str, Any], expect_above: bool, threshold: float
) -> tuple[str, str, dict[str, Any]]:
    """A over B's time, expected above (or below) 1 by THRESHOLD, for two groups of runs
    ("times", and "rounds" from settle.round_of). Where they ran in at least settle.MIN_BLOCKS
    rounds of one interleaved sweep, judged on those paired rounds by the settled-comparison
    rule (study_rule: looks and a stop on a narrow interval that keep the false calls at 5%
    however many rounds were run, measure()'s budgeted ones included):

    - the rule says A is slower (faster), the direction expected: reproduced when its whole
      interval reaches the threshold, not reproduced when its whole interval falls short of it,
      else inconclusive (the direction is solid, the size is not: a rerun may land either side,
      even where the estimate reaches the threshold);
    - the other direction, or equivalent within the threshold: not reproduced;
    - unsettled, or equivalent only within a wider margin: inconclusive, with the rounds its
      spread says would settle it (not reproduced if the whole interval falls short).

    Otherwise findings.judge() on the medians and spreads. Returns the verdict, its reason and
    the evidence (the paired ratio, its interval, the rounds it rests on, the rule's verdict)."""
    pairs = settle.pair_rounds(
        list(zip(b["times"], b.get("rounds") or [])), list(zip(a["times"], a.get("rounds") or []))
    )
    if len(pairs) >= settle.MIN_BLOCKS:
        return _judge_paired(pairs, expect_above, threshold)
    ratio = statistics.median(a["times"]) / statistics.median(b["times"])
    noise = max(findings.spread(a["times"]), findings.spread(b["times"]))
    n = min(len(a["times"]), len(b["times"]))
    verdict, why = findings.judge(ratio, noise, n, expect_above, threshold)
    return verdict, why, {"repeats": n, "spread": noise, "ratio": ratio}


def _judge_paired(
    pairs: list[tuple[float, float]], expect_above: bool, threshold: float
) -> tuple[str, str, dict[str, Any]]:
    """judge_rows on (B, A) times paired round by round (at least settle.MIN_BLOCKS)."""
    rule = study_rule(threshold)
    v = _replay([x / y for y, x in pairs], rule, expect_above, threshold)
    assert v.ratio is not None and v.lo is not None and v.hi is not None
    ratio, lo, hi, n = v.ratio, v.lo, v.hi, v.blocks
    paired = {"ratio": ratio, "lo": lo, "hi": hi, "rounds": n, "of": len(pairs), "settled": v.kind}
    if v.kind == "equivalent":
        paired["margin"] = v.margin
    evidence = {"repeats": n, "ratio": ratio, "paired": paired}
    level = f"{100 * (1 - rule.final_level):.1f}%"
    said = f"paired over {n} rounds of one sweep: {ratio:.2f}x [{lo:.2f}-{hi:.2f}] ({level})"
    if n < len(pairs):
        said += f", settled at round {n} of {len(pairs)}"
    verdict, why = _paired_verdict(v, expect_above, threshold)
    if verdict:
        return verdict, f"{said}{why}", evidence
    logs = [math.log(x / y) for y, x in pairs]
    need = v.needed or settle.needed(statistics.stdev(logs), len(pairs), rule, abs(math.log(ratio)))
    return "inconclusive", f"too noisy to read: {said}; about {need} interleaved rounds would settle it", evidence


def _replay(ratios: list[float], rule: settle.Rule, expect_above: bool, threshold: float) -> settle.Verdict:
    """settle.replay for a study: a look that settles the direction but not whether the effect
    reaches the threshold does not stop it; the rounds after it are read at their looks too
    (each at its own share of alpha), and that first look is the answer only when none after it
    is clearer."""
    first = None
    for n in range(settle.MIN_BLOCKS, len(ratios)):
        v = settle.judge(ratios[:n], rule)
        if v.settled:
            if _paired_verdict(v, expect_above, threshold)[0] != "inconclusive":
                return v
            first = first or v
    v = settle.judge(ratios, rule, last=True)
    return v if v.settled or first is None else first


def _paired_verdict(v: settle.Verdict, expect_above: bool, threshold: float) -> tuple[str, str]:
    """The study verdict the rule's verdict V gives, and the words after the figures; ("", "")
    when it is too noisy to read."""
    assert v.ratio is not None and v.lo is not None and v.hi is not None
    edge = 1 + threshold if expect_above else 1 - threshold
    want, other = ("slower", "faster") if expect_above else ("faster", "slower")
    short = v.hi < edge if expect_above else v.lo > edge  # the whole interval falls short of the threshold
    cleared = v.lo >= edge if expect_above else v.hi <= edge  # the whole interval reaches it
    smaller = f": the effect is smaller than {100 * threshold:.0f}%"
    if v.kind == want:
        if cleared:
            return "reproduced", ""
        if short:
            return "not reproduced", smaller
        # The direction holds; the size straddles the threshold, so a rerun's ratio, anywhere in
        # the interval, may fall on either side: never "reproduced" on the estimate alone.
        reached = v.ratio >= edge if expect_above else v.ratio <= edge
        where = "its estimate reaches it, its interval does not" if reached else "it lies within its interval"
        return "inconclusive", f": {want}, but whether by {100 * threshold:.0f}% or more is not settled ({where})"
    if v.kind == other:
        return "not reproduced", ": the other way round"
    if v.kind == "equivalent" and v.margin is not None and v.margin <= threshold + 1e-9:
        why = (
            f": equivalent within +-{100 * v.margin:.1f}%, the effect is absent or smaller than {100 * threshold:.0f}%"
        )
        return "not reproduced", why
    if short and v.kind == "unsettled":
        return "not reproduced", smaller
    return "", ""
