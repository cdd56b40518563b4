"""The hostile half of the bad-input matrix: files pxq did not write (records of the wrong
types, nested too deep, not UTF-8; hostfiles, rank orders, tile files, progress and reference
files), numbers past their bounds, programs named by the environment and paths that would
inject into generated scripts. Each case runs through `pxq`'s own main() and must exit 2 with
a message naming the problem (the fragment given) and no traceback, and leave every file in
its folder byte for byte as it was (no record written, none changed, nothing set aside).
test_bad_input.py holds the other half; together they are the matrix of at least 400 cases."""

import copy
import json
from pathlib import Path

import pytest
from conftest import ROOT

from pxq import cli

RUN = json.loads((ROOT / "tests" / "python" / "data" / "run-record.json").read_text())


def _set(rec: dict, path: str, value) -> dict:
    out = copy.deepcopy(rec)
    *parents, last = path.split(".")
    node = out
    for p in parents:
        node = node[p]
    node[last] = value
    return out


def _deep(n: int) -> str:
    return '{"kind": "run", "schema": 2, "app": "ring", "status": "ok", "x": ' + "[" * n + "]" * n + "}"


# Record files: name -> (its lines, the fragment of the message that names what is wrong).
RECORDS: dict[str, tuple[list[bytes], str]] = {
    "app-number": ([json.dumps(_set(RUN, "app", 5)).encode()], "app: 5 is not of type 'string'"),
    "layout-string": ([json.dumps(_set(RUN, "layout", "1x2")).encode()], "layout: '1x2' is not of type 'object'"),
    "time-string": ([json.dumps(_set(RUN, "time", "x")).encode()], "time: 'x' is not of type 'object'"),
    "total-string": ([json.dumps(_set(RUN, "time.total", "1.0")).encode()], "time/total: '1.0' is not of type"),
    "total-negative": ([json.dumps(_set(RUN, "time.total", -1.0)).encode()], "time/total: -1.0 is less than"),
    "status-list": ([json.dumps(_set(RUN, "status", [])).encode()], "status: [] is not one of"),
    "status-unknown": ([json.dumps(_set(RUN, "status", "great")).encode()], "status: 'great' is not one of"),
    "driver-null": ([json.dumps(_set(RUN, "driver", None)).encode()], "driver: None is not of type 'object'"),
    "mode-markup": ([json.dumps(_set(RUN, "variant.mode", "[/red]")).encode()], "variant/mode: '[/red]' does not"),
    "mode-escape": (
        [json.dumps(_set(RUN, "variant.mode", "\x1b[2J\x1b[31mflat")).encode()],
        "variant/mode",
    ),
    "backend-html": (
        [json.dumps(_set(RUN, "variant.backend", "<img src=x onerror=alert(1)>")).encode()],
        "variant/backend",
    ),
    "run-id-newline": (
        [json.dumps(_set(RUN, "driver.run_id", "a\nb")).encode()],
        "driver/run_id",
    ),
    "nodes-zero": ([json.dumps(_set(RUN, "layout.nodes", 0)).encode()], "layout/nodes: 0 is less than"),
    "threads-float": ([json.dumps(_set(RUN, "layout.threads", 1.5)).encode()], "layout/threads: 1.5 is not of"),
    "passed-string": ([json.dumps(_set(RUN, "verification.passed", "yes")).encode()], "verification/passed"),
    "unknown-kind": ([json.dumps(_set(RUN, "kind", "runs")).encode()], 'unknown kind "runs"'),
    "unknown-version": ([json.dumps(_set(RUN, "schema", 3)).encode()], "unknown schema version 3"),
    "version-one-layout": (
        [json.dumps(_set({k: v for k, v in RUN.items() if k != "kind"}, "schema", 1) | {"layout": "1x2"}).encode()],
        "layout: '1x2' is not of type 'object'",
    ),
    "no-kind": ([b'{"app": "ring", "status": "ok"}'], "not a pxq record"),
    "array": ([b"[1, 2, 3]"], "not a pxq record"),
    "number": ([b"42"], "not a pxq record"),
    "null": ([b"null"], "not a pxq record"),
    "deep-5000": ([_deep(5000).encode()], "nested deeper than 32"),
    "deep-40": ([_deep(40).encode()], "nested deeper than 32"),
    "not-utf8": ([json.dumps(RUN).encode()[:-1] + b', "x": "\xff\xfe"}'], "not UTF-8"),
    "good-then-bad": ([json.dumps(RUN).encode(), json.dumps(_set(RUN, "app", None)).encode()], ":2: not a valid run"),
}
RECORD_COMMANDS = {
    "report": ["report", "@FILE"],
    "report-md": ["report", "@FILE", "--format", "markdown"],
    "report-csv": ["report", "@FILE", "--format", "csv"],
    "report-json": ["report", "@FILE", "--format", "json"],
    "compare": ["compare", "@FILE", "@FILE"],
    "sweep-resume": ["sweep", "ring", "--layouts", "1x1", "--results", "@FILE", "--resume"],
}

CASES: list[tuple[str, list[str], str, dict[str, str], dict[str, bytes]]] = []


def case(name: str, argv: list[str], expect: str, env: dict[str, str] | None = None, **files: bytes) -> None:
    CASES.append((name, argv, expect, env or {}, files))


# A results file whose first line is no JSON object holds no records: a sweep appending to it
# refuses it before reading it (pxq.core.outputs), never appends to another kind of file. A
# first line that begins an object ('{"', a record a killed writer may have torn) is a results
# file's: the reader then names what is wrong with it (nested too deep), and nothing is appended.
NOT_RECORDS = ("array", "number", "null", "not-utf8")
for rname, (lines, expect) in RECORDS.items():
    for cname, argv in RECORD_COMMANDS.items():
        why = "does not hold pxq records" if cname == "sweep-resume" and rname in NOT_RECORDS else expect
        case(f"record-{rname}-{cname}", argv, why, FILE=b"\n".join(lines) + b"\n")
    case(f"record-{rname}-repair-named", ["report", "@FILE"], "pxq repair", FILE=b"\n".join(lines) + b"\n")

# Profiles that are no message profile pxq can read.
PROFILE = {
    "kind": "profile",
    "schema": 2,
    "app": "msgprof",
    "status": "ok",
    "program": "x",
    "ranks": 4,
    "columns": ["src", "dst", "bin", "count", "bytes"],
    "p2p": [[0, 1, 3, 1, 4]],
    "collective_model": [],
    "bins": {"kind": "log2", "upper_bytes": [0, 1, 2, 4]},
    "context": {"mpi_library": "x", "date": "d"},
}
for pname, bad, expect in (
    ("p2p-strings", _set(PROFILE, "p2p", [["0", "1", "3", "1", "4"]]), "p2p/0/0: '0' is not of type 'integer'"),
    ("p2p-short-row", _set(PROFILE, "p2p", [[0, 1]]), "p2p/0: [0, 1] is too short"),
    ("ranks-zero", _set(PROFILE, "ranks", 0), "ranks: 0 is less than"),
    ("bins-string", _set(PROFILE, "bins", "log2"), "bins: 'log2' is not of type 'object'"),
):
    data = json.dumps(bad).encode() + b"\n"
    case(f"profile-{pname}-msgdist", ["msgdist", "@FILE", "--model", "2x1x2"], expect, FILE=data)
    case(f"profile-{pname}-suggest", ["placement", "suggest", "@FILE", "--model", "2x1x2"], expect, FILE=data)

# Hostfiles: read strictly before anything runs.
HOSTFILES = {
    "not-utf8": (b"\xff\xfe\x00node1\n", "not UTF-8"),
    "slots-word": (b"node1 slots=x\n", "line 1: 'node1 slots=x' is not a host line"),
    "empty": (b"", "names no host"),
    "comments-only": (b"# nothing\n\n", "names no host"),
    "shell": (b"node1;touch PWNED\n", "is not a host line"),
    "escape": (b"\x1b[31mnode1\n", "is not a host line"),
    "unknown-option": (b"node1 cpus=4\n", "is not a host line"),
    "mpich-slots-word": (b"node1:two\n", "is not a host line"),
}
for hname, (data, expect) in HOSTFILES.items():
    for cname, argv in (
        ("run", ["run", "ring", "--hostfile", "@FILE"]),
        ("sweep", ["sweep", "ring", "--hostfile", "@FILE"]),
        ("probe", ["probe", "allreduce", "--hostfile", "@FILE"]),
        ("lab", ["lab", "check", "4", "--solution", "--hostfile", "@FILE"]),
    ):
        case(f"hostfile-{hname}-{cname}", argv, expect, FILE=data)
case("hostfile-fewer-hosts", ["run", "ring", "--layout", "2x1", "--hostfile", "@FILE"], "names 1 host(s)", FILE=b"n1\n")
case(
    "hostfile-fewer-hosts-sweep",
    ["sweep", "ring", "--layouts", "2x1", "--modes", "flat", "--hostfile", "@FILE"],
    "names 1 host(s)",
    FILE=b"n1 slots=2\n",
)
for cname, argv in (
    ("run", ["run", "ring", "--launcher", "hostfile"]),
    ("sweep", ["sweep", "ring", "--launcher", "hostfile"]),
    ("probe", ["probe", "allreduce", "--launcher", "hostfile"]),
):
    case(f"launcher-hostfile-without-file-{cname}", argv, "add --hostfile FILE")

# Rank-order files.
for oname, data, expect in (
    ("huge-range", b"0-99999999999\n", "goes past 1048576 ranks"),
    ("many-ranges", b"0-600000 600001-1200000\n", "goes past 1048576 ranks"),
    ("prediction-types", b'# pxq-prediction {"channels": "x"}\n0,1\n', "channels: 'x' is not of type 'object'"),
    ("prediction-deep", b"# pxq-prediction " + b"[" * 3000 + b"]" * 3000 + b"\n0,1\n", "nested deeper than 32"),
    ("prediction-list", b"# pxq-prediction [1]\n0,1\n", "is not of type 'object'"),
    ("prediction-model", b'# pxq-prediction {"model": "$(id)"}\n0,1\n', "model: '$(id)' does not match"),
    ("empty", b"", "no ranks in it"),
    ("duplicate", b"0,0\n", "listed twice"),
):
    case(f"rank-order-{oname}", ["run", "cg", "--layout", "1x2", "--rank-order", "@FILE"], expect, FILE=data)

# Numbers past their bounds.
for t in ("1e300", "1e20", "604801"):
    case(f"run-timeout-{t}", ["run", "ring", "--timeout", t], "to 604800 seconds")
    case(f"sweep-timeout-{t}", ["sweep", "ring", "--timeout", t], "to 604800 seconds")
    case(f"probe-timeout-{t}", ["probe", "allreduce", "--timeout", t], "to 604800 seconds")
    case(f"reproduce-timeout-{t}", ["reproduce", "--timeout", t], "to 604800 seconds")
for r in ("100000000000", "10001"):
    for cname, argv in (
        ("run", ["run", "ring"]),
        ("sweep", ["sweep", "ring"]),
        ("study", ["study", "contention", "ring"]),
        ("stride", ["probe", "stride"]),
        ("demo", ["demo"]),
        ("tune", ["tune"]),
        ("placement-bench", ["placement", "bench"]),
        ("rankpairs", ["study", "rankpairs"]),
    ):
        case(f"{cname}-repeat-{r}", [*argv, "--repeat", r], f"--repeat {r}: use 1 to 10000")
for value, argv, expect in (
    ("huge", ["run", "ring", "--threads", "99999999999999999999999"], "use 1 to 4096 threads"),
    ("5000", ["run", "ring", "--threads", "5000"], "use 1 to 4096 threads"),
    ("sweep-huge", ["sweep", "ring", "--threads", "1,99999999999999999999999"], "use 1 to 4096 threads"),
    ("layout-threads", ["run", "ring", "--layout", "1x1x5000"], "threads per rank must be 1 to 4096"),
    ("layout-ranks", ["run", "ring", "--layout", "1x5000"], "ranks per node must be 1 to 4096"),
    ("layout-nodes", ["run", "ring", "--layout", "200000x1"], "nodes must be 1 to 100000"),
    ("sweep-layout", ["sweep", "ring", "--layouts", "1x2,1x1x99999999999"], "threads per rank must be 1 to"),
    ("tune-threads", ["tune", "--threads", "1,x"], "--threads 1,x"),
    ("tune-threads-huge", ["tune", "--threads", "99999"], "use 1 to 4096 threads"),
):
    case(f"threads-{value}", argv, expect)
case("reproduce-only-empty-string", ["reproduce", "--only", ""], "--only is empty")
case("reproduce-only-spaces", ["reproduce", "--only", " , "], "--only is empty")

# Programs the environment names.
for program in ("/bin/false", "/bin/true", "/nonexistent/mpirun", "sh"):
    expect = "is not an executable" if program.startswith("/nonexistent") else "names no MPI launcher"
    for cname, argv in (
        ("run", ["run", "ring"]),
        ("sweep", ["sweep", "ring", "--layouts", "1x1", "--modes", "flat"]),
        ("probe", ["probe", "allreduce"]),
    ):
        case(f"mpirun-{program.strip('/').replace('/', '-')}-{cname}", argv, expect, {"PXQ_MPIRUN": program})

# Output folders that cannot be written (as root, permissions do not stop a write: a folder
# under /proc cannot be made by anyone).
for out in ("/proc/pxq-out", "/proc/self/pxq-out", "/sys/pxq-out"):
    case(f"reproduce-out-{out}", ["reproduce", "--only", "channels", "--out", out], "cannot write there")
    case(f"tune-out-{out}", ["tune", "--out", f"{out}/tiles.json"], "cannot make its folder")

# Paths that would inject into generated job scripts or records.
for pname, path, expect in (
    ("newline", "@DIR/x\n#SBATCH --wrap=id\n.jsonl", "control character"),
    ("escape", "@DIR/\x1b[31mred.jsonl", "control character"),
    ("space", "@DIR/a b.jsonl", "#SBATCH lines"),
    ("dollar", "@DIR/$(touch PWNED).jsonl", "#SBATCH lines"),
    ("quote", "@DIR/it's.jsonl", "#SBATCH lines"),
    ("backtick", "@DIR/`id`.jsonl", "#SBATCH lines"),
):
    case(f"submit-path-{pname}", ["sweep", "ring", "--submit", "--dry-run", "--results", path], expect)
for pname, path in (("newline", "@DIR/r\nx.jsonl"), ("escape", "@DIR/\x1b]0;title\x07.jsonl")):
    case(f"run-results-{pname}", ["run", "ring", "--results", path], "control character")

# Tile files and tile profiles.
for tname, data, expect in (
    ("not-utf8", b'{"benchmarks": ["\xff"]}', "not UTF-8"),
    ("deep", b'{"benchmarks": ' + b"[" * 100 + b"]" * 100 + b"}", "nested deeper than 32"),
    ("benchmarks-string", b'{"benchmarks": "x"}', "benchmarks: 'x' is not of type 'array'"),
    ("rate-string", b'{"benchmarks": [{"name": "a", "bytes_per_second": "fast"}]}', "bytes_per_second"),
    ("caches-string", b'{"context": {"caches": "big"}, "benchmarks": []}', "context/caches"),
    ("binary", bytes(range(256)), "not UTF-8"),
):
    case(f"report-tiles-{tname}", ["report", "tiles", "@FILE"], expect, FILE=data)
for tname, data, expect in (
    ("truncated", b'{"kind": "tile-profile", "schema": 2, "kern', "not JSON"),
    (
        "tile-string",
        json.dumps(
            {
                "kind": "tile-profile",
                "schema": 2,
                "machine": {"host": "h", "cpu_model": "c", "caches": {"l1d": 1, "l2": 2, "l3": 3}},
                "date": "d",
                "kernels": {"ring_pass": {"1": {"tile": "big"}}},
            }
        ).encode(),
        "tile: 'big' is not of type 'integer'",
    ),
    ("not-utf8", b'{"kind": "tile-profile", "\xff": 1}', "not UTF-8"),
):
    for cname, argv in (
        ("run", ["run", "ring", "--mode", "tiled", "--tile", "auto"]),
        ("sweep", ["sweep", "ring", "--modes", "flat,tiled", "--tiles", "64K,auto"]),
    ):
        case(f"tile-profile-{tname}-{cname}", argv, expect, {"PXQ_TILE_PROFILE": "@FILE"}, FILE=data)

# Reference files of `compare`, and the progress file of `reproduce --report-only`.
for rname, data, expect in (
    ("deep", b'{"references": ' + b"[" * 200 + b"]" * 200 + b"}", "nested deeper than 32"),
    ("not-utf8", b'{"references": ["\xff"]}', "not UTF-8"),
    ("empty", b"", "empty"),
):
    case(f"reference-{rname}", ["compare", "@RUNS", "--reference", "@FILE"], expect, FILE=data)
for gname, data, expect in (
    ("done-list", b'{"mode": "quick", "done": []}', 'no "done" by study'),
    ("mode-path", b'{"mode": "../../etc", "done": {}}', "no mode"),
    ("not-json", b"{half", "not JSON"),
    ("deep", b'{"mode": "quick", "done": ' + b"[" * 100 + b"]" * 100 + b"}", "nested deeper than 32"),
):
    case(f"progress-{gname}", ["reproduce", "--report-only", "--out", "@REPORT"], expect, PROGRESS=data)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(root.rglob("*"))}


def _materialise(argv: list[str], env: dict[str, str], files: dict[str, bytes], tmp: Path) -> tuple[list, dict]:
    subst = {"@DIR": str(tmp / "in"), "@RUNS": str(tmp / "in" / "runs.jsonl"), "@REPORT": str(tmp / "report")}
    (tmp / "in").mkdir()
    (tmp / "in" / "runs.jsonl").write_text(json.dumps(RUN) + "\n")
    if "FILE" in files:
        (tmp / "in" / "file").write_bytes(files["FILE"])
        subst["@FILE"] = str(tmp / "in" / "file")
    if "PROGRESS" in files:
        (tmp / "report").mkdir()
        (tmp / "report" / "progress.json").write_bytes(files["PROGRESS"])

    def put(text: str) -> str:
        for token, value in subst.items():
            text = text.replace(token, value)
        return text

    return [put(a) for a in argv], {k: put(v) for k, v in env.items()}


def test_the_matrix_with_its_other_half_has_at_least_400_cases():
    import test_bad_input

    assert len(CASES) + len(test_bad_input.CASES) >= 400
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("name,argv,expect,env,files", CASES, ids=[c[0] for c in CASES])
def test_hostile_input(name, argv, expect, env, files, tmp_path, monkeypatch, capfd):
    res = tmp_path / "results"
    res.mkdir()
    monkeypatch.setenv("PXQ_RESULTS_DIR", str(res))
    monkeypatch.setenv("PXQ_TILE_PROFILE", str(tmp_path / "tiles.json"))
    monkeypatch.delenv("PXQ_MPIRUN", raising=False)
    monkeypatch.chdir(tmp_path)
    argv, env = _materialise(argv, env, files, tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    before = _snapshot(tmp_path)
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse: usage and message, exit 2
        code = e.code
    err = capfd.readouterr().err  # the driver's and the apps' (a tile profile is the app's to refuse)
    assert code == 2, f"exit {code}: {err}"
    assert expect in err, err
    assert "Traceback" not in err
    assert _snapshot(tmp_path) == before, "a file was written, changed or set aside"
    assert not Path("PWNED").exists() and not (tmp_path / "in" / "PWNED").exists()
