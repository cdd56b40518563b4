"""`pxq compare BASE NEW`: per configuration, NEW's median time over BASE's with a bootstrap
confidence interval and a Mann-Whitney U test (scipy), marked significant or not; and
reference values with tolerances per system. A significant regression is exit code 1.

A difference is significant when the bootstrap interval of the ratio of medians excludes 1
and the rank test's p-value is below 1 - confidence. With fewer than 4 runs on a side the
rank test cannot reach p < 0.05 however far apart the runs are, so such rows are "too few
runs" rather than a guess.

Paired: when BASE's and NEW's runs of a configuration come from one interleaved sweep (the
same sweep id, one run each in at least MIN_PAIRS of its rounds: repeats, or settled blocks),
they are compared round by round, as `pxq sweep --precision` does: the ratio is the geometric
mean of the paired ratios NEW/BASE, its interval Student's t interval of their logarithms,
p the paired t-test's; a drift of the machine then falls on both sides of each pair. Such a
row may also be "equivalent within +-threshold" (two one-sided tests: the interval at
1 - 2(1 - confidence) inside it). The sides' own spread does not make it "not judged": the
pairing is what answers that spread.
"""

from __future__ import annotations

import fnmatch
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pxq.analysis.exports import report
from pxq.analysis.verdicts import settle
from pxq.core import records
from pxq.core.errors import InputError

RESAMPLES = 4000
MIN_PAIRS = 4  # paired rounds a paired comparison needs (as the settled comparisons' first look)


@dataclass
class Comparison:
    label: str
    base: list[float]
    new: list[float]
    ratio: float  # NEW median time / BASE median time: above 1 is slower
    low: float | None
    high: float | None
    p: float | None
    verdict: str  # regression, improvement, same, equivalent, too few runs, within threshold, not judged: ...
    paired: int = 0  # rounds of one sweep the comparison paired (0: the sides compared unpaired)
    p_adjusted: float | None = None  # p after Holm's correction over every row with a p (holm)


def _label(row: report.Row, group_by: list[str]) -> str:
    extra = " ".join(f"{f.split('.')[-1]}={v}" for f, v in zip(group_by, row.extra))
    parts = [row.app, row.size, str(row.layout), row.mode, f"tile {row.tile}", row.backend, row.alloc, extra]
    return " ".join(p for p in parts if p)


def _key(row: report.Row) -> tuple:
    return (row.app, row.size, str(row.layout), row.alloc, row.mode, row.tile, row.backend, row.extra)


def statistics_of(
    base: list[float], new: list[float], confidence: float
) -> tuple[float | None, float | None, float | None]:
    """(low, high, p): the bootstrap interval of median(new)/median(base) and the two-sided
    Mann-Whitney p-value; None where there are too few runs for them."""
    if len(base) < 2 or len(new) < 2:
        return None, None, None
    import numpy as np
    from scipy import stats

    def ratio(n: Any, b: Any, axis: int = -1) -> Any:
        return np.median(n, axis=axis) / np.median(b, axis=axis)

    boot = stats.bootstrap(
        (np.asarray(new), np.asarray(base)),
        ratio,
        n_resamples=RESAMPLES,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(12345),
    )
    # scipy's "auto": the exact distribution for small samples without ties, the normal
    # approximation (tie-corrected) beyond, where the exact one takes minutes (86 s a row at 625
    # runs a side) and says nothing more.
    p = float(stats.mannwhitneyu(new, base, alternative="two-sided", method="auto").pvalue)
    return float(boot.confidence_interval.low), float(boot.confidence_interval.high), None if math.isnan(p) else p


def compare(
    base_recs: list[dict[str, Any]], new_recs: list[dict[str, Any]], confidence: float, threshold: float
) -> tuple[list[Comparison], list[str], list[str]]:
    """Comparisons of the configurations both sides ran, and the labels only one side has. A
    field that tells runs apart within a side splits the rows; one that differs only between
    the sides (another MPI library, host or commit) is what is being compared."""
    group_by = list(dict.fromkeys([*report.split_fields(base_recs), *report.split_fields(new_recs)]))
    base = {_key(r): r for r in report.summarize(base_recs, group_by)}
    new = {_key(r): r for r in report.summarize(new_recs, group_by)}
    out = []
    for key in [k for k in new if k in base]:
        b, n = base[key].times, new[key].times
        label = _label(new[key], group_by)
        both = pairs_of(base[key], new[key])
        if len(both) >= MIN_PAIRS:
            out.append(paired(label, b, n, both, confidence, threshold))
            continue
        out.append(_unpaired(label, base[key], new[key], confidence, threshold))
    holm(out, 1 - confidence)
    only_base = [_label(r, group_by) for k, r in base.items() if k not in new]
    only_new = [_label(r, group_by) for k, r in new.items() if k not in base]
    return out, only_base, only_new


def _unpaired(label: str, base: report.Row, new: report.Row, confidence: float, threshold: float) -> Comparison:
    """One configuration's medians compared: a bootstrap interval and a rank-sum test."""
    b, n = base.times, new.times
    ratio = statistics.median(n) / statistics.median(b)
    low, high, p = statistics_of(b, n, confidence)
    weak = _weak(base, new)
    if weak:
        verdict = f"not judged: {weak}"
    elif min(len(b), len(n)) < 4:
        verdict = "too few runs"
    elif p is None or low is None or high is None:  # the interval exists wherever the p-value does
        verdict = "not judged: the rank test gives no p-value (every run of both sides tied)"
    elif low > 1 and p < 1 - confidence:
        verdict = "regression" if ratio > 1 + threshold else "within threshold"
    elif high < 1 and p < 1 - confidence:
        verdict = "improvement" if ratio < 1 - threshold else "within threshold"
    else:
        verdict = "same"
    return Comparison(label, b, n, ratio, low, high, p, verdict)


SIGNIFICANT = ("regression", "improvement", "within threshold")


def holm(rows: list[Comparison], alpha: float) -> None:
    """Holm's step-down correction over every row with a p-value: a row is significant only
    when its adjusted p is below ALPHA, so that a gate over many configurations with no real
    change calls none of them a regression more often than ALPHA (1,024 unchanged rows gave 8
    "regressions" without it). Each row keeps its adjusted p; a row the correction takes back
    says so."""
    tested = sorted(((r.p, r) for r in rows if r.p is not None), key=lambda pr: pr[0])
    m, running = len(tested), 0.0
    for i, (p, row) in enumerate(tested):
        running = max(running, min(1.0, (m - i) * p))
        row.p_adjusted = running
        if m > 1 and row.verdict in SIGNIFICANT and running >= alpha:
            row.verdict = f"same (p {row.p:.3f}, {running:.3f} after Holm's correction over {m} comparisons)"


def pairs_of(base: report.Row, new: report.Row) -> list[tuple[float, float]]:
    """(BASE time, NEW time) for each round of one interleaved sweep in which each side ran once."""
    return settle.pair_rounds(list(zip(base.times, base.rounds)), list(zip(new.times, new.rounds)))


def paired(
    label: str, b: list[float], n: list[float], both: list[tuple[float, float]], confidence: float, threshold: float
) -> Comparison:
    """A comparison of PAIRS (BASE, NEW) of one sweep's rounds (see the module's note)."""
    from scipy import stats

    ratio, low, high, p = settle.paired_interval(both, confidence)
    logs = [math.log(nt / bt) for bt, nt in both]
    k, mean = len(logs), math.log(ratio)
    tost = float(stats.t.ppf(confidence, k - 1)) * statistics.stdev(logs) / math.sqrt(k)
    bound = math.log1p(threshold) if threshold > 0 else 0.0
    if low > 1:
        verdict = "regression" if ratio > 1 + threshold else "within threshold"
    elif high < 1:
        verdict = "improvement" if ratio < 1 - threshold else "within threshold"
    elif bound > 0 and -bound <= mean - tost and mean + tost <= bound:
        verdict = "equivalent"
    else:
        verdict = "same"
    return Comparison(label, b, n, ratio, low, high, p, verdict, paired=k)


def _weak(base: report.Row, new: report.Row) -> str:
    """Why a verdict on this pair would be noise, and what it would need; "" when there is none.
    The report flags the same rows (short, noisy, loaded)."""
    why = []
    for side, row in (("BASE", base), ("NEW", new)):
        flags = row.flags
        if "short" in flags:
            why.append(f"{side} median {row.median:.4f} s is under {report.MIN_SECONDS} s (use a larger problem)")
        if "noisy" in flags:
            why.append(
                f"{side} spread {row.spread:.0%} is above {report.MAX_SPREAD:.0%} (add repeats, quiet the machine)"
            )
        if "loaded" in flags:
            why.append(f"{side} has a run that started beside other work (its load average; run again on a quiet host)")
    return "; ".join(why)


def differences(base_recs: list[dict[str, Any]], new_recs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The fields that tell the runs apart (report.DISTINGUISH) with one value on each side and
    a different one: (field, BASE's value, NEW's value)."""
    out = []
    for field in report.DISTINGUISH:
        sides = [{" ".join(str(report.field_value(r, field)).split()) for r in recs} for recs in (base_recs, new_recs)]
        if len(sides[0]) == 1 and len(sides[1]) == 1 and sides[0] != sides[1]:
            out.append((field, sides[0].pop(), sides[1].pop()))
    return out


# ---- references: expected medians with tolerances per system ----

MATCH_FIELDS = ("app", "size", "layout", "mode", "tile", "backend", "alloc")


@dataclass
class Check:
    label: str
    system: str
    host: str
    median: float
    expected: float
    lower: float
    upper: float
    entry: int = -1  # its index in the references file

    @property
    def passed(self) -> bool:
        return self.expected * (1 + self.lower) <= self.median <= self.expected * (1 + self.upper)


def read_references(path: Path) -> list[dict[str, Any]]:
    """`{"references": [{"system": "host glob", "app": "ring", "layout": "1x2", ...,
    "median_s": 0.37, "lower": -0.5, "upper": 0.1}]}`: lower and upper are relative."""
    try:
        data = records.json_file(path, 'not JSON: give {"references": [...]} (see docs/RESULTS.md, "Comparisons")')
    except FileNotFoundError:
        raise InputError(f"--reference {path}: no such file") from None
    refs = data.get("references") if isinstance(data, dict) else None
    if not isinstance(refs, list) or not refs:
        raise InputError(f'--reference {path}: expected {{"references": [...]}} with at least one entry')
    for i, ref in enumerate(refs):
        missing = [k for k in ("system", "median_s", "lower", "upper") if k not in ref]
        if missing:
            raise InputError(f"--reference {path}: entry {i} lacks {', '.join(missing)}")
        if not (ref["lower"] <= 0 <= ref["upper"]) or ref["median_s"] <= 0:
            raise InputError(
                f"--reference {path}: entry {i}: need median_s > 0 and lower <= 0 <= upper (relative tolerances)"
            )
    return refs


def unmatched_references(recs: list[dict[str, Any]], refs: list[dict[str, Any]]) -> list[int]:
    """The entries (by index) that match no configuration and host of `recs`."""
    matched = {c.entry for c in check_references(recs, refs)}
    return [i for i in range(len(refs)) if i not in matched]


def check_references(recs: list[dict[str, Any]], refs: list[dict[str, Any]]) -> list[Check]:
    group_by = [*report.split_fields(recs, ["context.host"])]
    rows = report.summarize(recs, group_by)
    host_at = group_by.index("context.host")
    out = []
    for row in rows:
        facts = {
            "app": row.app,
            "size": row.size,
            "layout": str(row.layout),
            "mode": row.mode,
            "tile": row.tile,
            "backend": row.backend,
            "alloc": row.alloc,
        }
        host = row.extra[host_at]
        for i, ref in enumerate(refs):
            if fnmatch.fnmatch(host, ref["system"]) and all(str(ref[f]) == facts[f] for f in MATCH_FIELDS if f in ref):
                label = _label(row, group_by)
                out.append(
                    Check(label, ref["system"], host, row.median, ref["median_s"], ref["lower"], ref["upper"], i)
                )
    return out
