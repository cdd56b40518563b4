import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest
from conftest import RUN_RECORD

from pxq.core import records
from pxq.core.errors import InputError


def _writer(path, worker, count):
    for i in range(count):
        # Large records (~64 KiB) make interleaving likely if appends were not atomic.
        records.append(path, dict(RUN_RECORD, worker=worker, i=i, pad="x" * 65536))


def test_concurrent_appends_never_interleave(tmp_path):
    path = tmp_path / "r.jsonl"
    procs = [mp.Process(target=_writer, args=(path, w, 20)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    recs = records.read(path)
    assert len(recs) == 80
    assert sorted((r["worker"], r["i"]) for r in recs) == [(w, i) for w in range(4) for i in range(20)]


def test_corrupt_line_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    records.append(path, RUN_RECORD)
    with open(path, "a") as f:
        f.write('{"app": "ring", "sta\n')
    with pytest.raises(records.RecordError, match=r"r.jsonl:2"):
        records.read(path)


def test_non_record_json_is_rejected(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps([1, 2]) + "\n")
    with pytest.raises(records.RecordError, match="not a pxq record"):
        records.read(path)


def test_missing_file_reads_as_empty(tmp_path):
    assert records.read(tmp_path / "none.jsonl") == []


def test_check_writable(tmp_path):
    records.check_writable(tmp_path / "new.jsonl")  # parent exists: fine
    assert not (tmp_path / "new.jsonl").exists()  # and nothing was created
    with pytest.raises(InputError, match="does not exist"):
        records.check_writable(tmp_path / "missing" / "r.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        records.check_writable(tmp_path)
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(InputError, match="not writable"):
            records.check_writable(ro / "r.jsonl")


def test_completed_keys_only_counts_verified_runs():
    recs = [
        {"app": "ring", "status": "ok", "driver": {"sweep_key": "a"}},
        {"app": "ring", "status": "failed", "driver": {"sweep_key": "b"}},
        {"app": "ring", "status": "timeout", "driver": {"sweep_key": "c"}},
        {"app": "ring", "status": "ok", "driver": {}},
    ]
    assert records.completed_keys(recs) == {"a"}


def _appender(path, count):
    for i in range(count):
        records.append(path, dict(RUN_RECORD, i=i))


def _damager(path, count):
    """A writer whose lines are damaged (a bug, a cut-short record): whole lines that are no
    record, written the way every pxq writer writes, under the lock on the file's current inode."""
    for i in range(count):
        fd = records._open_locked(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, b'{"damaged": %d\n' % i)
        finally:
            os.close(fd)


def test_repair_beside_running_appends_loses_no_record(tmp_path, monkeypatch):
    """One process appends 3000 records, another writes 300 damaged lines, and repair runs in
    a loop the while: every record stays exactly once, every damaged line is set aside."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # the lock is under test, not the disk
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"")
    ctx = mp.get_context("fork")
    writers = [ctx.Process(target=_appender, args=(path, 3000)), ctx.Process(target=_damager, args=(path, 300))]
    for p in writers:
        p.start()
    repairs = 0
    while any(p.is_alive() for p in writers):
        records.repair(path)
        repairs += 1
        time.sleep(0.002)
    for p in writers:
        p.join()
        assert p.exitcode == 0
    records.repair(path)
    kept = records.read(path)
    assert sorted(r["i"] for r in kept) == list(range(3000)), f"{3000 - len(kept)} records lost in {repairs} repairs"
    damaged = path.with_name("r.jsonl.damaged").read_bytes().splitlines()
    assert sorted(damaged) == sorted(b'{"damaged": %d' % i for i in range(300))
    assert repairs >= 3  # the repairs did run beside the writers (without the lock, 2 lost 1300 records)


def test_repair_on_a_full_disk_leaves_both_files_as_they_were(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    good = json.dumps(RUN_RECORD).encode() + b"\n"
    path.write_bytes(good + b"{broken\n" + good)

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(records.RecordError, match="No space left on device; the file is unchanged"):
        records.repair(path)
    monkeypatch.undo()
    assert path.read_bytes() == good + b"{broken\n" + good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]  # no empty .damaged, no temporary file
    kept, removed = records.repair(path)
    assert kept == 2 and removed[0][0] == 2 and "not a JSON record" in removed[0][1]


def test_the_drivers_own_run_folder_is_read_before_the_schema(tmp_path):
    """An app's record before the driver completes it (its counters block not yet filled) is
    read from the run's private folder within the bounds; anywhere else it is refused."""
    path = tmp_path / "record.jsonl"
    partial = dict(RUN_RECORD, counters={"source": "sim"})
    path.write_text(json.dumps(partial) + "\n")
    assert records.read(path, check=False) == [partial]
    with pytest.raises(records.RecordError, match="not a valid run record: counters"):
        records.read(path)
    path.write_text("[1]\n" + "[" * 40 + "]" * 40 + "\n")
    with pytest.raises(records.RecordError, match=":1: not a pxq record"):
        records.read(path, check=False)


def test_the_depth_guard_costs_a_small_constant_not_a_multiple_of_the_line():
    """The door's nesting check on an 8 MB record line (a P x P message matrix) keeps nothing but
    the depth: under 1 MB of Python memory, where it once took 90x the line; strings and TOML
    comments still hide their brackets."""
    import json
    import tracemalloc

    from pxq.core import door

    matrix = [[i * 0.5 + j for j in range(1000)] for i in range(1000)]
    line = json.dumps({"messages": {"by_peer": matrix}, "names": ["x]}"] * 50000}).encode()
    assert len(line) > 7_000_000
    tracemalloc.start()
    try:
        assert door.nesting(line) == 4
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert door.nesting(b'{"a": [[[1]]], "b": "[[[[[[\\"[["}') == 4
    assert door.nesting(b'a = [[1], "[[["]  # [[[[\nb = {c = [1]}', door.TOML_STRINGS) == 2
    assert door.nesting(b"[" * 40 + b"]" * 40) == 40


def test_a_sweep_finds_its_own_records_without_decoding_the_others(tmp_path, monkeypatch):
    """Reading back a sweep's records (and a resume's plan) decodes only the lines holding its
    id: a results file of thousands of other runs costs a byte search per line, not a parse and
    a schema check each."""
    from pxq.core import records

    data = Path(__file__).parent / "data" / "figures" / "runs.jsonl"
    rec = next(r for r in map(json.loads, data.read_text().splitlines()) if r.get("status") == "ok")
    other = json.dumps({**rec, "driver": {**rec["driver"], "sweep_id": "aaaa", "run_id": "r"}}) + "\n"
    mine = json.dumps({**rec, "driver": {**rec["driver"], "sweep_id": "bbbb", "run_id": "s"}}) + "\n"
    path = tmp_path / "big.jsonl"
    path.write_text(other * 5000 + mine + other * 5000)
    decoded = []
    real = records.decode_line
    monkeypatch.setattr(records, "decode_line", lambda raw: decoded.append(raw) or real(raw))
    got = records.read_own(path, containing=b"bbbb")
    assert [r["driver"]["run_id"] for r in got] == ["s"] and len(decoded) == 1
    assert len(records.read_own(path)) == 10001  # without it: every line, as before
    with path.open("a") as f:
        f.write("this is no record\n")  # another process's line: still said, though not decoded
    warned = []
    monkeypatch.setattr(records.escape, "warn", warned.append)
    assert len(records.read_own(path, containing=b"bbbb")) == 1
    assert warned and "line(s) 10002 are not records" in warned[0] and "pxq repair" in warned[0]


def test_a_results_file_is_read_a_line_at_a_time_in_memory_of_one_record(tmp_path):
    """records.stream (every reader's path: report, validate, compare, roofline) holds one line and
    one record, not the file: reading an 8 MB file peaks far below its size."""
    import tracemalloc

    from pxq.core import records

    path = tmp_path / "many.jsonl"
    line = (json.dumps(RUN_RECORD) + "\n").encode()
    path.write_bytes(line * (8_000_000 // len(line)))
    tracemalloc.start()
    try:
        n = sum(1 for rec in records.stream(path, check=False) if rec is not None)  # the schema keeps nothing
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == 8_000_000 // len(line)
    assert peak < 3 << 20, f"{peak} bytes to stream an 8 MB file"


def test_an_overlong_line_is_refused_by_its_size_without_being_held(tmp_path, monkeypatch):
    from pxq.core import door, records

    monkeypatch.setattr(records, "MAX_LINE", 10_000)
    path = tmp_path / "long.jsonl"
    first = (json.dumps(RUN_RECORD) + "\n").encode()
    path.write_bytes(first + b'{"x": "' + b"y" * 500_000 + b'"}\n' + first)
    got = list(door.lines(path, "", "fix", 10_000))
    assert [(n, len(raw), last) for n, raw, last in got] == [
        (1, len(first), False),
        (2, 10_002, False),
        (3, len(first), True),
    ]
    assert got[1][1].endswith(b"\n")  # cut at the limit, the rest of it skipped
    with pytest.raises(records.RecordError, match=r":2: a line of 10001 bytes \(records are at most"):
        records.read(path)


def test_records_share_their_field_names_and_the_depth_guard_reads_the_parsed_value():
    from pxq.core import door

    one, _ = door.parse_json(json.dumps(RUN_RECORD).encode(), 1 << 20)
    two, _ = door.parse_json(json.dumps(RUN_RECORD).encode(), 1 << 20)
    assert one == two == RUN_RECORD
    assert all(a is b for a, b in zip(one["layout"], two["layout"]))  # one name for every record
    assert one["status"] is two["status"]  # and one "ok"
    at_limit, why = door.parse_json(b"[" * 32 + b"]" * 32, 1 << 20)
    assert why is None and door.deeper_than(at_limit, 31) and not door.deeper_than(at_limit, 32)
    for deep in (33, 5000):  # past the limit, and past the parser's own recursion guard
        assert "nested deeper than 32" in door.parse_json(b"[" * deep + b"]" * deep, 1 << 20)[1]
    assert door.deeper_than({"a": [{"b": [1]}]}, 3) and not door.deeper_than({"a": [{"b": [1]}]}, 4)
    assert door.parse_json(b'{"a": 1, "a": 2}', 100) == ({"a": 2}, None)  # JSON's last duplicate wins, as before


def test_the_door_without_orjson_parses_and_refuses_alike(monkeypatch):
    """An interpreter without orjson (the tools' environment runs pxq's modules too) reads with
    the standard parser alone: the same values, the same refusals and messages."""
    from pxq.core import door

    texts = [
        json.dumps(RUN_RECORD).encode(),
        b'{"a": NaN}',
        b'{"a": "\xff"}',
        b"[" * 40 + b"]" * 40,
        b"[" * 5000 + b"]" * 5000,
        b"{half",
        b'{"s": "\\ud800"}',
        b"   ",
    ]
    with_orjson = [door.parse_json(t, 1 << 20) for t in texts]
    monkeypatch.setattr(door, "orjson", None)
    assert [door.parse_json(t, 1 << 20) for t in texts] == with_orjson
    assert with_orjson[0] == (RUN_RECORD, None) and with_orjson[6] == ({"s": "\ud800"}, None)  # orjson refuses it
    assert "NaN is not a JSON number" in with_orjson[1][1] and "not UTF-8" in with_orjson[2][1]
    big = door.parse_json(b'{"n": 123456789012345678901234567890}', 100)[0]["n"]
    assert big == pytest.approx(1.2345678901234568e29)  # past 64 bits: orjson's float (exact without it)
