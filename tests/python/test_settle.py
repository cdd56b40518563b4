"""Settled comparisons (pxq.analysis.verdicts.settle, pxq.experiments.settling): the verdicts on paired
ratios, their false-positive rate over the looks (simulated), how fast a clear effect settles, and
the blocks loop with a stand-in for the runs (no MPI: the runner is replaced)."""

from __future__ import annotations

import io
import json
import math
import random
import statistics
from pathlib import Path

import pytest
from rich.console import Console

from pxq.analysis.verdicts import settle
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.experiments import runner, settling
from pxq.experiments.runner import RunResult, RunSpec
from pxq.machine import caches, envinfo


def simulated(effect: float, sd: float, rule: settle.Rule, rng: random.Random, replay: bool = False) -> settle.Verdict:
    """One pair run to its end: paired log-ratios with mean log(effect) and spread SD, judged after every block."""
    ratios: list[float] = []
    verdict = settle.judge([], rule)
    for _ in range(rule.max_blocks):
        ratios.append(math.exp(math.log(effect) + rng.gauss(0, sd)))
        verdict = settle.judge(ratios, rule)
        if verdict.settled:
            break
    if replay:
        assert settle.replay(ratios, rule) == verdict  # the records judged again reach the same verdict
    return verdict


def test_the_schedule_and_its_shared_level():
    rule = settle.Rule(max_blocks=20)
    assert rule.schedule == [4, 6, 9, 14, 20]
    assert rule.look_level(4) == pytest.approx(0.01) and rule.look_level(9) == pytest.approx(0.01 / 4)
    spent = sum(rule.look_level(b) for b in rule.schedule) + rule.final_level
    assert spent == pytest.approx(0.035)  # 1.5% the stop on a narrow interval may take (simulated below)
    assert settle.Rule(max_blocks=4).schedule == [4]
    with pytest.raises(InputError, match="--precision"):
        settle.Rule(precision=0.9).check()
    with pytest.raises(InputError, match="--max-blocks"):
        settle.Rule(max_blocks=3).check()


@pytest.mark.parametrize("sd", [0.02, 0.06, 0.1, 0.2])
def test_identical_configurations_are_called_faster_at_most_at_the_stated_rate(sd):
    """A against A, 1500 simulated sweeps each (up to 200 blocks, so that the narrow-interval
    stop is reached at every spread): 'faster' or 'slower' in at most 5% (the rule's alpha), the
    rest equivalent or unsettled."""
    rule = settle.Rule(precision=0.05, max_blocks=200)
    rng = random.Random(int(sd * 1000))
    verdicts = [simulated(1.0, sd, rule, rng, replay=sd < 0.1) for _ in range(1500)]
    wrong = sum(v.kind in ("faster", "slower") for v in verdicts) / len(verdicts)
    assert wrong <= 0.05, wrong
    if sd <= 0.02:  # quiet: shown the same within the precision
        assert sum(v.kind == "equivalent" for v in verdicts) / len(verdicts) > 0.9


def test_a_sweep_that_stops_between_looks_gives_its_pairs_the_last_look():
    """A budget that stops the blocks, or a block left out, leaves a pair between two looks: it
    gets the last look then (its share of alpha was never spent), and A against A stopped at any
    block is still called faster or slower in at most 5%."""
    rule = settle.Rule(precision=0.05, max_blocks=20)
    rng = random.Random(19)
    ratios = [math.exp(math.log(0.8) + rng.gauss(0, 0.18)) for _ in range(19)]  # 19 kept of 20 blocks
    between = settle.judge(ratios, rule)
    assert between.kind == "unsettled"  # 19 is not a look, the interval is not narrow
    # Its interval, clear of 1, is not what a look tests: the text says why it settles nothing.
    assert between.hi is not None and between.hi < 1
    assert "clear of 1, but not at the stricter level a look tests" in between.text()
    assert settle.judge(ratios, rule, left_out=1, last=True).kind == "faster"
    assert settle.replay(ratios, rule, left_out=1).kind == "faster"  # the records judged again agree
    wrong = 0
    for _ in range(1500):
        stop = rng.randrange(settle.MIN_BLOCKS, rule.max_blocks)  # the budget's block
        kept: list[float] = []
        verdict = settle.judge([], rule)
        for n in range(stop):
            kept.append(math.exp(rng.gauss(0, 0.1)))
            verdict = settle.judge(kept, rule, last=n == stop - 1)
            if verdict.settled:
                break
        wrong += verdict.kind in ("faster", "slower")
    assert wrong / 1500 <= 0.05, wrong / 1500


def test_a_clear_effect_settles_in_four_blocks():
    """Tiled against untiled on a noisy host (2.5x, 20% spread of the paired ratios): settled
    as faster at the first look, 4 blocks, in at least 90% of simulated sweeps."""
    rule = settle.Rule(precision=0.05)
    rng = random.Random(7)
    verdicts = [simulated(1 / 2.5, 0.2, rule, rng, replay=True) for _ in range(300)]
    assert all(v.kind == "faster" for v in verdicts)
    assert sum(v.blocks == 4 for v in verdicts) / len(verdicts) >= 0.9
    v = verdicts[0]
    r, lo, hi = v.speedup()
    assert lo < r < hi and 2.0 < r < 3.2 and "x faster [" in v.text()


def test_equivalence_and_what_is_said_when_unsettled():
    rule = settle.Rule(precision=0.05)
    same = settle.judge([1.001, 0.999, 1.002, 0.998, 1.0, 1.001], rule)
    assert same.kind == "equivalent" and same.margin == pytest.approx(0.05) and "within +-5.0%" in same.text()
    noisy = settle.judge([1.3, 0.8, 1.25, 0.78], rule)
    assert noisy.kind == "unsettled" and noisy.needed and noisy.needed > 4
    assert "about" in noisy.text() and "blocks would settle it" in noisy.text()
    assert "(time ratio 1.00x [0.50-2.02])" in noisy.text() and "clear of 1" not in noisy.text()
    few = settle.judge([2.0, 2.1], rule)
    assert few.kind == "unsettled" and few.needed == settle.MIN_BLOCKS


def test_an_order_whose_interval_reaches_into_the_margin_says_a_rerun_may_find_them_equivalent():
    """CG's hybrid against its flat run was "1.07x slower [1.01-1.13]" in one sweep and
    equivalent within +-5% in the next: the direction was shown, a difference beyond the margin
    was not. Such an order says so; one whose interval clears the margin does not."""
    rule = settle.Rule(precision=0.05)
    ratios = [1.07, 1.02, 1.11, 1.05, 1.09, 1.03, 1.12, 1.06]
    marginal = settle.judge(ratios, rule)
    assert marginal.kind == "slower" and marginal.lo is not None and 1 < marginal.lo < 1.05, marginal
    assert marginal.near == pytest.approx(0.05) and marginal.record()["near_margin"] == pytest.approx(0.05)
    assert "(its near end within +-5%: a rerun may find them equivalent)" in marginal.text()
    faster = settle.judge([1 / r for r in ratios], rule)
    assert faster.kind == "faster" and faster.near == pytest.approx(0.05) and "a rerun may" in faster.text()
    clear = settle.judge([1.5, 1.52, 1.49, 1.51], rule)
    assert clear.kind == "slower" and clear.near is None and "rerun" not in clear.text()
    inside = settle.judge([1.04, 1.037, 1.043, 1.041, 1.039, 1.04, 1.042, 1.038], rule)  # [1.03-1.05]
    assert inside.kind == "slower" and inside.near == pytest.approx(0.05)
    assert "(its whole interval within +-5%: equivalent within that margin too)" in inside.text()
    wider = settle.judge(ratios, settle.Rule(0.05, margin=0.01))
    assert wider.kind == "slower" and wider.near is None  # the interval clears a 1% margin


@pytest.mark.parametrize("sd", [0.04, 0.06, 0.08, 0.12])
def test_the_cost_against_a_design_that_knew_the_noise(sd):
    """The blocks a settled pair takes, against those a fixed design would need knowing the
    spread in advance (same precision, a normal interval at 5%, no looks): at most 1.5 times,
    on average over 1000 simulated sweeps of identical configurations."""
    rule = settle.Rule(precision=0.05, max_blocks=200)
    rng = random.Random(int(sd * 1000) + 3)
    verdicts = [simulated(1.0, sd, rule, rng) for _ in range(1000)]
    assert all(v.settled for v in verdicts)
    cost = statistics.fmean(v.blocks for v in verdicts) / settle.known_noise_blocks(sd, rule)
    assert 0.8 <= cost <= 1.5, cost


# ---- the blocks loop, with the runs replaced by a stand-in ----


class FakeRuns:
    """runner.execute's stand-in: each configuration's time is its base times a per-block
    drift (alike for all, as a machine state would be) times a little noise."""

    def __init__(self, base: dict[str, float], seed: int = 1):
        self.base, self.rng, self.calls = base, random.Random(seed), []
        self.drift: dict[int, float] = {}

    def __call__(self, spec: RunSpec) -> RunResult:
        mode = spec.resolved()[0]
        block = spec.repeat
        drift = self.drift.setdefault(block, self.rng.choice([1.0, 1.8]))  # the host's two states
        t = self.base[mode] * drift * math.exp(self.rng.gauss(0, 0.03))
        self.calls.append((block, mode))
        rec = {"status": "ok", "time": {"total": t}, "driver": dict(spec.driver_extra)}
        return RunResult("ok", 0, t, "", rec)


def configs(tmp_path: Path) -> list[RunSpec]:
    base = RunSpec(app="ring", layout=Layout(1, 2), results=tmp_path / "r.jsonl", app_args=["--iterations", "10"])
    return [RunSpec(**{**base.__dict__, "mode": "flat"}), RunSpec(**{**base.__dict__, "mode": "tiled", "tile": "256K"})]


def test_blocks_run_shuffled_and_stop_when_every_pair_is_settled(tmp_path, monkeypatch):
    fake = FakeRuns({"flat": 1.0, "tiled": 0.4})
    monkeypatch.setattr(runner, "execute", fake)
    monkeypatch.setattr(settling, "calibrate", lambda c, console: (c, ""))
    monkeypatch.setattr(settling, "host_reference", lambda threads: 10.0)
    cs = configs(tmp_path)
    out = settling.run(cs, settling.baseline_pairs(cs), settle.Rule(), 600, Console(quiet=True), seed=5)
    assert out.stopped == "settled" and out.blocks == 4  # the host's two states are paired away
    v = out.pairs[0].verdict
    assert v.kind == "faster" and 2.2 < v.speedup()[0] < 2.8
    blocks = {}
    for block, mode in fake.calls:
        blocks.setdefault(block, []).append(mode)
    assert all(sorted(m) == ["flat", "tiled"] for m in blocks.values())  # every block holds every configuration
    assert len({tuple(m) for m in blocks.values()}) == 2  # in shuffled orders
    assert all(r["driver"]["settle"]["block"] in blocks for r in out.records)


def close_pair_on_a_slow_clock(monkeypatch) -> None:
    """Two configurations 2% apart, no host reference, and a clock that moves 30 s a reading."""
    monkeypatch.setattr(runner, "execute", FakeRuns({"flat": 1.0, "tiled": 0.98}))
    monkeypatch.setattr(settling, "calibrate", lambda c, console: (c, ""))
    monkeypatch.setattr(settling, "host_reference", lambda threads: None)
    clock = iter(range(0, 10_000, 30))
    monkeypatch.setattr(settling.time, "monotonic", lambda: next(clock))


def test_the_budget_stops_the_blocks_and_the_verdict_says_unsettled(tmp_path, monkeypatch):
    close_pair_on_a_slow_clock(monkeypatch)
    cs = configs(tmp_path)
    out = settling.run(cs, settling.baseline_pairs(cs), settle.Rule(precision=0.001), 100, Console(quiet=True))
    assert out.stopped == "budget" and out.blocks < 20
    assert out.pairs[0].verdict.kind in ("unsettled", "faster")


def test_blocks_whose_host_moved_are_left_out_and_counted():
    host = [10.0, 10.2, 9.9, 10.1, 5.0, 10.0, 9.8]
    assert settle.moved_blocks(host) == [4]
    assert settle.moved_blocks([10.0, None, 10.1]) == []


def test_the_budget_text():
    assert settling.parse_budget("5m") == 300 and settling.parse_budget("90s") == 90
    assert settling.parse_budget(None) == 600
    for bad in ("abc", "1s", "9999999h", "nan"):
        with pytest.raises(InputError, match="--budget"):
            settling.parse_budget(bad)


def test_a_settled_sweep_is_judged_again_from_its_records_alone(tmp_path, monkeypatch):
    """What report shows for a settled sweep's file: the same verdicts from the records' blocks."""
    fake = FakeRuns({"flat": 1.0, "tiled": 0.5}, seed=3)
    monkeypatch.setattr(runner, "execute", fake)
    monkeypatch.setattr(settling, "calibrate", lambda c, console: (c, ""))
    monkeypatch.setattr(settling, "host_reference", lambda threads: 10.0)
    cs = configs(tmp_path)
    out = settling.run(cs, settling.baseline_pairs(cs), settle.Rule(), 600, Console(quiet=True), seed=2)
    recs = []
    for rec, spec in zip(out.records, [c for c in fake.calls]):
        mode = spec[1]
        layout = {"nodes": 1, "ranks_per_node": 2, "threads": 1}
        key = {"app": "ring", "layout": "1x2", "mode": mode, "args": ["--iterations", "10"], "repeat": spec[0]}
        recs.append(
            {
                **rec,
                "kind": "run",
                "app": "ring",
                "layout": layout,
                "variant": {"mode": mode, "tile_bytes": 262144 if mode == "tiled" else 0},
                "driver": {**rec["driver"], "sweep_id": "s1", "sweep_key": json.dumps(key, sort_keys=True)},
            }
        )
    again = settling.from_records(recs)
    assert again is not None and again.stopped == "recorded" and again.blocks == out.blocks
    assert again.pairs[0].verdict.kind == out.pairs[0].verdict.kind == "faster"
    assert again.pairs[0].verdict.ratio == pytest.approx(out.pairs[0].verdict.ratio)
    assert settling.from_records([{k: v for k, v in r.items() if k != "driver"} for r in recs]) is None


def test_the_figure_of_settled_comparisons(tmp_path):
    from pxq.figures import settled

    verdicts = [
        settle.judge([0.4, 0.42, 0.39, 0.41], settle.Rule()),
        settle.judge([1.0, 1.001, 0.999, 1.0], settle.Rule()),
        settle.judge([1.3, 0.8, 1.25, 0.78], settle.Rule()),
    ]
    names = ["1x2 flat", "1x2 tiled 256K", "1x1x2 hybrid", "2x1 flat"]
    path = settled.plot(names, [(0, 1, verdicts[0]), (0, 2, verdicts[1]), (0, 3, verdicts[2])], tmp_path / "s.png", "t")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_an_experiment_file_asks_for_a_settled_sweep(tmp_path):
    from pxq.experiments import expfile

    good = tmp_path / "e.toml"
    good.write_text('app = "ring"\nprecision = 0.05\nbudget = "2m"\npairs = "all"\nmax_blocks = 9\n')
    data, _ = expfile.load(good)
    assert data["precision"] == 0.05 and data["max_blocks"] == 9
    bad = tmp_path / "b.toml"
    bad.write_text('app = "ring"\nprecision = 0.9\n')
    with pytest.raises(InputError, match="precision"):
        expfile.load(bad)


def test_the_demo_tables_the_runs_its_verdicts_rest_on_and_flags_no_drift_that_pairing_cancels():
    """The blocks the host moved under are left out of the table as of the verdicts; a settled
    row's spread between blocks is not flagged "noisy" (its comparisons pair within a block)."""
    from pxq.analysis.exports import report
    from pxq.experiments import demo

    def rec(block: int, seconds: float, host: float) -> dict:
        return {
            "kind": "run",
            "status": "ok",
            "app": "ring",
            "time": {"total": seconds},
            "driver": {"sweep_id": "s1", "run_id": f"r{block}", "settle": {"block": block, "host_gbs": host}},
        }

    recs = [rec(b, 1.0 + 0.2 * (b % 2), 20.0) for b in range(5)] + [rec(5, 9.0, 40.0)]
    kept = demo.kept_runs(recs)
    assert [r["driver"]["settle"]["block"] for r in kept] == [0, 1, 2, 3, 4]
    row = report.Row(
        "ring", Layout(1, 2), "block", "flat", "off", "openmp", "64M", [1.0, 1.4, 1.0, 1.4, 1.0], [], [], True
    )
    assert "noisy" in row.flags
    row.paired = True
    assert "noisy" not in row.flags


def test_the_demo_counts_the_blocks_its_verdicts_rest_on():
    from pxq.experiments import demo, settling

    out = settling.Outcome([], [], [], 6, "settled", moved=[2])
    assert demo.blocks_text(out) == "5 paired blocks, 1 more left out: the host moved"
    assert demo.blocks_text(settling.Outcome([], [], [], 4, "settled")) == "4 paired blocks"


def test_a_pair_settled_on_blocks_flagged_later_is_judged_again_without_them(tmp_path, monkeypatch):
    """The host's reference flags blocks only once enough references say where it stands: a pair
    that settled at block 4 on blocks 1 and 2, flagged at block 6, is opened again and runs until
    it settles without them; its verdict is the one `pxq report` makes of the file."""
    fake = FakeRuns({"flat": 1.0, "tiled": 0.4, "hybrid": 0.97})
    monkeypatch.setattr(runner, "execute", fake)
    monkeypatch.setattr(settling, "calibrate", lambda c, console: (c, ""))
    refs = iter([10.0, 10.0, 13.0, 13.0] + [13.0] * 30)  # 4 references: none moved; 6: the first two
    monkeypatch.setattr(settling, "host_reference", lambda threads: next(refs))
    cs = configs(tmp_path)
    cs.append(RunSpec(**{**cs[0].__dict__, "mode": "hybrid", "layout": Layout(1, 1, 2)}))
    rule = settle.Rule(precision=0.005)
    out = settling.run(cs, settling.baseline_pairs(cs), rule, 600, Console(quiet=True), seed=4)
    assert out.blocks > 6 and out.moved == [0, 1]
    tiled = next(p for p in out.pairs if out.names[p.other].endswith("256K"))
    # It settled "faster" over blocks 1-4, then ran again: settled without the first two.
    assert tiled.verdict.left_out == 2 and tiled.verdict.blocks >= 4 and tiled.verdict.kind == "faster"
    ran = sorted(block for block, mode in fake.calls if mode == "tiled")
    assert ran[:4] == [0, 1, 2, 3] and len(ran) >= 6


def test_a_budget_too_short_for_close_pairs_is_said_after_the_first_block(tmp_path, monkeypatch):
    assert settling.budget_note(65, 235) == (
        "budget: a block took 65 s, so what is left allows about 3 more; pairs a few % apart often need 15 or "
        "more on a noisy host: --budget 17m would allow 15"
    )
    assert "the first verdict needs 4" in settling.budget_note(65, 100)
    assert settling.budget_note(2, 600) == ""  # 300 blocks: nothing to say
    close_pair_on_a_slow_clock(monkeypatch)
    buf = io.StringIO()
    cs = configs(tmp_path)
    settling.run(cs, settling.baseline_pairs(cs), settle.Rule(precision=0.001), 300, Console(file=buf, width=300))
    assert buf.getvalue().count("budget: a block took") == 1


def test_the_host_reference_streams_past_the_last_level_cache(monkeypatch):
    """On the 16-core node of 2026-12-04 (300 MiB of L3 reported) three 64 MiB arrays stayed in
    the cache: the references read 157-260 GB/s against 106 GB/s from memory, and the blocks it
    left out followed the cache's state. The arrays grow to twice the last level hwloc reports."""

    def with_caches(found):
        monkeypatch.setattr(envinfo, "machine", found)
        settling.reference_bytes.cache_clear()
        return settling.reference_bytes()

    def no_envinfo():
        raise InputError("pxq-envinfo is missing")

    monkeypatch.setattr(caches, "available_memory", lambda: 128 << 30)
    try:
        assert with_caches(lambda: {"caches": {"l2": {"bytes": 1 << 20}, "l3": {"bytes": 32 << 20}}}) == 64 << 20
        assert with_caches(lambda: {"caches": {"l2": {"bytes": 2 << 20}, "l3": {"bytes": 300 << 20}}}) == 600 << 20
        assert with_caches(lambda: {"caches": {"l2": {"bytes": 4 << 20}}}) == 64 << 20  # no L3: the L2 is last
        assert with_caches(no_envinfo) == 64 << 20  # hwloc unread: the default
        monkeypatch.setattr(caches, "available_memory", lambda: 3 << 30)  # a quarter of it for three arrays
        assert with_caches(lambda: {"caches": {"l3": {"bytes": 300 << 20}}}) == 256 << 20
    finally:
        settling.reference_bytes.cache_clear()
