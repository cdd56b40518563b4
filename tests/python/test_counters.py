"""Counters in the driver: the simulator's cache geometry, its dumps read into the record
format the hardware counters use, what the report shows, and never zeros in place of counts."""

import json
from pathlib import Path

import pytest

from pxq.analysis.exports import report
from pxq.core import schemas
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.experiments import runner
from pxq.machine import counters

DUMP = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: {pid}
part: 1

desc: I1 cache: 32768 B, 64 B, 8-way associative
desc: Trigger: Client Request: pxq rank {rank} timed iterations

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: {ir} 800 200 3 {d1r} {d1w} 3 {llr} {llw}

fn=(1) main
0 1 2 3
"""


def write_dump(folder: Path, pid: int, rank: int, ir: int, d1: tuple[int, int], ll: tuple[int, int]) -> None:
    text = DUMP.format(pid=pid, rank=rank, ir=ir, d1r=d1[0], d1w=d1[1], llr=ll[0], llw=ll[1])
    (folder / f"callgrind.{pid}.1").write_text(text)


def test_geometry_keeps_line_and_ways_and_rounds_to_whole_power_of_two_sets():
    l2 = counters.geometry("l2", {"bytes": 2 * 2**20, "line": 64, "ways": 16})
    assert (l2.bytes, l2.ways, l2.line) == (2 * 2**20, 16, 64) and l2.flag() == "2097152,16,64"
    assert "machine_bytes" not in l2.as_record()
    # 260 MiB, 20-way: 212992 sets is not a power of two; 131072 sets x 20 x 64 B = 160 MiB.
    l3 = counters.geometry("l3", {"bytes": 272629760, "line": 64, "ways": 20})
    assert l3.bytes == 131072 * 20 * 64 and l3.as_record()["machine_bytes"] == 272629760
    sets = l3.bytes // (l3.ways * l3.line)
    assert sets & (sets - 1) == 0
    # Unknown ways: 8; fully associative (-1): one set.
    assert counters.geometry("l1d", {"bytes": 32768}).ways == 8
    full = counters.geometry("l1d", {"bytes": 4096, "line": 64, "ways": -1})
    assert full.ways == 64 and full.bytes == 4096
    with pytest.raises(InputError, match="no L3 cache"):
        counters.geometry("l3", {"bytes": 0})


def test_sim_puts_the_l2_in_the_last_level_slot_and_sim_llc_the_last_level_cache():
    caches = {
        "l1d": {"bytes": 49152, "line": 64, "ways": 12},
        "l2": {"bytes": 2**21, "line": 64, "ways": 16},
        "l3": {"bytes": 2**25, "line": 64, "ways": 16},
    }
    d1, ll = counters.simulated("sim", caches)
    assert (d1.level, d1.bytes, ll.level, ll.bytes) == ("l1d", 49152, "l2", 2**21)
    assert counters.simulated("sim-llc", caches)[1].level == "l3"
    no_l3 = {**caches, "l3": {"bytes": 0}}
    assert counters.simulated("sim-llc", no_l3)[1].level == "l2"
    assert counters.ll_key("sim") == "l2_misses" and counters.ll_key("sim-llc") == "llc_misses"


def test_dumps_become_per_rank_counts_by_the_hardware_counters_names(tmp_path):
    write_dump(tmp_path, 4242, 1, 2000, (50, 5), (20, 2))
    write_dump(tmp_path, 4241, 0, 1000, (40, 4), (10, 1))
    (tmp_path / "callgrind.4241").write_text("events: Ir\nsummary: 99\n")  # the exit dump: not the timed part
    d1 = counters.Geometry("l1d", 49152, 12, 64, 49152)
    ll = counters.Geometry("l2", 2**21, 16, 64, 2**21)
    rec = counters.sim_record(tmp_path, 2, "sim", d1, ll)
    assert rec["source"] == "callgrind" and rec["simulated"] is True and rec["scope"] == "timed iterations"
    assert rec["per_rank"][0] == {"instructions": 1000, "data_accesses": 1000, "l1d_misses": 44, "l2_misses": 11}
    assert rec["per_rank"][1]["l2_misses"] == 22
    assert rec["total"] == {"instructions": 3000, "data_accesses": 2000, "l1d_misses": 99, "l2_misses": 33}
    assert "L2 2 MiB 16-way" in rec["note"]
    assert_valid({**run_record_frame(), "counters": rec})


def test_a_missing_dump_gives_a_note_never_partial_counts(tmp_path):
    write_dump(tmp_path, 10, 0, 1000, (40, 4), (10, 1))
    d1 = counters.Geometry("l1d", 49152, 12, 64, 49152)
    rec = counters.sim_record(tmp_path, 3, "sim", d1, d1)
    assert rec["source"] == "none" and "rank(s) 1, 2 of 3" in rec["note"]
    assert "total" not in rec and "per_rank" not in rec
    assert_valid({**run_record_frame(), "counters": rec})


def test_without_valgrind_the_record_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(counters, "valgrind", lambda: None)
    assert not counters.simulating("sim")
    rec = counters.run_record("sim", tmp_path, 2)
    assert rec["source"] == "none" and "apt-get install valgrind" in rec["note"] and "total" not in rec


def test_zeros_in_place_of_counts_are_refused_by_the_schema():
    bad = {"source": "none", "scope": "timed iterations", "simulated": False, "note": "x", "total": {}}
    assert schemas.problems({**run_record_frame(), "counters": bad}, "t")
    counted = {"source": "papi", "scope": "t", "simulated": False}  # a source that counted must carry its counts
    assert schemas.problems({**run_record_frame(), "counters": counted}, "t")
    negative = {**counted, "events": {}, "per_rank": [], "total": {"l2_misses": -1}}
    assert schemas.problems({**run_record_frame(), "counters": negative}, "t")


def test_the_pmu_is_looked_for_where_the_kernel_lists_event_sources(tmp_path):
    assert not counters.pmu_present(tmp_path)
    (tmp_path / "cpu").mkdir()
    assert counters.pmu_present(tmp_path)


def test_simulated_runs_use_the_simulator_build_under_callgrind(tmp_path, monkeypatch, fake_build):
    monkeypatch.setattr(counters, "valgrind", lambda: "/usr/bin/valgrind")
    spec = runner.RunSpec(app="ring", layout=parse_layout("1x2"), results=tmp_path / "r.jsonl", counters="sim")
    _, argv = runner.build(spec, tmp_path, "id")
    vg = argv.index("/usr/bin/valgrind")
    assert "--tool=callgrind" in argv and "--cache-sim=yes" in argv
    assert any(a.startswith("--D1=") for a in argv) and any(a.startswith("--LL=") for a in argv)
    assert f"--callgrind-out-file={tmp_path}/callgrind.%p" in argv
    assert argv[vg + 8] == str(counters.sim_binary("ring"))
    assert argv[argv.index("--counters") + 1] == "sim"
    hw = runner.build(runner.RunSpec(app="ring", layout=parse_layout("1x2"), counters="hw"), tmp_path, "id")[1]
    assert "/usr/bin/valgrind" not in hw and hw[hw.index("--counters") + 1] == "hw"
    with pytest.raises(InputError, match="openmp backend only"):
        runner.build(
            runner.RunSpec(app="ring", layout=parse_layout("1x2"), counters="sim", backend="kokkos"), tmp_path, "x"
        )
    assert "counters" in json.loads(runner.sweep_key(spec))


def test_report_shows_the_outermost_misses_and_the_rings_misses_per_kib():
    recs = [
        ring_record(tile, misses, sim) for tile, misses, sim in ((0, 4096, True), (262144, 1024, True), (0, 0, False))
    ]
    rows = report.summarize(recs)
    sim_rows = [r for r in rows if r.simulated]
    assert {r.mode for r in sim_rows} == {"flat sim", "tiled sim"}  # never pooled with the native run
    flat = next(r for r in sim_rows if r.tile == "off")
    assert flat.median_misses == 4096 and flat.miss_level == "l2_misses"
    assert flat.misses_per_kib == pytest.approx(4096 * 1024 / 1e9)  # 1 GB/s for 1 s
    assert "simulated" in flat.flags
    native = next(r for r in rows if not r.simulated)
    assert native.median_misses is None
    flat_out = report.flat_rows(rows)
    assert {d["miss_level"] for d in flat_out} == {"l2_misses", None}
    assert report.miss_label("llc_misses") == "LLC" and counters.label("l1d_misses") == "L1d misses"


def ring_record(tile: int, misses: int, sim: bool) -> dict:
    rec = {
        **run_record_frame(),
        "variant": {"mode": "tiled" if tile else "flat", "threads": 1, "tile_bytes": tile, "backend": "openmp"},
        "size": {"block_bytes": 2**23, "passes": 8, "flops": 1, "iterations": 2},
        "time": {"total": 1.0, "comm": 0.1},
        "metrics": {"effective_gbs": 1.0},
    }
    if sim:
        rec["counters"] = {
            "source": "callgrind",
            "simulated": True,
            "scope": "timed iterations",
            "events": {"l2_misses": "DLmr+DLmw"},
            "per_rank": [{"l2_misses": misses}],
            "total": {"l2_misses": misses, "l1d_misses": 4 * misses},
        }
    return rec


def run_record_frame() -> dict:
    return json.loads((Path(__file__).parent / "data" / "run-record.json").read_text())


def assert_valid(rec: dict) -> None:
    assert schemas.problems(rec, "t") == []
