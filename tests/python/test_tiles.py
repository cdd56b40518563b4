"""`pxq tune` and `pxq report tiles` without a build: Google Benchmark JSON is written by
hand (or by a stand-in pxq-bench-tiling), so the selection, the spread, the profile and its
errors are checked exactly."""

import json
from pathlib import Path

import pytest

from pxq import cli
from pxq.analysis.models import tiles
from pxq.core.errors import InputError


def test_the_best_tile_is_weighed_against_one_window_of_the_buffer(tmp_path, capsys):
    """Where a tile at least the buffer long was measured (the untiled loop), the profile says
    whether the best tile beat it beyond the noise; --tile auto leaves buffers up to it untiled
    where it did not. No tile that long, or no buffer from the benchmark: not weighed."""
    buf = 1 << 20

    def weigh(by_tile: dict[int, list[float]], buffer: int | None = buf) -> tiles.Best:
        (b,) = tiles.best_tiles([tiles.Sample("cg_spmv", t, 1, g, buffer) for t, gs in by_tile.items() for g in gs])
        return b

    lost = weigh({262144: [4.8, 4.7, 4.9], 1 << 20: [5.2, 5.1, 5.3], 4 << 20: [5.0, 5.2, 5.1]})
    assert (lost.tile, lost.pays, lost.buffer, lost.untiled_gbs) == (1 << 20, False, buf, 5.2)  # 1M is one window
    paid = weigh({262144: [9.0, 9.1, 8.9], 1 << 20: [6.0, 6.1, 5.9]})
    assert (paid.tile, paid.pays) == (262144, True)
    in_noise = weigh({262144: [6.3, 5.7, 6.4], 1 << 20: [6.0, 6.1, 5.9]})  # 5% up, one repetition below
    assert in_noise.pays is False
    assert weigh({262144: [9.0], 65536: [8.0]}).pays is None  # nothing the buffer long
    assert weigh({262144: [9.0], 1 << 20: [6.0]}, None).pays is None  # no buffer from the benchmark
    entries = tiles.profile_entries([lost])
    assert entries["cg_spmv"]["1"]["pays"] is False and entries["cg_spmv"]["1"]["buffer"] == buf
    assert "pays" not in tiles.profile_entries([weigh({262144: [9.0], 65536: [8.0]})])["cg_spmv"]["1"]
    tiles.print_best(tiles.Console(width=200), [lost], "t")
    out = capsys.readouterr().out
    assert "did not beat one window of its whole 1M buffer" in out and "untiled for buffers up to 1M" in out


MACHINE = {
    "host": "node7",
    "cpu_model": "Example CPU 9000",
    "caches": {"l1d": {"bytes": 49152}, "l2": {"bytes": 2097152}, "l3": {"bytes": 110100480}},
}


def bench_json(samples: dict[tuple[str, int, int], list[float]]) -> dict:
    """Google Benchmark's JSON: one iteration entry per repetition, plus aggregates to ignore."""
    benchmarks = []
    for (kernel, tile, threads), gbs in samples.items():
        name = f"{kernel}/tile:{tile}/threads:{threads}/real_time"
        for i, g in enumerate(gbs):
            benchmarks.append(
                {
                    "name": name,
                    "run_name": name,
                    "run_type": "iteration",
                    "repetition_index": i,
                    "bytes_per_second": g * 1e9,
                    "items_per_second": 1.0,
                }
            )
        benchmarks.append(
            {
                "name": name + "_median",
                "run_name": name,
                "run_type": "aggregate",
                "aggregate_name": "median",
                "bytes_per_second": 1e15,
            }
        )
    return {
        "context": {
            "caches": [
                {"type": "Data", "level": 1, "size": 49152},
                {"type": "Instruction", "level": 1, "size": 32768},
                {"type": "Unified", "level": 2, "size": 2097152},
                {"type": "Unified", "level": 3, "size": 110100480},
            ]
        },
        "benchmarks": benchmarks,
    }


SAMPLES = {
    ("ring_pass", 65536, 1): [60.0, 62.0, 61.0],
    ("ring_pass", 262144, 1): [70.0, 77.0, 76.0],
    ("ring_pass", 1048576, 1): [75.0, 74.0, 73.0],
    ("ring_pass", 262144, 2): [100.0, 101.0, 99.0],
    ("ring_pass", 1048576, 2): [110.0, 111.0, 112.0],
    ("mg_resid", 4096, 1): [5.0, 5.5, 6.0],
}


def write_bench(path: Path, samples=SAMPLES) -> Path:
    path.write_text(json.dumps(bench_json(samples)))
    return path


def test_best_tile_is_the_highest_median_with_its_spread(tmp_path):
    res = tiles.read_results([write_bench(tmp_path / "b.json")])
    assert res.caches == {"l1d": 49152, "l2": 2097152, "l3": 110100480}
    assert len(res.samples) == 18  # aggregates ignored
    best = {(b.kernel, b.threads): b for b in tiles.best_tiles(res.samples)}
    one = best[("ring_pass", 1)]
    assert one.tile == 262144 and one.gbs == 76.0 and one.repetitions == 3
    assert abs(one.spread - 7.0 / 76.0) < 1e-12
    assert one.runner_up == 1048576 and one.runner_up_gbs == 74.0
    two = best[("ring_pass", 2)]  # 11% faster than 256K, every repetition above: it replaces 256K
    assert two.tile == 1048576 and two.reference_gbs == 100.0 and two.faster_in_noise is None
    assert best[("mg_resid", 1)].reference_gbs is None


def test_profile_keeps_other_kernels_on_the_same_machine_and_replaces_another_machines(tmp_path):
    profile = tmp_path / "cfg" / "tiles.json"
    best = tiles.best_tiles(tiles.read_results([write_bench(tmp_path / "b.json")]).samples)
    written, note = tiles.write_profile(profile, MACHINE, [b for b in best if b.kernel == "mg_resid"], Path("x"))
    assert note == "" and set(written["kernels"]) == {"mg_resid"}
    written, _ = tiles.write_profile(profile, MACHINE, [b for b in best if b.kernel == "ring_pass"], Path("x"))
    data = json.loads(profile.read_text())
    assert (data["kind"], data["schema"]) == ("tile-profile", 2)
    assert set(data["kernels"]) == {"mg_resid", "ring_pass"}
    assert data["kernels"]["ring_pass"]["2"]["tile"] == 1048576
    assert data["machine"] == {
        "host": "node7",
        "cpu_model": "Example CPU 9000",
        "caches": {"l1d": 49152, "l2": 2097152, "l3": 110100480},
    }
    other = dict(MACHINE, host="node8")
    written, note = tiles.write_profile(profile, other, [b for b in best if b.kernel == "ring_pass"], Path("x"))
    assert "was for node7" in note and set(written["kernels"]) == {"ring_pass"}


def test_corrupt_profile_is_a_clear_error_and_is_not_overwritten(tmp_path):
    profile = tmp_path / "tiles.json"
    profile.write_text('{"schema": "pxq-tile-profile/1", "kern')
    with pytest.raises(InputError, match="is not valid.*--replace-profile"):
        tiles.read_profile(profile)
    best = tiles.best_tiles(tiles.read_results([write_bench(tmp_path / "b.json")]).samples)
    with pytest.raises(InputError):
        tiles.write_profile(profile, MACHINE, best, Path("x"))
    assert profile.read_text() == '{"schema": "pxq-tile-profile/1", "kern'
    tiles.write_profile(profile, MACHINE, best, Path("x"), replace=True)
    assert json.loads(profile.read_text())["schema"] == tiles.PROFILE_SCHEMA


def test_targets_and_bad_results_are_named(tmp_path):
    assert tiles.kernels_for("cg") == ("cg_update", "cg_spmv")
    assert tiles.kernels_for("ft_pencils") == ("ft_pencils",)
    assert tiles.kernels_for(None) == tiles.KERNELS
    with pytest.raises(InputError, match="unknown app or kernel 'lu'"):
        tiles.kernels_for("lu")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="not a Google Benchmark JSON"):
        tiles.read_results([tmp_path / "bad.json"])
    with pytest.raises(InputError, match="no such file"):
        tiles.read_results([tmp_path / "missing.json"])


def test_report_tiles_prints_the_best_tiles_and_writes_the_curves(tmp_path, capsys):
    bench = write_bench(tmp_path / "b.json")
    code = cli.main(["report", "tiles", str(bench), "--plot", str(tmp_path / "c.png")])
    out = capsys.readouterr().out
    assert code == 0
    assert "ring_pass" in out and "256K" in out and "1M" in out
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code = cli.main(["report", "tiles"])
    assert code == 2 and "needs a tile benchmark JSON" in capsys.readouterr().err


def test_tune_runs_the_benchmark_and_writes_the_profile(fake_build, tmp_path, capsys, monkeypatch):
    bin_dir = fake_build / "build" / "bin"
    # Stand-ins: pxq-envinfo prints the machine (its registry and resolution are the real
    # binary's), pxq-bench-tiling writes Google Benchmark JSON to --benchmark_out and records
    # the filter it was given.
    real = bin_dir / "pxq-envinfo-real"
    (bin_dir / "pxq-envinfo").rename(real)
    (bin_dir / "pxq-envinfo").write_text(
        f'#!/bin/sh\ncase "$1" in registry|resolve) exec {real} "$@";; esac\necho \'{json.dumps(MACHINE)}\'\n'
    )
    (bin_dir / "pxq-bench-tiling").write_text(
        '#!/bin/sh\nfor a in "$@"; do case $a in --benchmark_out=*) out=${a#--benchmark_out=};; esac; done\n'
        f'echo "$@" > {tmp_path}/args\ncp {write_bench(tmp_path / "canned.json")} "$out"\n'
    )
    for stand_in in ("pxq-envinfo", "pxq-bench-tiling"):
        (bin_dir / stand_in).chmod(0o755)
    profile = tmp_path / "p" / "tiles.json"
    code = cli.main(
        [
            "tune",
            "ring",
            "--tiles",
            "64K,256K,1M",
            "--threads",
            "1,2",
            "--repeat",
            "3",
            "--min-time",
            "0.01",
            "--out",
            str(tmp_path / "r" / "t.json"),
            "--profile",
            str(profile),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    args = (tmp_path / "args").read_text()
    assert "--benchmark_filter=^(ring_pass)/tile:(65536|262144|1048576)/threads:(1|2)/" in args
    assert "--benchmark_repetitions=3" in args and "--benchmark_enable_random_interleaving=true" in args
    data = json.loads(profile.read_text())
    assert data["kernels"]["ring_pass"]["1"]["tile"] == 262144
    assert (tmp_path / "r" / "t.png").exists()
    # A corrupt profile stops tune before any benchmark runs.
    profile.write_text("[]")
    (tmp_path / "args").unlink()
    code = cli.main(["tune", "ring", "--profile", str(profile), "--out", str(tmp_path / "r" / "t.json")])
    assert code == 2 and "is not valid" in capsys.readouterr().err
    assert not (tmp_path / "args").exists()
    code = cli.main(["tune", "lu", "--profile", str(profile)])
    assert code == 2 and "unknown app or kernel" in capsys.readouterr().err


def test_version_one_profiles_are_still_read(tmp_path):
    profile = tmp_path / "tiles.json"
    profile.write_text(json.dumps({"schema": tiles.PROFILE_LEGACY, "machine": MACHINE, "kernels": {}}))
    assert tiles.read_profile(profile)["kernels"] == {}
    profile.write_text(json.dumps({"kind": "tile-profile", "schema": 3, "machine": MACHINE, "kernels": {}}))
    with pytest.raises(InputError, match='"schema": 2'):
        tiles.read_profile(profile)


def test_256k_stays_unless_the_winner_is_significantly_faster():
    # 4% faster with overlapping repetitions: within the noise, 256K kept and the winner named.
    close = {("ring_pass", 262144, 1): [100.0, 96.0, 103.0], ("ring_pass", 65536, 1): [104.0, 101.0, 108.0]}
    samples = [tiles.Sample(k, t, th, g) for (k, t, th), gs in close.items() for g in gs]
    (b,) = tiles.best_tiles(samples)
    assert b.tile == 262144 and b.faster_in_noise == 65536 and b.runner_up == 65536
    # 10% faster but one repetition below 256K's best: still not significant.
    mixed = {("ring_pass", 262144, 1): [100.0, 99.0, 101.0], ("ring_pass", 65536, 1): [110.0, 100.5, 111.0]}
    samples = [tiles.Sample(k, t, th, g) for (k, t, th), gs in mixed.items() for g in gs]
    assert tiles.best_tiles(samples)[0].tile == 262144
    # 10% faster, every repetition above: replaced.
    clear = {("ring_pass", 262144, 1): [100.0, 99.0, 101.0], ("ring_pass", 65536, 1): [110.0, 109.0, 111.0]}
    samples = [tiles.Sample(k, t, th, g) for (k, t, th), gs in clear.items() for g in gs]
    assert tiles.best_tiles(samples)[0].tile == 65536


def test_the_curves_say_the_machine_and_keep_far_caches_off_the_axis(tmp_path, saved_figures):
    """The title names the machine and day in words (not the file's path); a cache far beyond
    the tiles measured (a VM's 480 MiB L3) is named in the panel's title instead of stretching
    the axis until the data sit in a corner."""
    data = bench_json({("ring_pass", 4096, 1): [90.0, 91.0], ("ring_pass", 65536, 1): [88.0, 87.0]})
    data["context"].update(host_name="node7", date="2026-11-26T10:00:00+00:00")
    data["context"]["caches"][-1]["size"] = 480 << 20
    bench = tmp_path / "b.json"
    bench.write_text(json.dumps(data))
    assert cli.main(["report", "tiles", str(bench), "--plot", str(tmp_path / "c.png")]) == 0
    (fig,) = saved_figures
    title = fig._suptitle.get_text()
    assert "node7, 2026-11-26" in title and str(tmp_path) not in title and ".json" not in title
    (ax,) = fig.axes
    assert ax.get_xlim()[1] < 1 << 20  # the axis spans the tiles, not the L3
    assert "L3 480M" in ax.get_title() and "beyond the tiles" in ax.get_title()


def test_measuring_the_caches_runs_the_stride_probe_and_keys_the_profile_by_this_machine(tmp_path):
    """`caches.measure` (a machine with no kept profile yet): the stride probe's record becomes a
    profile carrying this machine's key (host, CPU, hwloc's sizes), its levels and its peak."""
    import stat

    from pxq.machine import caches

    rec = {
        "detection": {"steps": []},
        "size": {"max": 8 << 20},
        "context": {"date": "2026-11-27"},
        "blocks": [{"gbs": 41.5}, {"gbs": None}],
    }
    (tmp_path / "rec.json").write_text(json.dumps(rec) + "\n")
    probe = tmp_path / "pxq-stride"  # writes the record to its last argument, the --json path
    probe.write_text(f'#!/bin/sh\neval "out=\\${{$#}}"\ncp {tmp_path / "rec.json"} "$out"\n')
    probe.chmod(probe.stat().st_mode | stat.S_IEXEC)
    machine = {"host": "vm", "cpu_model": "Xeon", "caches": {"l2": {"bytes": 2 << 20}, "l3": {"bytes": 4 << 20}}}
    prof = caches.measure(machine, probe)
    assert (prof["host"], prof["cpu_model"], prof["hwloc"]["l2"]) == ("vm", "Xeon", 2 << 20)
    assert prof["peak_gbs"] == 41.5 and prof["date"] == "2026-11-27" and prof["source"] == "hwloc"
