"""The report's figures come from the median time, never from a median of rates."""

import pytest
from conftest import RUN_RECORD, complete

from pxq.analysis.exports import report
from pxq.analysis.models import roofline


def record(seconds: float, gbs: float, mops: float | None = None, metric: str = "effective_gbs") -> dict:
    metrics = {metric: gbs, **({"mops_total": mops} if mops is not None else {})}
    return {
        "kind": "run",
        "schema": 2,
        "app": "cg",
        "status": "ok",
        "size": {"class": "S"},
        "variant": {"mode": "flat", "threads": 1, "tile_bytes": 0, "backend": "openmp"},
        "layout": {"nodes": 1, "ranks_per_node": 2, "threads": 1, "alloc": "block"},
        "time": {"total": seconds, "comm": 0.0},
        "metrics": metrics,
    }


def test_rates_over_the_whole_run_come_from_the_median_time():
    # 6 GB and 600 Mop in each run: 1 s and 3 s. The median time is 2 s, so 3 GB/s and 300 Mop/s;
    # the median of the rates would say 4 GB/s and 400 Mop/s.
    (row,) = report.summarize([record(1.0, 6.0, 600.0), record(3.0, 2.0, 200.0)])
    assert row.median == 2.0
    assert row.median_gbs == 3.0
    assert row.median_mops == 300.0


def test_a_phase_bandwidth_is_the_median_run_s():
    rows = report.summarize([record(t, g, metric="spmv_gbs") for t, g in ((1.0, 9.0), (2.0, 5.0), (3.0, 1.0))])
    assert rows[0].median_gbs == 5.0


def test_a_faster_configuration_never_shows_a_lower_whole_run_bandwidth():
    slow = [record(t, 6.0 / t) for t in (2.0, 2.1, 5.0, 5.2)]
    fast = [
        dict(record(t, 6.0 / t), variant={**record(1, 1)["variant"], "mode": "hybrid"}) for t in (1.0, 1.1, 1.2, 9.0)
    ]
    by_mode = {r.mode: r for r in report.summarize(slow + fast)}
    assert by_mode["hybrid"].median < by_mode["flat"].median
    assert by_mode["hybrid"].median_gbs > by_mode["flat"].median_gbs


def write(path, recs):
    import json

    path.write_text("".join(json.dumps(complete(r)) + "\n" for r in recs))


def with_host(rec: dict, host: str) -> dict:
    return {**rec, "context": {"host": host}}


def test_report_reads_folders_and_globs_and_exports_flat_columns(tmp_path, capsys, fake_build):
    import csv
    import io
    import json

    from pxq import cli

    write(tmp_path / "a.jsonl", [with_host(record(1.0, 6.0, 600.0), "n1"), with_host(record(3.0, 2.0, 200.0), "n1")])
    write(tmp_path / "b.jsonl", [with_host(record(2.0, 3.0, 300.0), "n1")])
    assert cli.main(["report", str(tmp_path), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1 and rows[0]["runs"] == "3" and list(rows[0]) == list(report.COLUMNS)
    assert float(rows[0]["median_s"]) == 2.0

    # --group-by splits what differs in the named field; a glob picks the same files.
    assert cli.main(["report", str(tmp_path / "*.jsonl"), "--format", "json", "--group-by", "layout.alloc"]) == 0
    assert [r["runs"] for r in json.loads(capsys.readouterr().out)] == [3]
    # Runs from another host are never merged: the host becomes a column of its own.
    write(tmp_path / "b.jsonl", [with_host(record(2.0, 3.0, 300.0), "n2")])
    assert cli.main(["report", str(tmp_path / "*.jsonl"), "--format", "json"]) == 0
    by_host = {r["context.host"]: r for r in json.loads(capsys.readouterr().out)}
    assert by_host["n1"]["runs"] == 2 and by_host["n2"]["runs"] == 1

    out = tmp_path / "t.md"
    assert cli.main(["report", str(tmp_path / "a.jsonl"), "--format", "markdown", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("| app | size |") and len(lines) == 3


def test_weak_figures_are_flagged():
    short = report.summarize([record(0.01, 1.0), record(0.012, 1.0), record(0.011, 1.0)])[0]
    noisy = report.summarize([record(1.0, 1.0), record(2.0, 1.0)])[0]
    single = report.summarize([record(1.0, 1.0)])[0]
    steady = report.summarize([record(1.0, 1.0), record(1.05, 1.0), record(1.1, 1.0)])[0]
    assert short.flags == ["short"] and noisy.flags == ["noisy"] and single.flags == ["single"]
    assert steady.flags == []
    assert report.flat_rows([noisy])[0]["flags"] == "noisy"


def test_runs_that_differ_in_placement_or_host_are_never_merged():
    packed = dict(record(1.0, 6.0), placement_summary={"requested": "packed"}, context={"host": "n1"})
    spread = dict(record(2.0, 3.0), placement_summary={"requested": "spread"}, context={"host": "n1"})
    split = report.split_fields([packed, spread])
    assert split == ["placement_summary.requested"]
    rows = report.summarize([packed, spread], split)
    assert [(r.extra, len(r.times)) for r in rows] == [(("packed",), 1), (("spread",), 1)]
    other_host = dict(packed, context={"host": "n2"})
    assert report.split_fields([packed, other_host], ["layout.alloc"]) == ["layout.alloc", "context.host"]
    assert report.split_fields([packed, dict(packed)]) == []


def test_oversubscribed_runs_are_flagged():
    over = dict(record(1.0, 1.0), layout={**record(1, 1)["layout"], "oversubscribed": True})
    (row,) = report.summarize([over, record(1.1, 1.0)])
    assert "oversubscribed" in row.flags
    assert "oversubscribed" not in report.summarize([record(1.0, 1.0)])[0].flags


def test_an_apps_own_choices_split_rows_and_name_the_mode():
    def with_variant(seconds: float, **choice: str) -> dict:
        rec = record(seconds, 1.0)
        return dict(rec, variant={**rec["variant"], **choice})

    rows = report.summarize(
        [
            with_variant(1.0),
            with_variant(1.1, matrix="csr"),
            with_variant(0.6, matrix="sym"),
            with_variant(0.5, fft="fftw"),
        ]
    )
    assert sorted((r.mode, len(r.times)) for r in rows) == [("flat", 2), ("flat+fftw", 1), ("flat+sym", 1)]


HOSTILE = '\x1b[2J\x1b]0;pwned\x07[bold red]BOOM[/] <script>alert(1)</script> | *x* =HYPERLINK("http://e")'


def test_every_output_of_a_hostile_record_shows_its_text_as_text(tmp_path, capsys):
    """Free-text fields a record may carry (host, CPU, compiler, an error's output) rendered by
    every output: nothing reaches the terminal as a control sequence or rich markup, markdown
    is escaped, a CSV cell never starts a formula, JSON stays JSON."""
    import csv
    import io
    import json

    from pxq import cli

    def hostile(t: float, host: str) -> dict:
        rec = with_host(record(t, 6.0 / t), host)
        rec["context"].update(cpu_model=HOSTILE, compiler=HOSTILE)
        return rec

    failed = complete({**record(1.0, 1.0), "status": "error"})
    for key in ("time", "metrics", "verification"):
        failed.pop(key, None)
    failed.update(
        driver={"run_id": "r1"}, error={"returncode": 1, "seconds": 1.0, "reason": "x", "output_tail": HOSTILE}
    )
    write(tmp_path / "a.jsonl", [hostile(1.0, HOSTILE), hostile(1.1, "=cmd|' /C calc'!A0"), failed])
    path = str(tmp_path / "a.jsonl")
    outputs, printed = {}, {}
    for fmt in ("table", "markdown", "csv", "json"):
        code = cli.main(["report", path, "--group-by", "context.host"] + ([] if fmt == "table" else ["--format", fmt]))
        assert code == 3  # one run failed
        out = capsys.readouterr()
        outputs[fmt], printed[fmt] = out.out + out.err, out.out
    assert cli.main(["compare", path, path]) == 0
    outputs["compare"] = capsys.readouterr().out
    for name, text in outputs.items():
        assert "\x1b" not in text and "\x07" not in text, name
    assert "[bold red]BOOM[/]" in outputs["table"]  # shown as written, not as markup
    assert "\\[bold red\\]BOOM\\[/\\]" in outputs["markdown"] and "\\<script\\>" in outputs["markdown"]
    assert "<script>" not in outputs["markdown"] and " \\| " in outputs["markdown"]
    hosts = [r["context.host"] for r in csv.DictReader(io.StringIO(printed["csv"]))]
    assert len(hosts) == 2 and all(h[:1] not in "=+-@" for h in hosts), hosts
    assert "'=cmd|' /C calc'!A0" in hosts
    assert {r["context.host"] for r in json.loads(printed["json"])} == {HOSTILE, "=cmd|' /C calc'!A0"}


def test_a_pass_close_to_a_fail_is_flagged_by_how_much_tolerance_it_used():
    def used(share: float) -> dict:
        rec = record(1.0, 1.0)
        rec["verification"] = {"passed": True, "method": "m", "tolerance_used": share}
        return rec

    (row,) = report.summarize([used(0.01), used(0.7), used(0.02)])
    assert row.tolerance_used == 0.7 and "near-tolerance" in row.flags
    (row,) = report.summarize([used(0.01), used(0.09)])
    assert "near-tolerance" not in row.flags


def test_one_run_has_no_spread_to_show():
    """A single run's spread is '-' in the table and null in the exports, not '0.0%'."""
    one = report.summarize([record(1.0, 2.0)])
    two = report.summarize([record(1.0, 2.0), record(1.5, 2.0)])
    assert report.flat_rows(one)[0]["spread"] is None and report.flat_rows(two)[0]["spread"] == 0.4

    def spread_cells(rows: list[report.Row]) -> list[str]:
        return next(list(col.cells) for col in report.table(rows).columns if col.header == "spread")

    assert spread_cells(one) == ["-"] and spread_cells(two) == ["40.0%"]


def test_the_table_shows_sizes_that_differ_and_short_headers_without_none(tmp_path, capsys, fake_build):
    """Two ring sizes are two rows that say their size; a field that splits rows has a short
    header (not a dotted path cut by the terminal) and a missing value is '-', never None."""
    from conftest import RUN_RECORD

    from pxq import cli

    def ring(seconds, block, requested, commit):
        rec = record(seconds, 6.0)
        return {
            **rec,
            "app": "ring",
            "size": {"block_bytes": block, "passes": 8, "flops": 1},
            "placement_summary": {**RUN_RECORD["placement_summary"], "requested": requested},
            "context": {"host": "n1", "git_commit": commit},
        }

    write(tmp_path / "r.jsonl", [ring(1.0, 1 << 20, None, "a" * 40), ring(2.0, 64 << 20, "packed", "b" * 40)])
    assert cli.main(["report", str(tmp_path / "r.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "placement_summary" not in out and "context.git" not in out
    head = next(line for line in out.splitlines() if "median s" in line)
    assert "size" in head and "placement" in head and "commit" in head
    assert "1M" in out and "64M" in out


def test_the_efficiency_breakdown_multiplies_and_scales_against_the_fewest_workers():
    """Each row takes its factors from its median run (so they multiply); computation scaling is
    the base's useful CPU time over the row's, the base the same problem on the fewest workers."""

    def run(seconds, ranks, threads, useful, comm, mode="flat"):
        rec = record(seconds, 1.0)
        elapsed = [u + c for u, c in zip(useful, comm)]
        runtime = max(elapsed)
        lb = sum(useful) / len(useful) / max(useful)
        ce = max(useful) / runtime
        return {
            **rec,
            "variant": {**rec["variant"], "mode": mode, "threads": threads},
            "layout": {**rec["layout"], "ranks_per_node": ranks, "threads": threads},
            "efficiency": {
                "load_balance": lb,
                "communication": ce,
                "parallel": lb * ce,
                "useful_s": useful,
                "comm_s": comm,
            },
        }

    base = [run(10.0, 1, 1, [10.0], [0.0])]
    two = [run(t, 2, 1, [6.0, 4.0], [0.0, 2.0]) for t in (6.0, 6.1, 5.9)]  # unbalanced: rank 1 waits
    rows = {str(r.layout): r for r in report.summarize(base + two)}
    lb, ce, pe, useful = rows["1x2"].median_efficiency
    assert lb == pytest.approx(5.0 / 6.0) and ce == pytest.approx(1.0) and pe == pytest.approx(lb * ce)
    assert rows["1x2"].computation_scaling == pytest.approx(10.0 / 10.0)  # 6 + 4 useful seconds, as one rank's 10
    assert rows["1x2"].global_efficiency == pytest.approx(pe)
    assert rows["1x1"].computation_scaling == pytest.approx(1.0)
    exported = {d["ranks_per_node"]: d for d in report.flat_rows(list(rows.values()))}
    assert exported[2]["load_balance"] == pytest.approx(5.0 / 6.0) and exported[2]["parallel_efficiency"] == pe


def test_a_run_started_beside_other_work_is_flagged_loaded():
    def at(load, cpus=2):
        return {**record(1.0, 6.0), "context": {"load_at_start": load, "logical_cpus": cpus}}

    (quiet,) = report.summarize([at(1.9), at(3.0)])
    assert "loaded" not in quiet.flags  # pxq's own earlier runs leave about one per core
    (busy,) = report.summarize([at(1.0), at(40.0)])
    assert "loaded" in busy.flags and "load_at_start" in report.FLAG_TEXT["loaded"]
    assert not report.started_loaded({"context": {"load_at_start": "40", "logical_cpus": 2}})
    assert not report.started_loaded({"context": {"load_at_start": 40.0}})  # no core count: not judged


def test_a_tile_that_cannot_pay_is_flagged():
    """A tile asked for on a buffer already in its cache: the run's note says it cannot pay, and
    the report flags the row (no-pay), where before only the run's own output said so."""
    rec = record(1.0, 6.0)
    cut = {**rec, "notes": [roofline.NO_PAY + "the buffer it would cut (109.4K) fits in one core's L2 (512K)"]}
    (plain,) = report.summarize([rec, rec])
    (flagged,) = report.summarize([cut, rec])
    assert "no-pay" not in plain.flags and "no-pay" in flagged.flags
    assert "--tile auto runs it untiled" in report.FLAG_TEXT["no-pay"]
    (other,) = report.summarize([{**rec, "notes": ["launcher said 1 node(s), observed 1"]}])
    assert "no-pay" not in other.flags


def test_a_tile_clamped_to_one_window_is_labelled_untiled():
    """A tiled CG whose tile holds the whole vector runs one column window: the same loop as the
    untiled one, so its label says so instead of passing it for a tiled run."""

    def tiled(seconds: float, windows: int) -> dict:
        rec = record(seconds, 1.0)
        variant = {**rec["variant"], "mode": "tiled", "tile_bytes": 256 << 10, "column_windows": windows}
        return dict(rec, variant=variant)

    rows = report.summarize([tiled(1.0, 1), tiled(0.8, 4)])
    assert sorted(r.tile for r in rows) == ["256K", "256K (1 window: untiled)"]


def test_an_auto_tile_left_off_is_labelled_so_and_not_as_unfused():
    """--tile auto on a buffer that fits its cache runs untiled and unfused: its row says "auto:
    off", not "off", and its mode is not marked as fused apart from the tile."""
    rec = record(1.0, 1.0)
    variant = {**rec["variant"], "mode": "tiled", "tile_bytes": 0, "tile_source": "auto:untiled", "fused": False}
    variant["column_windows"] = 1  # CG's untiled loop: one window, which is no tile to label
    (row,) = report.summarize([dict(rec, variant=variant)])
    assert (row.tile, row.mode) == ("auto: off", "tiled")


def test_notes_and_chart_labels_name_the_field_that_tells_rows_apart():
    """Two problem sizes of one variant: the flag note and the chart name each row with its size
    (they read 'ring 1x1 flat, ring 1x1 flat'); one size: no size in the names."""

    def sized(seconds: float, cls: str) -> dict:
        return dict(record(seconds, 1.0), size={"class": cls})

    rows = report.summarize([sized(0.01, "S"), sized(0.02, "W")])
    names = sorted(report.row_name(r, rows) for r in rows)
    assert names[0] != names[1] and all(n.startswith("cg 1x2") for n in names)
    assert [report.row_extras(r, rows) for r in rows] == [[rows[0].size], [rows[1].size]]
    one = report.summarize([sized(0.01, "S")])
    assert report.row_extras(one[0], one) == []


# ---- the report formats: one writer each, options that go with some formats refused elsewhere ----


def test_every_report_format_has_a_writer_and_each_option_names_the_formats_it_goes_with(tmp_path, capsys):
    import json

    from pxq import cli
    from pxq.reports import writers as command

    assert set(command.WRITERS) == {"table", "csv", "json", "markdown", "caliper", "extrap"}
    assert all(set(formats) <= set(command.WRITERS) for formats in command.OPTIONS.values())
    results = tmp_path / "runs.jsonl"
    results.write_text(json.dumps(RUN_RECORD) + "\n")
    for argv, said in (
        (["--out", str(tmp_path / "x.csv")], "--out goes with --format csv, json, markdown, caliper or extrap"),
        (["--records", "probes"], "--records goes with --format csv, json or markdown"),
        (["--format", "caliper", "--records", "runs"], "--records goes with --format csv, json or markdown"),
        (["--format", "json", "--model"], "--model goes with --format extrap"),
    ):
        assert cli.main(["report", str(results), *argv]) == 2, argv
        assert said in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    for fmt in ("csv", "json", "markdown"):
        assert cli.main(["report", str(results), "--format", fmt, "--out", str(tmp_path / f"r.{fmt}")]) == 0
        assert (tmp_path / f"r.{fmt}").read_text().strip()
