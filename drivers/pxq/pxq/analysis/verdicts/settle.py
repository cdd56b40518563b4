"""Settled comparisons: which of two configurations is faster, by how much, or that they are the
same within a margin, from paired blocks of runs (docs/RESULTS.md, "Settled comparisons").

A block runs every configuration once, in a shuffled order, so a drift of the machine (a memory
state that flips, a neighbour's load) falls on both sides of every pair alike. For a pair
(BASE, OTHER) each block gives one paired ratio OTHER/BASE of their times; the comparison works
on the logarithms of these ratios:

- the interval is Student's t interval of their mean (a geometric-mean ratio and its interval);
- a pair stops **when its interval is narrow**: after every block from the 4th, once the
  (1 - 0.8 alpha) interval (96% at alpha = 5%) is narrower than +-precision; it is then faster
  or slower when its (1 - 0.3 alpha) interval (98.5%) excludes 1, else equivalent within the
  margin the 96% interval proves (two one-sided tests at 2% each: at most the precision plus
  the estimate's distance from 1), or within the asked margin when that is wider;
- an order whose interval's end nearer 1 lies inside the equivalence margin says so: the
  direction is shown, a difference beyond the margin is not, and a rerun may call the pair
  equivalent ("1.07x slower [1.01-1.13] ... (its near end within +-5%: a rerun may find them
  equivalent)");
- **looks for a clear answer** before that: after blocks 4, 6, 9, 14, 20, ... (each about 1.5
  times the last) up to max_blocks, at 0.2 alpha for the first look and 0.2 alpha shared by the
  others (Bonferroni), a pair is faster/slower when that look's interval excludes 1, or
  equivalent when its two one-sided tests put it inside +-margin: a 2.5x effect settles at
  the 4th block;
- what these shares leave (0.3 alpha) is the allowance for stopping on a narrow interval: a
  spread that came out small stops a pair early with an interval a little too short. Simulated
  (tests/python/test_settle.py), identical configurations are called faster or slower in
  1.2-3.5% of sweeps at spreads of 2-20%, and a pair takes 1.0-1.4 times the blocks a design
  that knew the spread in advance would need;
- **unsettled** otherwise, with the blocks its spread says would settle it.

Pure functions: pxq.experiments.settling runs the blocks."""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass
from typing import Any

from pxq.core.errors import InputError

MIN_BLOCKS = 4  # the first look: fewer paired ratios give no spread worth the name


@dataclass(frozen=True)
class Rule:
    """When a comparison is settled."""

    precision: float = 0.05  # stop a pair once its interval is narrower than +- this (relative)
    margin: float | None = None  # equivalence margin +-m (None: the precision)
    alpha: float = 0.05  # the false-positive rate kept over every look of a pair
    max_blocks: int = 20  # the last look (a budget may stop the blocks earlier)

    @property
    def equivalence(self) -> float:
        return self.precision if self.margin is None else self.margin

    @property
    def schedule(self) -> list[int]:
        """The blocks after which a pair is judged: 4, then about 1.5 times the last, and the last block."""
        out, b = [], MIN_BLOCKS
        while b < self.max_blocks:
            out.append(b)
            b = math.ceil(b * 1.5)
        return [*out, self.max_blocks]

    def is_look(self, blocks: int) -> bool:
        return blocks in self.schedule

    def look_level(self, blocks: int) -> float:
        """The level a look tests at: 0.2 alpha for the first, 0.2 alpha shared by the others."""
        looks = self.schedule
        if blocks == looks[0] or len(looks) == 1:
            return 0.2 * self.alpha
        return 0.2 * self.alpha / (len(looks) - 1)

    @property
    def width_level(self) -> float:
        """The level of the interval whose width stops a pair (0.8 alpha: 96% at alpha 5%)."""
        return 0.8 * self.alpha

    @property
    def final_level(self) -> float:
        """The level a pair stopped on a narrow interval is called faster or slower at (0.3
        alpha: its 98.5% interval excludes 1); it is equivalent within the margin that the
        interval which stopped it proves (two one-sided tests at 0.4 alpha each)."""
        return 0.3 * self.alpha

    def check(self) -> None:
        if not (math.isfinite(self.precision) and 0.001 <= self.precision <= 0.5):
            raise InputError(f"--precision {self.precision}: give a relative precision from 0.001 to 0.5, e.g. 0.05")
        if not (0.001 <= self.equivalence <= 0.5):
            raise InputError(f"--margin {self.equivalence}: give an equivalence margin from 0.001 to 0.5")
        if not MIN_BLOCKS <= self.max_blocks <= 1000:
            raise InputError(f"--max-blocks {self.max_blocks}: give {MIN_BLOCKS} to 1000 blocks")


@dataclass
class Verdict:
    """One pair's comparison: OTHER's time over BASE's."""

    kind: str  # faster, slower, equivalent, unsettled (OTHER against BASE)
    ratio: float | None  # geometric mean of OTHER/BASE over the blocks used
    lo: float | None  # its (1 - a) interval
    hi: float | None
    blocks: int  # paired blocks used
    margin: float | None = None  # equivalent within +- this (the asked margin, or the one proved)
    needed: int | None = None  # unsettled: the blocks the current spread says would settle it
    median: float | None = None  # the median of the paired ratios, beside the mean
    left_out: int = 0  # blocks left out: the host's state moved (pxq.experiments.settling)
    # Faster or slower, but the interval's end nearer 1 lies inside the equivalence margin (this
    # margin): the order is shown, its size is not shown to exceed the margin, so a rerun may
    # find the pair equivalent. None otherwise.
    near: float | None = None

    @property
    def settled(self) -> bool:
        return self.kind != "unsettled"

    def speedup(self) -> tuple[float, float, float] | None:
        """BASE over OTHER (above 1: OTHER is faster) with its interval."""
        if self.ratio is None or self.lo is None or self.hi is None:
            return None
        return 1 / self.ratio, 1 / self.hi, 1 / self.lo

    def text(self) -> str:
        """ "1.52x faster [1.41-1.63]", "equivalent within +-2.0%", "unsettled after 6 blocks ..."."""
        left = f"; {self.left_out} block(s) left out: the host moved" if self.left_out else ""
        if self.kind in ("faster", "slower"):
            assert self.ratio is not None and self.lo is not None and self.hi is not None
            if self.kind == "faster":
                r, lo, hi = 1 / self.ratio, 1 / self.hi, 1 / self.lo
            else:
                r, lo, hi = self.ratio, self.lo, self.hi
            near = ""
            if self.near and hi <= 1 + self.near:  # the whole interval inside the margin
                near = f" (its whole interval within +-{100 * self.near:.0f}%: equivalent within that margin too)"
            elif self.near:
                near = f" (its near end within +-{100 * self.near:.0f}%: a rerun may find them equivalent)"
            return f"{r:.2f}x {self.kind} [{lo:.2f}-{hi:.2f}] over {self.blocks} blocks{near}{left}"
        if self.kind == "equivalent":
            assert self.margin is not None
            return f"equivalent within +-{100 * self.margin:.1f}% over {self.blocks} blocks{left}"
        more = f"; about {self.needed} blocks would settle it" if self.needed else ""
        at = ""
        if self.ratio and self.lo and self.hi:
            # An interval clear of 1 that did not settle the pair: a look tests at a stricter level
            # (false calls kept at alpha over every look), so the order is not yet shown.
            clear = ": clear of 1, but not at the stricter level a look tests" if self.hi < 1 or self.lo > 1 else ""
            at = f" (time ratio {self.ratio:.2f}x [{self.lo:.2f}-{self.hi:.2f}]{clear})"
        return f"unsettled after {self.blocks} blocks{at}{more}{left}"

    def record(self) -> dict[str, Any]:
        return {
            "verdict": self.kind,
            "ratio": self.ratio,
            "lo": self.lo,
            "hi": self.hi,
            "blocks": self.blocks,
            "margin": self.margin,
            "needed": self.needed,
            "median_ratio": self.median,
            "left_out": self.left_out,
            "near_margin": self.near,
        }


@functools.lru_cache(maxsize=4096)
def _t(p: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(p, df))


def judge(ratios: list[float], rule: Rule, left_out: int = 0, last: bool = False) -> Verdict:
    """The verdict on the paired ratios OTHER/BASE (one a block, in the order run) under RULE,
    as it stands after the last of them: settled on a clear answer at a look, or on a narrow
    interval after any block; else unsettled. LAST: no block will follow (the sweep stopped on
    its budget, or blocks were left out so that the pair never reaches the last look's count):
    the pair gets the last look then, at that look's level (its share of alpha, never spent)."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    n = len(logs)
    median = statistics.median(ratios) if ratios else None
    if n < MIN_BLOCKS:
        return Verdict("unsettled", None, None, None, n, needed=MIN_BLOCKS, median=median, left_out=left_out)
    mean = statistics.fmean(logs)
    sd = statistics.stdev(logs)
    se = sd / math.sqrt(n)
    bound = math.log1p(rule.equivalence)

    def verdict(a: float, a_tost: float, narrow: bool) -> Verdict | None:
        half = _t(1 - a / 2, n - 1) * se  # the (1 - a) interval
        tost = _t(1 - a_tost, n - 1) * se  # the (1 - 2 a_tost) interval
        ratio, lo, hi = math.exp(mean), math.exp(mean - half), math.exp(mean + half)
        if mean - half > 0:
            near = rule.equivalence if mean - half < bound else None
            return Verdict("slower", ratio, lo, hi, n, median=median, left_out=left_out, near=near)
        if mean + half < 0:
            near = rule.equivalence if mean + half > -bound else None
            return Verdict("faster", ratio, lo, hi, n, median=median, left_out=left_out, near=near)
        if -bound <= mean - tost and mean + tost <= bound:
            return Verdict("equivalent", ratio, lo, hi, n, margin=rule.equivalence, median=median, left_out=left_out)
        if narrow:  # precise, and no difference: the margin it proves
            proved = math.expm1(max(abs(mean - tost), abs(mean + tost)))
            return Verdict("equivalent", ratio, lo, hi, n, margin=proved, median=median, left_out=left_out)
        return None

    look = n if rule.is_look(n) else rule.max_blocks if last and n < rule.max_blocks else None
    if look is not None:
        clear = verdict(rule.look_level(look), rule.look_level(look), False)
        if clear is not None:
            return clear
    if _t(1 - rule.width_level / 2, n - 1) * se < math.log1p(rule.precision):
        narrow = verdict(rule.final_level, rule.width_level / 2, True)
        assert narrow is not None
        return narrow
    half = _t(1 - rule.final_level / 2, n - 1) * se
    need = needed(sd, n, rule, abs(mean))
    return Verdict(
        "unsettled",
        math.exp(mean),
        math.exp(mean - half),
        math.exp(mean + half),
        n,
        needed=need,
        median=median,
        left_out=left_out,
    )


def replay(ratios: list[float], rule: Rule, left_out: int = 0) -> Verdict:
    """The verdict a sweep reached on RATIOS block by block: the first settled one, else the
    judgment on them all (what a file's records are judged again with)."""
    for n in range(MIN_BLOCKS, len(ratios)):
        v = judge(ratios[:n], rule, left_out)
        if v.settled:
            return v
    return judge(ratios, rule, left_out, last=True)


def needed(sd: float, n: int, rule: Rule, distance: float) -> int:
    """The blocks a spread of SD (in log ratio) takes to settle: the interval narrower than the
    precision, or (when the ratio is farther from 1 than that) narrow enough to exclude 1."""
    target = max(math.log1p(rule.precision), distance)
    if sd <= 0:
        return n + 1
    z = _t(1 - rule.width_level / 2, max(n - 1, 1))
    return max(n + 1, math.ceil((z * sd / target) ** 2))


def known_noise_blocks(sd: float, rule: Rule) -> int:
    """The blocks a fixed design would need to reach the precision with the spread known in
    advance (a normal quantile at alpha, no looks): what a settled sweep's cost is set against."""
    from scipy import stats

    z = float(stats.norm.ppf(1 - rule.alpha / 2))
    return max(MIN_BLOCKS, math.ceil((z * sd / math.log1p(rule.precision)) ** 2))


# ---- rounds of one interleaved sweep, paired after the fact (pxq compare, pxq roofline) ----

Round = tuple[str, int, str]  # (sweep id, round, run id)


def round_of(rec: dict[str, Any]) -> Round | None:
    """(sweep id, round, run id) of a run an interleaved sweep made: the round is its settled
    block, else its repeat (every configuration runs once a round); None for a run no sweep
    interleaved."""
    driver = rec.get("driver") or {}
    sweep_id = driver.get("sweep_id")
    settle = driver.get("settle")
    n = settle.get("block") if isinstance(settle, dict) else driver.get("repeat")
    if not isinstance(sweep_id, str) or not isinstance(n, int) or isinstance(n, bool):
        return None
    return sweep_id, n, str(driver.get("run_id"))


HOST_BAND = 0.15  # a block's reference this far from the references' median (and beyond their spread) moved


def moved_blocks(host: list[float | None]) -> list[int]:
    """The blocks whose reference lies beyond HOST_BAND of the references' median and beyond
    three of their median absolute deviations: the machine moved under them."""
    known = [h for h in host if h]
    if len(known) < 4:
        return []
    med = statistics.median(known)
    mad = statistics.median(abs(h - med) for h in known)
    return [k for k, h in enumerate(host) if h and abs(h - med) > max(HOST_BAND * med, 3 * 1.4826 * mad)]


def moved_rounds(recs: list[dict[str, Any]]) -> set[tuple[str, int]]:
    """(sweep id, block) of every block of a settled sweep among RECS whose host reference moved
    (moved_blocks over that sweep's references, one a block, as its records carry them): the
    blocks the sweep left out of its verdicts, which a later judgement leaves out too."""
    refs: dict[str, dict[int, float]] = {}
    for r in recs:
        driver = r.get("driver") or {}
        s = driver.get("settle")
        if isinstance(s, dict) and isinstance(driver.get("sweep_id"), str) and isinstance(s.get("block"), int):
            gbs = s.get("host_gbs")
            if isinstance(gbs, (int, float)) and not isinstance(gbs, bool) and gbs > 0:
                refs.setdefault(driver["sweep_id"], {})[s["block"]] = float(gbs)
    out = set()
    for sweep_id, host in refs.items():
        blocks = [host.get(b) for b in range(max(host) + 1)]
        out |= {(sweep_id, b) for b in moved_blocks(blocks)}
    return out


def pair_rounds(a: list[tuple[float, Round | None]], b: list[tuple[float, Round | None]]) -> list[tuple[float, float]]:
    """(A's time, B's time) for each round of one sweep in which each side ran once (never a
    run paired with itself, as when one file is given as both sides), in the rounds' order."""
    sides: list[dict[tuple[str, int], list[tuple[float, str]]]] = [{}, {}]
    for side, runs in zip(sides, (a, b)):
        for t, r in runs:
            if r is not None:
                side.setdefault((r[0], r[1]), []).append((t, r[2]))
    out = []
    for key, x in sorted(sides[0].items()):  # in the order the rounds ran (a replay reads them so)
        y = sides[1].get(key)
        if y is not None and len(x) == 1 and len(y) == 1 and x[0][1] != y[0][1] and x[0][0] > 0 and y[0][0] > 0:
            out.append((x[0][0], y[0][0]))
    return out


def paired_interval(pairs: list[tuple[float, float]], level: float) -> tuple[float, float, float, float]:
    """(ratio, lo, hi, p) of B/A over PAIRS (A, B): the geometric mean of the paired ratios, its
    Student's t interval at LEVEL (e.g. 0.95), and the paired t-test's two-sided p. Two pairs at
    least."""
    from scipy import stats

    logs = [math.log(y / x) for x, y in pairs]
    k = len(logs)
    mean = statistics.fmean(logs)
    se = statistics.stdev(logs) / math.sqrt(k)
    half = _t(1 - (1 - level) / 2, k - 1) * se
    if se > 0:
        p = float(2 * stats.t.sf(abs(mean) / se, k - 1))
    else:
        p = 0.0 if mean != 0 else 1.0
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), p
