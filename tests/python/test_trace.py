"""The timeline merge (pxq run --trace) on rank files of known content: ranks with unrelated
clocks aligned on their timed iterations, lanes per rank and thread, a missing rank's file
reported instead of a partial trace, and a malformed trace refused when read back."""

import json
from pathlib import Path

import pytest

from pxq import cli
from pxq.analysis.exports import otf2trace, trace
from pxq.core.errors import InputError
from pxq.experiments import options as run_cmd


def write_rank(folder: Path, rank: int, clock: float, pid: int) -> None:
    """Rank files whose clock reads `clock` at the barrier that starts the timed iterations:
    setup 1 s before it, then two phases and a send to the next rank inside 1 s of timing."""
    c = clock
    phases = {
        "rank": rank,
        "pid": pid,
        "host": "n0",
        "clock": "MPI_Wtime",
        "sync": c,
        "names": ["setup", "compute", "comm", "timed iterations"],
        "dropped": 0,
        "spans": [
            [0, "run", c - 1.0, c - 0.5, pid],
            [1, "phase", c + 0.1, c + 0.4, pid],
            [2, "phase", c + 0.4, c + 0.5, pid],
            [1, "phase", c + 0.5, c + 0.9, pid],
            [3, "run", c, c + 1.0, pid],
        ],
    }
    mpi = {
        "rank": rank,
        "pid": pid,
        "host": "n0",
        "names": ["MPI_Send", "MPI_Recv"],
        "dropped": 2,
        "events": [[0, c + 0.41, c + 0.42, pid, (rank + 1) % 2, 800], [1, c + 0.43, c + 0.45, pid + 1, -1, 0]],
    }
    (folder / f"phases-{rank}.json").write_text(json.dumps(phases))
    (folder / f"mpi-{rank}.json").write_text(json.dumps(mpi))


def test_ranks_with_unrelated_clocks_are_aligned_on_the_timed_start(tmp_path):
    write_rank(tmp_path, 0, 10.0, 100)
    write_rank(tmp_path, 1, 5000.0, 200)
    t = trace.merge(tmp_path, 2, {"app": "demo"})
    xs = [e for e in t["traceEvents"] if e["ph"] == "X"]
    starts = {e["pid"]: e["ts"] for e in xs if e["name"] == trace.TIMED}
    assert starts[0] == pytest.approx(starts[1]) == pytest.approx(1e6)  # setup began 1 s before
    assert min(e["ts"] for e in xs) == pytest.approx(0.0)
    assert t["otherData"]["dropped_events"] == 4 and t["otherData"]["app"] == "demo"
    names = {(e["pid"], e.get("tid")): e["args"].get("name") for e in t["traceEvents"] if e["name"].endswith("_name")}
    assert names[(0, None)].startswith("rank 0") and names[(1, 200)] == "main thread"
    assert names[(1, 201)] == "thread 201"  # the receive was made on another thread
    per_rank = trace.phase_seconds(t)
    assert per_rank[1]["compute"] == pytest.approx(0.7) and per_rank[0]["comm"] == pytest.approx(0.1)
    assert trace.sends(t, timed_only=True) == {(0, 1): 1, (1, 0): 1}


def test_a_missing_rank_gives_a_note_and_no_file(tmp_path):
    write_rank(tmp_path, 0, 1.0, 100)  # rank 1 died before writing
    out = tmp_path / "out" / "t.json"
    got = trace.finish(tmp_path, out, {"app": "cg", "layout": {"ranks": 2}})
    assert got["path"] is None and "rank 1's phases is missing" in got["note"]
    assert not out.exists()
    got = trace.finish(tmp_path, out, {"app": "cg", "layout": {"ranks": 1}})
    assert got["path"] == str(out) and got["mpi_calls"] == 2 and got["phase_spans"] == 3
    assert trace.load(out)["otherData"]["app"] == "cg"


@pytest.mark.parametrize(
    "content, why",
    [
        ("not json", "not JSON"),
        ('{"events": []}', "no traceEvents"),
        ('{"traceEvents": [{"ph": "B", "name": "x"}]}', "neither a complete"),
        ('{"traceEvents": [{"ph": "X", "name": "x", "cat": "mpi", "pid": 0, "tid": 1, "ts": 0}]}', "lacks"),
        ('{"traceEvents": [{"ph": "X", "name": "x", "cat": "mpi", "pid": 0, "tid": 1, "ts": 0, "dur": -1}]}', "lacks"),
    ],
)
def test_a_malformed_trace_is_refused(tmp_path, content, why):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=why):
        trace.load(path)


def test_trace_files_per_repeat_and_refused_targets(tmp_path):
    assert run_cmd.repeat_trace(tmp_path / "a.trace.json", 1, 3) == tmp_path / "a-r1.trace.json"
    assert run_cmd.repeat_trace(tmp_path / "a.json", 0, 2) == tmp_path / "a-r0.json"
    assert run_cmd.repeat_trace(tmp_path / "a.json", 0, 1) == tmp_path / "a.json"
    with pytest.raises(InputError, match="a directory"):
        run_cmd.trace_target(tmp_path)
    assert run_cmd.trace_target(tmp_path / "new" / "t.json") == tmp_path / "new" / "t.json"
    with pytest.raises(InputError, match="control character"):
        run_cmd.trace_target(tmp_path / "odd\ndir" / "t.json")
    assert not (tmp_path / "odd\ndir").exists()
    (tmp_path / "again.otf2").mkdir()  # an earlier run's archive: replaced, not refused
    assert run_cmd.trace_target(tmp_path / "again.otf2", writes=False) == tmp_path / "again.otf2"
    assert (tmp_path / "new").is_dir()


def test_otf2_without_the_package_names_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(run_cmd.otf2trace, "interpreter", lambda: None)
    with pytest.raises(InputError, match=r"needs the otf2 package: \./pxq setup --ecosystem"):
        run_cmd.trace_target(tmp_path / "t.otf2")
    assert run_cmd.trace_target(tmp_path / "t.otf2", writes=False) == tmp_path / "t.otf2"  # a dry run writes none
    assert run_cmd.trace_target(tmp_path / "t.json") == tmp_path / "t.json"  # Chrome JSON needs nothing


def test_a_dry_run_with_trace_prints_the_launch_that_writes_the_ranks_files(tmp_path, capsys):
    results = tmp_path / "cg.jsonl"
    argv = ["run", "cg", "--layout", "1x2", "--trace", "--dry-run", "--results", str(results)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    folder = tmp_path / "cg.dry-run" / "trace"
    assert f"PXQ_TRACE_DIR={folder}" in out and "libpxq-msgprof.so" in out and folder.is_dir()


def test_an_otf2_run_keeps_its_chrome_twin_inside_the_archive_and_names_vampir(tmp_path, monkeypatch, capsys):
    """`--trace x.otf2` never writes x.trace.json beside the archive (another run's `--trace
    x.trace.json` may own it): the Chrome twin lives inside the archive, and the run's line names
    the viewer each file is for."""
    from rich.console import Console

    ranks = tmp_path / "ranks"
    ranks.mkdir()
    write_rank(ranks, 0, 1.0, 100)
    theirs = tmp_path / "x.trace.json"
    theirs.write_text('{"traceEvents": []}\n')  # another run's timeline

    def convert(chrome, archive):
        assert chrome.is_file() and chrome.parent == archive.parent and chrome.name.startswith(".")
        archive.mkdir()
        (archive / "traces.otf2").write_text("anchor")
        return {"rank 0": 4}

    monkeypatch.setattr(trace.otf2trace, "convert", convert)
    archive = tmp_path / "x.otf2"
    got = trace.finish(ranks, archive, {"app": "cg", "layout": {"ranks": 1}})
    assert theirs.read_text() == '{"traceEvents": []}\n'
    assert got["chrome_path"] == str(archive / trace.CHROME_IN_ARCHIVE)
    assert trace.load(archive / trace.CHROME_IN_ARCHIVE)["traceEvents"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranks", "x.otf2", "x.trace.json"]  # nothing staged left
    rec = {"app": "cg", "layout": {"nodes": 1, "ranks_per_node": 1, "threads": 1}, "variant": {"mode": "flat"}}
    console = Console(width=300)
    trace.print_timelines(console, [dict(rec, trace=got)])
    line = " ".join(capsys.readouterr().out.split())
    assert "open it in Vampir" in line and "timeline.trace.json in ui.perfetto.dev" in line


def test_a_runs_trace_is_written_rank_by_rank_and_holds_what_the_merge_holds(tmp_path, monkeypatch):
    """write_merged streams one rank's events at a time (2.9 million events at 128 ranks of CG
    took 2.5 GB whole): the file parses to exactly merge()'s trace, its counts are the record's,
    and no rank's files are read more than twice (once for the common zero, once to write)."""
    for rank in range(5):
        write_rank(tmp_path, rank, 10.0 + 1000 * rank, 100 + rank)
    reads: list[str] = []
    real = trace._read
    monkeypatch.setattr(trace, "_read", lambda path, what: reads.append(path.name) or real(path, what))
    out = tmp_path / "out" / "t.trace.json"
    counts = trace.write_merged(tmp_path, 5, {"app": "demo"}, out)
    assert max(reads.count(f"phases-{r}.json") for r in range(5)) == 2
    assert json.loads(out.read_text()) == trace.merge(tmp_path, 5, {"app": "demo"})
    assert counts == {"ranks": 5, "spans": 35, "phase_spans": 15, "mpi_calls": 10, "dropped": 10}
    assert trace.finish(tmp_path, out, {"app": "demo", "layout": {"ranks": 5}})["mpi_calls"] == 10


def test_the_otf2_conversion_reads_the_chrome_trace_event_by_event_and_rank_by_rank(tmp_path, monkeypatch):
    """The OTF2 archive is made from the Chrome file pxq wrote, read a chunk at a time (it was
    read whole: 328 MB of text and every event as an object for CG at 128 ranks): the events come
    back exactly, one rank's together; a file cut short, one whose ranks come apart, and one that
    is not a trace pxq wrote are refused with their reason."""
    for rank in range(4):
        write_rank(tmp_path, rank, 10.0 + 1000 * rank, 100 + rank)
    path = tmp_path / "t.trace.json"
    trace.write_merged(tmp_path, 4, {"app": "demo"}, path)
    whole = json.loads(path.read_text())["traceEvents"]
    monkeypatch.setattr(otf2trace, "CHUNK", 97)  # every event split across reads somewhere
    assert list(otf2trace.events(path)) == whole
    ranks = [(rank, evs) for rank, evs in otf2trace._by_rank(path)]
    assert [r for r, _ in ranks] == [0, 1, 2, 3] and sum(len(evs) for _, evs in ranks) == len(whole)
    assert all({e["pid"] for e in evs} == {r} for r, evs in ranks)
    text = path.read_text()
    bad = tmp_path / "bad.json"
    cases = [
        (text[: len(text) // 2], "the trace is cut short"),
        (json.dumps({"traceEvents": whole[-3:] + whole}), "rank 3's events are not together"),
        (json.dumps({"otherData": {}, "traceEvents": whole}), "it opens with its traceEvents list"),
        ('{"traceEvents":[1,2]}', "is not an object"),
    ]
    for content, why in cases:
        bad.write_text(content)
        with pytest.raises(InputError, match=why):
            list(otf2trace._by_rank(bad))
