"""Every figure kind drawn from a stored record (tests/python/data/figures/, records written
by pxq's own probes, profiler and studies): a title that names the experiment, axes with
labels (and units), readable ticks, a legend where colours mean something, no collisions."""

import itertools
from pathlib import Path

import pytest

from pxq import cli, figures

DATA = Path(__file__).parent / "data" / "figures"
STUDIES = Path(__file__).parent / "data" / "studies"  # one study record per study, from pxq study NAME
FILES = {p.stem: p for p in DATA.glob("*.jsonl")} | {f"study-{p.stem}": p for p in STUDIES.glob("*.jsonl")}
KINDS = sorted(FILES)


@pytest.fixture
def drawn(monkeypatch):
    """The figures that `figures.save` writes, kept open for inspection."""
    kept = []
    save = figures.save

    def keep(fig, path, dpi=120):
        fig.canvas.draw()
        kept.append(_describe(fig))
        return save(fig, path, dpi)

    monkeypatch.setattr(figures, "save", keep)
    return kept


def _describe(fig):
    fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = []
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        ticks = {}
        for name, labels in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels())):
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels if t.get_visible() and t.get_text()]
            ticks[name] = boxes
        axes.append(
            {
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "ticks": ticks,
                "lines": len([ln for ln in ax.get_lines() if ln.get_label() and not ln.get_label().startswith("_")]),
                "legend": ax.get_legend() is not None,
                "title": ax.get_title(),
            }
        )
    title = fig._suptitle.get_text() if fig._suptitle else ""
    return {"title": title or " ".join(a["title"] for a in axes), "axes": axes}


@pytest.mark.parametrize("kind", KINDS)
def test_each_figure_kind_redraws_from_its_record(kind, tmp_path, drawn, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / f"{kind}.png"
    assert cli.main(["report", str(FILES[kind]), "--plot", str(out)]) == 0
    assert out.is_file() and out.stat().st_size > 10_000
    (fig,) = drawn
    title = fig["title"]
    assert len(title) > 15 and "/" not in title and ".jsonl" not in title, title
    for ax in fig["axes"]:
        assert ax["xlabel"] and ax["ylabel"], (kind, ax["xlabel"], ax["ylabel"])
        for name, boxes in ax["ticks"].items():
            texts = [t for t, _ in boxes]
            assert not any("^" in t or "$" in t for t in texts), (kind, name, texts)  # 16K, not 2^14
            for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
                assert not a.overlaps(b), f"{kind}: {name} tick labels {ta!r} and {tb!r} collide"
        if ax["lines"] > 1:
            assert ax["legend"] or any(o["legend"] for o in fig["axes"]), f"{kind}: lines without a legend"


def test_the_speedup_chart_explains_its_marks_and_keeps_its_axis_for_trusted_bars(tmp_path, saved_figures):
    """A 12.5x bar from a 0.08 s configuration spread over 2.4x its median (short, noisy) is
    hatched, labelled with its flags and cut at an axis fitted to the trusted bars; the legend
    says what the error bars, the dashed line and the hatching mean."""
    from test_report import record, write

    def variant(rec, mode, threads, ranks):
        return {
            **rec,
            "variant": {**rec["variant"], "mode": mode, "threads": threads},
            "layout": {**rec["layout"], "ranks_per_node": ranks, "threads": threads},
        }

    recs = [variant(record(t, 1.0), "flat", 1, 2) for t in (1.0, 1.02, 0.98, 1.01)]
    recs += [variant(record(t, 1.0), "hybrid", 2, 1) for t in (0.8, 0.82, 0.79, 0.81)]
    recs += [variant(record(t, 1.0), "tiled", 1, 2) for t in (0.08, 0.01, 0.2, 0.07)]
    write(tmp_path / "r.jsonl", recs)
    assert cli.main(["report", str(tmp_path / "r.jsonl"), "--plot", str(tmp_path / "r.png")]) == 0
    (fig,) = saved_figures
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("interquartile" in t for t in legend) and any("flagged" in t for t in legend)
    assert any("as fast as flat" in t for t in legend)
    assert ax.get_ylim()[1] < 3  # fitted to the trusted bars (1.0x, 1.25x), not to the 12.5x one
    notes = [t.get_text() for t in ax.texts]
    assert any("(cut)" in n and "short" in n and "noisy" in n for n in notes), notes
    assert any(p.get_hatch() == "//" for p in ax.patches)


def test_figures_carry_their_caveats_in_words(tmp_path, saved_figures):
    """The placement study's time panel says when its ranks oversubscribed the cores; the stride
    probe's title names its cores in words, never a Python list."""
    assert cli.main(["report", str(FILES["study-placement"]), "--plot", str(tmp_path / "p.png")]) == 0
    titles = [ax.get_title() for ax in saved_figures[-1].axes]
    assert any("oversubscribe" in t for t in titles), titles
    assert cli.main(["report", str(FILES["stride"]), "--plot", str(tmp_path / "s.png")]) == 0
    title = saved_figures[-1]._suptitle.get_text()
    assert "[" not in title and ("core " in title or "cores " in title), title


def test_the_message_shares_legend_covers_no_bar(tmp_path, saved_figures):
    assert cli.main(["report", str(FILES["profile"]), "--plot", str(tmp_path / "m.png")]) == 0
    (fig,) = saved_figures
    renderer = saved_figures.renderer(fig)
    boxes = [ax.get_legend().get_window_extent(renderer) for ax in fig.axes if ax.get_legend() is not None]
    bars = [p.get_window_extent(renderer) for ax in fig.axes for p in ax.patches if p.get_height() > 0]
    assert boxes and bars
    assert [b for b in bars if any(lg.overlaps(b) for lg in boxes)] == []
    # Outside every panel: no bar of any record can come under it.
    panels = [ax.get_window_extent(renderer) for ax in fig.axes]
    assert not any(lg.overlaps(p) for lg in boxes for p in panels)
