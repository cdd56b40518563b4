"""Every record kind through every reader, mutated field by field (fuzz_records.py): a seeded
property-based run with hypothesis. Each reader may refuse a mutated record (exit 2, naming
it) or report it, never crash, hang or print an escape sequence it read. CI runs the fuzzer
longer (.ci/run: `python tests/faults/fuzz_records.py SECONDS`)."""

import os
import random

import fuzz_records as fuzz
import matplotlib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

matplotlib.use("Agg")
SEEDS = fuzz.corpus()
EXAMPLES = int(os.environ.get("PXQ_FUZZ_EXAMPLES", "40"))


def test_the_corpus_holds_every_kind_of_record():
    assert {"run", "probe", "profile", "study"} <= set(SEEDS), sorted(SEEDS)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_reader_crashes_on_a_mutated_record(data, tmp_path):
    kind = data.draw(st.sampled_from(sorted(SEEDS)), label="kind")
    rec = data.draw(st.sampled_from(SEEDS[kind]), label="record")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    mutated, how = fuzz.mutate(rec, random.Random(seed), data.draw(st.integers(1, 3), label="changes"))
    assert fuzz.read_with_every_reader(kind, [mutated], tmp_path) == [], how


def test_the_fuzzer_finds_a_crash_when_a_reader_has_one(tmp_path, monkeypatch):
    """The fuzzer's own check can fail: a reader that crashes on a record is reported."""
    from pxq.analysis.exports import report

    monkeypatch.setattr(report, "print_table", lambda *a, **k: (_ for _ in ()).throw(KeyError("boom")))
    monkeypatch.setattr(fuzz, "readers", lambda kind, path, tmp: [["report", str(path)]])
    from pxq.core import records

    monkeypatch.setattr(records, "DATA_ERRORS", ())  # the guard off: the crash reaches the fuzzer
    assert fuzz.read_with_every_reader("run", [SEEDS["run"][0]], tmp_path)
