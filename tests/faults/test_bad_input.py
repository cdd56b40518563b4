"""The bad-input matrix: every command, each case through `pxq`'s own main(). Each must exit
2 with a message naming the problem (the fragment given), write no record, leave no file
in the results folder and raise no exception (no traceback)."""

import json
import os
from pathlib import Path

import pytest
from conftest import ROOT

from pxq import cli
from pxq.analysis.messages import placement_bench

RES = "@RES"  # the test's results folder
NONUTF8 = "@NONUTF8"  # a file of non-UTF-8 bytes
GARBAGE = "@GARBAGE"  # a file of text that is not JSON
MIDDLE = "@MIDDLE"  # a results file with a damaged line in the middle
PROFILE = "@PROFILE"  # a record that is a run record, not a message profile
MSGPROF = "@MSGPROF"  # a message profile, not a run record

SIZES = ["0", "-1", "12Q", "1.5K", "K", "", "abc", "99999999999999999999G"]
LAYOUTS = ["0x2", "2x", "axb", "1x2x0", "1x", "x1", "-1x2", "1x2x3x4", "", "1,2"]
TIMEOUTS = ["-1", "0", "nan", "inf", "-inf", "abc"]

CASES: list[tuple[str, list[str], str]] = []


def case(name: str, argv: list[str], expect: str) -> None:
    CASES.append((name, argv, expect))


for app in ("ring", "cg", "mg", "ft"):
    for lay in LAYOUTS:
        case(f"run-{app}-layout-{lay!r}", ["run", app, "--layout", lay], "layout")
    for t in ("0", "-1", "12Q", "12", "511"):
        case(f"run-{app}-tile-{t}", ["run", app, "--mode", "tiled", "--tile", t], "tile")
    case(f"run-{app}-threads-0", ["run", app, "--threads", "0"], "--threads 0")
    case(f"run-{app}-threads--3", ["run", app, "--threads", "-3"], "--threads -3")
    case(f"run-{app}-repeat-0", ["run", app, "--repeat", "0"], "--repeat")
    case(f"run-{app}-flat-threads", ["run", app, "--layout", "1x1x2", "--mode", "flat"], "mode flat")
    case(f"run-{app}-hybrid-1thread", ["run", app, "--mode", "hybrid"], "mode hybrid")
    case(f"run-{app}-json-after-dashes", ["run", app, "--", "--json", "/tmp/elsewhere"], "--json after --")
    case(f"run-{app}-driver-info", ["run", app, "--", "--driver-info", "{}"], "--driver-info after --")
    case(f"run-{app}-mode-after-dashes", ["run", app, "--", "--mode=flat"], "--mode after --")
    case(f"run-{app}-oversubscribe", ["run", app, "--layout", "1x64"], "--oversubscribe")
    case(f"sweep-{app}-modes", ["sweep", app, "--modes", "flat,fast"], "unknown mode 'fast'")
    case(f"sweep-{app}-layouts", ["sweep", app, "--layouts", "1x2,zz"], "invalid layout 'zz'")
    case(f"sweep-{app}-threads", ["sweep", app, "--threads", "1,x"], "--threads 1,x")
    case(f"sweep-{app}-repeat", ["sweep", app, "--repeat", "0"], "--repeat")
    case(f"sweep-{app}-tiles", ["sweep", app, "--tiles", "12"], "tile 12")
    case(f"sweep-{app}-backend", ["sweep", app, "--backends", "cuda"], "unknown backend 'cuda'")
for t in TIMEOUTS:
    case(f"run-timeout-{t}", ["run", "ring", "--timeout", t], "timeout")
    case(f"sweep-timeout-{t}", ["sweep", "ring", "--timeout", t], "timeout")
    case(f"probe-timeout-{t}", ["probe", "allreduce", "--timeout", t], "timeout")
for cls in ("Q", "D", "E", "", "AA"):
    for app in ("cg", "mg", "ft"):
        case(f"run-{app}-class-{cls!r}", ["run", app, "--class", cls], "class")
case("run-ring-class", ["run", "ring", "--class", "A"], "ring has no problem classes")
case("run-unknown-app", ["run", "lu"], "unknown app 'lu'")
case("sweep-unknown-app", ["sweep", "bt"], "unknown app 'bt'")
for path, what in (
    ("/proc/x.jsonl", "cannot hold files"),
    ("/nonexistent/r.jsonl", "does not exist"),
    ("/dev/full", "not a regular file"),
    (RES, "is a directory"),
    ("/dev/null", "not a regular file"),
):
    for cmd in (["run", "ring"], ["sweep", "ring"], ["probe", "allreduce"], ["study", "contention", "ring"]):
        case(f"{cmd[0]}-results-{path}", [*cmd, "--results", path], what)
case("run-placement-custom-no-cores", ["run", "ring", "--layout", "1x2", "--placement", "custom"], "--cores")
case("run-cores-without-custom", ["run", "ring", "--layout", "1x2", "--cores", "0,1"], "--cores")
case("run-cores-bad", ["run", "ring", "--placement", "custom", "--cores", "a,b"], "--cores a,b")
case("run-cores-negative", ["run", "ring", "--placement", "custom", "--cores", "-1"], "--cores -1")
case("run-hostfile-missing", ["run", "ring", "--hostfile", "/nonexistent/hosts"], "hostfile")
case("run-plot-dir", ["report", "x.jsonl", "--plot", "/"], "--plot")
for size in SIZES:
    case(f"probe-allreduce-size-{size!r}", ["probe", "allreduce", "--size", size], "size")
    case(f"probe-stride-min-{size!r}", ["probe", "stride", "--min", size], "size")
    case(f"probe-rankpairs-size-{size!r}", ["probe", "rankpairs", "--size", size], "size")
case("probe-calls-0", ["probe", "allreduce", "--calls", "0"], "--calls 0")
case("probe-warmup--1", ["probe", "bcast", "--warmup", "-1"], "--warmup -1")
case("probe-threads-layout", ["probe", "barrier", "--layout", "1x1x2"], "one thread per rank")
case(
    "probe-noise-intensity-0",
    ["probe", "allreduce", "--noise", "memory", "--noise-intensity", "0"],
    "--noise-intensity",
)
case(
    "probe-noise-intensity-2",
    ["probe", "allreduce", "--noise", "memory", "--noise-intensity", "2"],
    "--noise-intensity",
)
case("probe-noise-cores", ["probe", "allreduce", "--noise", "compute", "--noise-cores", "x"], "--noise-cores")
case("probe-class", ["probe", "allreduce", "--class", "A"], "no problem classes")
case("probe-bandwidth-max-cores-0", ["probe", "bandwidth", "--max-cores", "0"], "--max-cores 0")
case("probe-bandwidth-max-cores--2", ["probe", "bandwidth", "--max-cores", "-2"], "--max-cores -2")
case("probe-stride-copies-0", ["probe", "stride", "--copies", "0"], "--copies 0")
case("probe-stride-accesses-0", ["probe", "stride", "--accesses", "0"], "--accesses 0")
case("probe-stride-repeat-0", ["probe", "stride", "--repeat", "0"], "--repeat 0")
case("probe-stride-max-below-min", ["probe", "stride", "--min", "1M", "--max", "4K"], "smaller than --min")
case("probe-stride-stride", ["probe", "stride", "--max", "64K", "--stride", "1M"], "--stride 1M")
case("probe-pingpong-layout", ["probe", "pingpong", "--layout", "1x1"], "layout")
case("probe-pingpong-min", ["probe", "pingpong", "--min", "x"], "size")
case("probe-osu-layout", ["probe", "osu", "bw", "--layout", "1x3"], "runs on 2 ranks")
case("probe-osu-sizes", ["probe", "osu", "latency", "-m", "1:x"], "size")
case("probe-osu-window", ["probe", "osu", "bw", "-W", "0"], "-W 0")
case("study-contention-ranks-0", ["study", "contention", "ring", "--ranks", "0"], "--ranks 0")
case("study-contention-ranks--1", ["study", "contention", "ring", "--ranks", "-1"], "--ranks -1")
case("study-contention-repeat-0", ["study", "contention", "ring", "--repeat", "0"], "--repeat 0")
case("study-contention-placement", ["study", "contention", "ring", "--placement", "packed"], "--placements")
case("study-contention-app", ["study", "contention", "lu"], "unknown app 'lu'")
case("study-allocation-ranks-1", ["study", "allocation", "cg", "--ranks", "1", "--model", "4x2x2"], "--ranks 1")
case("study-allocation-model", ["study", "allocation", "cg", "--ranks", "4", "--model", "4x2"], "model")
case("study-msgdist-model", ["study", "msgdist", "--model", "4x2"], "model '4x2'")
case("study-msgdist-profile", ["study", "msgdist", "--profiles", "/nonexistent.jsonl"], "no such file")
case("study-tiling-block", ["study", "tiling", "--block", "64Q"], "64Q")
case("study-stride-repeat-0", ["study", "stride", "--repeat", "0"], "--repeat 0")
case("study-stride-max", ["study", "stride", "--max", "9Q"], "9Q")
case("study-stride-copies-0", ["study", "stride", "--copies", "0"], "--copies 0")
case("study-rankpairs-repeat-0", ["study", "rankpairs", "--repeat", "0"], "--repeat 0")
case("study-rankpairs-size", ["study", "rankpairs", "--size", "1Z"], "1Z")
case("study-sharing-ranks", ["study", "sharing", "--ranks", "1"], "--ranks 1")
case("study-unknown", ["study", "nas"], "invalid choice")
case("run-counters-bogus", ["run", "ring", "--counters", "papi"], "invalid choice")
case("study-counters-swallows-app", ["study", "contention", "--counters", "cg"], "invalid choice: 'cg'")
case("sweep-counters-bogus", ["sweep", "ring", "--counters", "on"], "invalid choice")
case("study-counters-repeat-0", ["study", "counters", "ring", "--repeat", "0"], "--repeat 0")
case("study-counters-tile", ["study", "counters", "mg", "--tile", "12Q"], "12Q")
case("study-counters-block", ["study", "counters", "--block", "8Q"], "8Q")
case("study-counters-app", ["study", "counters", "lu"], "unknown app 'lu'")
case("study-tiling-counters", ["study", "tiling", "--counters", "sim"], "unrecognized arguments: --counters")
case("reproduce-only", ["reproduce", "--only", "channels,nas"], "unknown study 'nas'")
case("reproduce-only-empty", ["reproduce", "--only", ","], "--only is empty")
case("study-allocation-small", ["study", "allocation", "cg", "--ranks", "64", "--model", "2x2x2"], "cores for 64")
for argv, what in (
    (["report", "nonexistent.jsonl"], "no such file"),
    (["report", RES], "is a directory"),
    (["report", NONUTF8], "not UTF-8"),
    (["report", GARBAGE], "not a JSON record"),
    (["report", MIDDLE], "pxq repair"),
    (["sweep", "ring", "--layouts", "1x1", "--results", MIDDLE], "pxq repair"),
    (["sweep", "ring", "--layouts", "1x1", "--results", MIDDLE, "--resume"], "pxq repair"),
    (["validate", NONUTF8, "--require", "nothing"], "not a record kind"),
    (["report", "/dev/full"], "not a regular file"),
    (["report", "a.jsonl", "b.jsonl"], "a.jsonl: no such file"),
    (["report", "x.jsonl", "--format", "csv", "--out", "/"], "is a directory"),
    (["report", "x.jsonl", "--out", "x.csv"], "--out goes with --format"),
    (["report", "tiles"], "tile benchmark JSON"),
    (["report", "x.jsonl", "--plot", "out.txt"], ".png"),
    (["report", "x.jsonl", "--plot", "/nonexistent/c.png"], "does not exist"),
    (["repair", "nonexistent.jsonl"], "no such file"),
    (["repair", RES], "is a directory"),
    (["msgdist", "nonexistent.jsonl"], "nonexistent.jsonl"),
    (["msgdist", PROFILE, "--alloc", "cyclic"], "--model"),
    (["msgdist", PROFILE, "--model", "4x2"], "model"),
    (["msgdist", NONUTF8], NONUTF8),
    (["placement", "suggest", "nonexistent.jsonl"], "nonexistent.jsonl: no such file"),
    (["placement", "suggest", PROFILE], "no message profile"),
    (["placement", "suggest", GARBAGE, "--model", "4x2x2"], "not a JSON record"),
    (["placement", "suggest", NONUTF8, "--objective", "latency"], "invalid choice"),
    (["placement", "bench", "--grid", "0x4"], "--grid 0x4"),
    (["placement", "bench", "--repeat", "0"], "--repeat 0"),
    (["placement", "bench", "--model", "2x2x2"], "model 2x2x2 has 8 cores"),
    (["run", "cg", "--rank-order", "nonexistent.order"], "no such file"),
    (["run", "cg", "--rank-order", GARBAGE], "is not a rank"),
    (["run", "cg", "--rank-order", NONUTF8], "not UTF-8 text"),
    (["study", "placement", "cg", "--ranks", "8", "--model", "4x2x2"], "fill the model's 16 cores"),
    (["study", "placement", "cg", "--repeat", "0"], "--repeat 0"),
    (["profile"], "nothing to profile"),
    (["profile", "--", "./app"], "not an MPI launcher"),
    (["tune", "lu"], "lu"),
    (["tune", "--repeat", "0"], "--repeat"),
    (["tune", "--tiles", "12Q"], "12Q"),
    (["demo", "--repeat", "0"], "--repeat 0"),
    (["env", "--", "x"], "no arguments after --"),
    (["compare", "nonexistent.jsonl", "b.jsonl"], "nonexistent.jsonl: no such file"),
    (["compare", MIDDLE], "NEW with --reference"),
    (["compare", MIDDLE, MIDDLE, MIDDLE], "give BASE and NEW"),
    (["compare", MIDDLE, MIDDLE, "--confidence", "2"], "--confidence 2"),
    (["compare", MIDDLE, MIDDLE, "--threshold", "1.5"], "--threshold 1.5"),
    (["compare", GARBAGE, GARBAGE], "not a JSON record"),
    (["compare", MSGPROF, MSGPROF], "no finished runs"),
    (["compare", PROFILE, "--reference", "nonexistent.json"], "nonexistent.json: no such file"),
    (["compare", PROFILE, "--reference", GARBAGE], "not JSON"),
    (["validate", "nonexistent.jsonl"], "no such file"),
    (["validate", RES], "is a directory without results files"),
    (["validate", PROFILE, "--require", "runs"], "not a record kind"),
    (["report", MSGPROF, "--format", "csv", "--records", "studies"], "no study records"),  # a profile exports as itself
    (["sweep", "ring", "--collect"], "no submitted sweep"),
    (["sweep", "ring", "--submit", "--collect"], "two steps"),
    (["sweep", "ring", "--dry-run"], "--dry-run goes with --submit"),
    (["run", "ring", "--launcher", "slurm"], "outside an allocation"),
):
    case("-".join(a.strip("-/@") for a in argv), argv, what)


def _materialise(argv: list[str], tmp: Path) -> list[str]:
    res = tmp / "results"
    (tmp / "nonutf8.jsonl").write_bytes(b'{"app": "ring", "status": "ok", "x": "\xff\xfe"}\n')
    (tmp / "garbage.jsonl").write_text("hello world\nthis is not json\n")
    run = json.dumps(json.loads((ROOT / "tests" / "python" / "data" / "run-record.json").read_text()))
    (tmp / "middle.jsonl").write_text(f'{run}\n{{"app": broken\n{run}\n')
    (tmp / "profile.jsonl").write_text(
        json.dumps(json.loads((ROOT / "tests" / "python" / "data" / "run-record.json").read_text())) + "\n"
    )
    (tmp / "msgprof.jsonl").write_text(json.dumps(placement_bench.stencil_profile((2, 2))) + "\n")
    subst = {
        RES: str(res),
        NONUTF8: str(tmp / "nonutf8.jsonl"),
        GARBAGE: str(tmp / "garbage.jsonl"),
        MIDDLE: str(tmp / "middle.jsonl"),
        PROFILE: str(tmp / "profile.jsonl"),
        MSGPROF: str(tmp / "msgprof.jsonl"),
    }
    return [subst.get(a, a) for a in argv]


def test_the_matrix_is_large_enough():
    assert len(CASES) >= 300  # test_hostile_input.py holds the rest of the 400 and more
    assert len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("name,argv,expect", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, argv, expect, tmp_path, monkeypatch, capsys):
    res = tmp_path / "results"
    res.mkdir()
    monkeypatch.setenv("PXQ_RESULTS_DIR", str(res))
    monkeypatch.setenv("PXQ_TILE_PROFILE", str(tmp_path / "tiles.json"))
    monkeypatch.chdir(tmp_path)
    argv = _materialise(argv, tmp_path)
    expect = {NONUTF8: str(tmp_path / "nonutf8.jsonl")}.get(expect, expect)
    before = {p: p.read_bytes() if p.is_file() else None for p in sorted(tmp_path.rglob("*"))}
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse: usage and message, exit 2
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, f"exit {code}: {err}"
    assert expect in err, err
    assert "Traceback" not in err
    assert os.listdir(res) == [], "a record or file was written"
    after = {p: p.read_bytes() if p.is_file() else None for p in sorted(tmp_path.rglob("*"))}
    assert after == before, "a file was written, changed or set aside"


@pytest.mark.parametrize("engine", ["fftw3", "FFTW", ""])
def test_an_unknown_fft_engine_is_refused_by_the_app(engine, tmp_path, monkeypatch, capfd):
    """pxq-ft refuses the engine itself: its message (naming --fft and the choices) reaches
    the terminal, the driver exits 2 and says the app refused it, and nothing is written."""
    res = tmp_path / "results"
    res.mkdir()
    monkeypatch.setenv("PXQ_RESULTS_DIR", str(res))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", "ft", "--", "--fft", engine])
    out = "".join(capfd.readouterr())
    assert code == 2, out
    assert "--fft" in out and "pxq,fftw" in out, out
    assert "bad input" in out and "Traceback" not in out
    assert os.listdir(res) == []


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--layout", "2x1", "--", "--exchange", "shm"], "--exchange shm"),
        (["--layout", "1x2", "--", "--exchange", "mpi"], "--exchange"),
    ],
)
def test_a_shared_memory_ring_across_nodes_is_refused(argv, fragment, tmp_path, monkeypatch, capfd):
    """pxq-ring refuses --exchange shm on more than one node (and an unknown exchange): exit
    2 with the fix named, no record."""
    res = tmp_path / "results"
    res.mkdir()
    monkeypatch.setenv("PXQ_RESULTS_DIR", str(res))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", "ring", "--oversubscribe", *argv])
    out = "".join(capfd.readouterr())
    assert code == 2, out
    assert fragment in out and "Traceback" not in out, out
    assert os.listdir(res) == []
