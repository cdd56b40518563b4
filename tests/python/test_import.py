"""`pxq import`: NAS and OSU output as pxq records, reported beside pxq's own runs."""

import json

import pytest
from conftest import complete
from test_report import record as run_record

from pxq import cli
from pxq.analysis.exports import peers, report
from pxq.core import schemas
from pxq.core.errors import InputError
from pxq.core.layout import Layout

# What NAS's print_results writes (its formats, field for field), for CG class A on 2 processes.
NAS_CG = """
 NAS Parallel Benchmarks 3.4 -- CG Benchmark

 Size:      14000
 Iterations:    15
 Number of active processes:      2

   iteration           ||r||                 zeta
        15       0.17347810838738E-12    17.1302350540201

 Benchmark completed
 VERIFICATION SUCCESSFUL
 Zeta is      1.7130235054029E+01


 CG Benchmark Completed.
 Class           =                        A
 Size            =                    14000
 Iterations      =                       15
 Time in seconds =                     {seconds}
 Total processes =                        2
 Active processes=                        2
 Mop/s total     =                  {mops}
 Mop/s/process   =                  1000.00
 Operation type  =           floating point
 Verification    =               {verdict}
 Version         =                    3.4.1
 Compile date    =              22 Nov 2026

 Compile options:
    MPIFC        = mpif90
    FLINK        = $(MPIFC)
    FFLAGS       = -O3 -march=native

 Please send feedbacks and/or the results of this run to:

 NPB Development Team
 Internet: npb@nas.nasa.gov
"""

NAS_FT_4 = (
    NAS_CG.replace("CG Benchmark", "FT Benchmark")
    .replace("Size            =                    14000", "Size            =              256x 256x 128")
    .replace("Total processes =                        2", "Total processes =                        4")
)

OSU_LATENCY = """# OSU MPI Latency Test v7.3
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
0                       0.17
1                       0.18
1024                    0.32
65536                   4.10
"""

OSU_ALLREDUCE_FULL = """# OSU MPI Allreduce Latency Test v5.6.3
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
8                       0.60              0.55              0.65        1000
1024                    1.90              1.80              2.00        1000
"""


def nas(seconds="1.40", mops="2000.00", verdict="SUCCESSFUL", text=NAS_CG):
    return text.format(seconds=seconds, mops=mops, verdict=verdict)


def pxq_run(mode: str, seconds: float, mops: float, layout=(1, 2, 1)) -> dict:
    """test_report's run record, as CG class A in `mode` on `layout`."""
    rec = run_record(seconds, 1.0, mops, metric="spmv_gbs")
    rec["size"] = {"class": "A"}
    rec["variant"].update(mode=mode, threads=layout[2])
    rec["layout"] = {"nodes": layout[0], "ranks_per_node": layout[1], "threads": layout[2], "alloc": "block"}
    rec["context"] = {"host": "here", "date": "2026-11-23T00:00:00Z", "mpi_library": "Open MPI v4.1.4"}
    return complete(rec)


def test_nas_output_becomes_a_schema_valid_run_record(tmp_path):
    path = tmp_path / "cg.A.2.txt"
    text = nas()
    peer = peers.parse(path, text)
    assert (peer.app, peer.version, peer.processes) == ("cg", "3.4.1", 2)
    rec = peers.record(
        path,
        text,
        peer,
        peers.check_layout(path, peer, None),
        {"host": "h", "date": "d", "mpi_library": "m"},
        [("host", "given")],
    )
    assert schemas.problems(rec, "cg") == []
    assert rec["status"] == "ok" and rec["variant"]["mode"] == "nas" and rec["size"]["class"] == "A"
    assert rec["metrics"]["mops_total"] == 2000.0 and rec["time"]["total"] == 1.40
    assert rec["imported"]["compile_options"]["FFLAGS"] == "-O3 -march=native"
    assert rec["layout"]["ranks_per_node"] == 2 and rec["layout"]["nodes"] == 1
    failed = peers.parse(path, nas(verdict="UNSUCCESSFUL"))
    assert failed.body["status"] == "failed" and failed.body["verification"]["passed"] is False


def test_ft_takes_the_decomposition_nas_used(tmp_path):
    peer = peers.parse(tmp_path / "ft", nas(text=NAS_FT_4))
    assert peer.app == "ft" and peer.body["size"]["decomp"] == "1d"  # 4 processes split nz = 128 alone


def test_osu_output_becomes_an_osu_probe_record(tmp_path):
    path = tmp_path / "lat.txt"
    peer = peers.parse(path, OSU_LATENCY)
    rec = peers.record(
        path,
        OSU_LATENCY,
        peer,
        peers.check_layout(path, peer, Layout(2, 1)),
        {"host": "h", "date": "d", "mpi_library": "m"},
        [],
    )
    assert schemas.problems(rec, "osu") == []
    rows = rec["osu"]["rows"]
    assert rec["osu"]["test"] == "latency" and [r["bytes"] for r in rows] == [0, 1, 1024, 65536]
    assert rows[2]["latency_us"] == 0.32 and rows[2]["iterations"] is None
    full = peers.parse(path, OSU_ALLREDUCE_FULL).body["osu"]
    assert full["test"] == "allreduce" and full["rows"][1] == {
        "bytes": 1024,
        "latency_us": 1.9,
        "min_us": 1.8,
        "max_us": 2.0,
        "iterations": 1000,
    }


@pytest.mark.parametrize(
    "text, words",
    [
        (nas().split(" Mop/s total")[0], "Mop/s total"),  # cut short
        (nas().replace("CG Benchmark Completed", "LU Benchmark Completed"), "NAS LU has no pxq proxy"),
        (" NAS Parallel Benchmarks 3.4 -- CG Benchmark\n iteration 3\n", "did not finish"),
        (nas(seconds="abc"), "not a number"),
        ("hello\n", "neither NAS"),
        (OSU_LATENCY.replace("Latency Test", "Multi Latency Test"), "no pxq counterpart"),
        (OSU_LATENCY.split("0                       0.17")[0], "did not finish"),
    ],
)
def test_damaged_or_foreign_output_is_refused_by_name(tmp_path, text, words):
    with pytest.raises(InputError, match=words):
        peers.parse(tmp_path / "out.txt", text)


def test_layouts_are_checked_against_what_the_peer_printed(tmp_path):
    cg = peers.parse(tmp_path / "cg", nas())
    assert peers.check_layout(tmp_path / "cg", cg, Layout(2, 1)) == Layout(2, 1)
    with pytest.raises(InputError, match="has 4 ranks but .* ran 2 processes"):
        peers.check_layout(tmp_path / "cg", cg, Layout(2, 2))
    osu = peers.parse(tmp_path / "lat", OSU_LATENCY)
    with pytest.raises(InputError, match="give --layout"):
        peers.check_layout(tmp_path / "lat", osu, None)
    with pytest.raises(InputError, match="runs on 2 ranks"):
        peers.check_layout(tmp_path / "lat", osu, Layout(1, 4))


def test_import_then_report_puts_nas_beside_pxq(tmp_path, capsys, fake_build):
    out = tmp_path / "peers.jsonl"
    (tmp_path / "cg.txt").write_text(nas(seconds="1.50", mops="1000.00"))
    (tmp_path / "ft.txt").write_text(nas(text=NAS_FT_4))
    args = ["import", str(tmp_path / "cg.txt"), str(tmp_path / "ft.txt"), "--results", str(out), "--mpi", "X MPI"]
    assert cli.main(args) == 0
    assert cli.main(args) == 0  # the same output again: the same run, reported once
    assert cli.main(["validate", str(out)]) == 0
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 4 and all(r["context"]["mpi_library"] == "X MPI" for r in recs)
    mine = tmp_path / "pxq.jsonl"
    mine.write_text(
        "".join(
            json.dumps(pxq_run(m, t, x, lay)) + "\n"
            for m, t, x, lay in (("flat", 1.0, 1500.0, (1, 2, 1)), ("hybrid", 0.75, 2000.0, (1, 1, 2)))
        )
    )
    capsys.readouterr()
    assert cli.main(["report", str(mine), str(out), "--format", "json"]) == 0
    rows = {(r["app"], r["mode"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[("cg", "nas")]["runs"] == 1 and rows[("cg", "nas")]["vs_nas"] is None
    assert rows[("cg", "flat")]["vs_nas"] == pytest.approx(1.5)
    assert rows[("cg", "hybrid")]["vs_nas"] == pytest.approx(2.0)  # 1x1x2 against NAS on 1x2
    assert "context.mpi_library" in next(iter(rows.values()))  # NAS ran with another MPI: a column


def test_one_bad_file_writes_nothing(tmp_path, capsys, fake_build):
    out = tmp_path / "peers.jsonl"
    (tmp_path / "good.txt").write_text(nas())
    (tmp_path / "bad.txt").write_text(nas().split(" Mop/s total")[0])
    assert cli.main(["import", str(tmp_path / "good.txt"), str(tmp_path / "bad.txt"), "--results", str(out)]) == 2
    assert "bad.txt" in capsys.readouterr().err and not out.exists()
    assert cli.main(["import", str(tmp_path / "nope.txt"), "--results", str(out)]) == 2
    assert cli.main(["import", str(tmp_path), "--results", str(out)]) == 2
    assert "a folder" in capsys.readouterr().err
    (tmp_path / "bin").write_bytes(b"\x7fELF\0\0\0")
    assert cli.main(["import", str(tmp_path / "bin"), "--results", str(out)]) == 2
    assert "not text" in capsys.readouterr().err and not out.exists()


def test_an_imported_osu_run_is_drawn_over_pxqs(tmp_path, fake_build):
    from pxq.probes import osuprobe

    path = tmp_path / "lat.txt"
    peer = peers.parse(path, OSU_LATENCY)
    theirs = peers.record(path, OSU_LATENCY, peer, Layout(1, 2), {"host": "h", "date": "d", "mpi_library": "m"}, [])
    mine = json.loads(json.dumps(theirs))
    del mine["imported"]
    for row in mine["osu"]["rows"]:
        row["latency_us"] *= 1.05
    assert osuprobe.source(theirs) == "OSU 7.3 (imported)" and osuprobe.source(mine) == "pxq"
    drawn = osuprobe.plot([theirs, mine], tmp_path / "osu.png")
    assert drawn.stat().st_size > 0
    assert report.summarize([theirs]) == []  # probes are never rows of the run table
