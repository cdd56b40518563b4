import json
import multiprocessing as mp
import os

import pytest
from conftest import RUN_RECORD

from pxq import records
from pxq.layout import InputError


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
