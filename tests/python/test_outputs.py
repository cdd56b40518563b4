"""The one door for writes (pxq.core.outputs) and for reads (pxq.core.door), and the command-line
refusals built on them: no write replaces a special file or a file of another kind, an output
never names an input or another output, JSON never holds NaN, files follow the umask; a FIFO,
/dev/zero, a deep or non-UTF-8 file is refused before any parser sees it."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from pxq import cli
from pxq.core import door, outputs
from pxq.core.errors import InputError


def test_special_files_and_folders_are_never_written(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path, "/dev/null"):
        with pytest.raises(InputError, match="not a regular file|is a folder"):
            outputs.write(target, "x", "csv", "--out")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize(
    "kind,theirs",
    [
        ("csv", "my notes\n"),
        ("markdown", "some text\n"),
        ("png", "not an image"),
        ("json", '{"kind": "run"}\n{"kind": "run"}\n'),  # records: no JSON document replaces them
        ("trace", '{"not": "a trace"}'),
        ("records", "# my notes\n"),
        ("records", '{\n  "format": 1\n}\n'),  # a pretty-printed JSON document is not JSON lines
        ("ceilings", '{"mine": 1}'),
        ("caches", "[1, 2]"),
    ],
)
def test_a_file_of_another_kind_is_refused_and_kept(tmp_path, kind, theirs):
    path = tmp_path / "theirs"
    path.write_text(theirs)
    with pytest.raises(InputError, match="pxq replaces only files of the kind it writes"):
        outputs.write(path, "new", kind, "--out")
    assert path.read_text() == theirs


def test_records_append_after_a_first_line_a_killed_writer_tore(tmp_path):
    """A results file whose first record was cut short is still a results file: the next run
    appends to it (repair sets the torn line aside), it is not refused as another kind."""
    from pxq.core import records

    path = tmp_path / "r.jsonl"
    path.write_text('{"damaged": 1\n')
    records.append(path, {"i": 1})
    assert path.read_text() == '{"damaged": 1\n{"i": 1}\n'


def test_a_file_of_its_kind_is_replaced_whole_under_the_umask(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("app,size\nring,1M\n")
    old = os.umask(0o027)
    try:
        outputs.write(path, "app,size\ncg,A\n", "csv", "--out")
    finally:
        os.umask(old)
    assert path.read_text() == "app,size\ncg,A\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]  # no temporary file left


def test_json_never_holds_nan_or_infinity():
    with pytest.raises(outputs.NotJSON, match=r"rows\[1\].median is nan"):
        outputs.dumps({"rows": [{"median": 1.0}, {"median": float("nan")}]})
    assert json.loads(outputs.dumps(outputs.finite({"p": float("inf"), "q": [float("nan"), 2.0]}))) == {
        "p": None,
        "q": [None, 2.0],
    }


def test_the_read_door_refuses_what_is_no_file_before_reading(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # A FIFO with no writer would block a plain open() forever: the door never waits.
    done = threading.Event()

    def read_fifo():
        with pytest.raises(InputError, match="not a regular file"):
            door.read_bytes(fifo, "--file", "give a file")
        done.set()

    t = threading.Thread(target=read_fifo, daemon=True)
    t.start()
    t.join(5)
    assert done.is_set(), "the door blocked on a FIFO"
    with pytest.raises(InputError, match="not a regular file"):
        door.read_bytes("/dev/zero", "--file", "give a file")
    big = tmp_path / "big"
    big.write_bytes(b"x" * (door.SMALL + 1))
    with pytest.raises(InputError, match="more than such a file holds"):
        door.read_bytes(big, "--file", "give a file")
    (tmp_path / "deep.json").write_text("[" * 100 + "]" * 100)
    with pytest.raises(InputError, match="nested deeper than 32"):
        door.json_doc(tmp_path / "deep.json", "x", "give a file")
    (tmp_path / "nan.json").write_text('{"a": NaN}')
    with pytest.raises(InputError, match="NaN is not a JSON number"):
        door.json_doc(tmp_path / "nan.json", "x", "give a file")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe")
    with pytest.raises(InputError, match="not UTF-8"):
        door.text(tmp_path / "bin.txt", "x", "give a file")
    with pytest.raises(FileNotFoundError):
        door.read_bytes(tmp_path / "missing", "x", "give a file")


def test_an_output_naming_an_input_or_another_output_is_refused(fake_build, tmp_path, capsys):
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps({"kind": "run"}) + "\n")
    for argv, named in (
        (["run", "ring", "--results", str(results), "--trace", str(results)], "--trace and --results"),
        (["report", str(results), "--format", "csv", "--out", str(results)], "--out and the input"),
        (["report", str(results), "--plot", str(results)], "--plot"),
    ):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert named in err or "name the same file" in err or "give a .png" in err, err
    assert results.read_text() == json.dumps({"kind": "run"}) + "\n"


def test_a_kept_profile_path_holding_a_user_s_file_is_refused_naming_the_variable(tmp_path, monkeypatch):
    from pxq.machine import ceilings

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    monkeypatch.setenv("PXQ_CEILINGS", str(notes))
    with pytest.raises(InputError, match="PXQ_CEILINGS"):
        ceilings.save({"format": ceilings.FORMAT, "cpu_model": "x"})
    assert notes.read_text() == "my notes\n"
