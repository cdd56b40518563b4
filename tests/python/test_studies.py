"""The published studies: the registry, the verdict rules on hand-made and stored figures, the
study records (schema), and pxq reproduce's report (markdown, and the HTML page loaded in
headless Chromium with every figure present)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pxq import findings, reproduce, schemas, studies
from pxq.errors import InputError
from pxq.studies import allocation, channels, msgshare, sharing, stride, tiling

STUDIES = Path(__file__).parent / "data" / "studies"
NAMES = [
    "channels",
    "msgdist",
    "contention",
    "sharing",
    "tiling",
    "counters",
    "scalability",
    "allocation",
    "placement",
    "variability",
    "stride",
]


def stored(name: str) -> dict:
    return json.loads((STUDIES / f"{name}.jsonl").read_text())


def test_every_study_is_registered_with_its_published_section():
    assert [m.NAME for m in studies.registry()] == NAMES
    for mod in studies.registry():
        assert mod.SECTION in findings.published(), mod.NAME
        assert findings.source(mod.SECTION) and mod.MINUTES > 0
        assert set(mod.defaults(True)) == set(mod.defaults(False)), mod.NAME
    with pytest.raises(InputError, match="unknown study 'nas'.*channels"):
        studies.get("nas")


@pytest.mark.parametrize("name", NAMES)
def test_stored_study_records_are_valid_and_carry_verdicts(name):
    rec = stored(name)
    assert [p.message for p in schemas.problems(rec, name)] == [], name
    assert rec["findings"] and all(f["verdict"] in findings.VERDICTS for f in rec["findings"])
    for f in rec["findings"]:
        if f["verdict"] != "reproduced":
            assert f["why"], f"{name}: a verdict other than reproduced says why: {f}"


def test_effect_is_inconclusive_within_the_noise_never_a_failure():
    assert findings.effect(1.30, 0.10, True, 0.05) == "reproduced"
    assert findings.effect(1.02, 0.10, True, 0.05) == "inconclusive"
    assert findings.effect(0.80, 0.10, True, 0.05) == "not reproduced"
    assert findings.effect(0.40, 0.10, False, 0.35) == "reproduced"  # a 60% cut against a 70% claim
    assert findings.effect(0.80, 0.10, False, 0.35) == "not reproduced"
    with pytest.raises(ValueError):
        findings.Finding("f", "p", "h", "maybe")


def test_layouts_and_arithmetic_of_the_sweeping_studies():
    assert tiling.fitting_layouts(2) == ["1x2", "2x1"]
    assert tiling.fitting_layouts(4) == ["1x2", "2x1", "1x4", "2x2", "4x1"]
    assert (
        tiling.paper_condition("1x2") == "2 ranks on one chip" and tiling.paper_condition("2x1") == "8 ranks on 2 nodes"
    )
    assert sharing.layouts(16) == ["16x1", "8x2", "4x4", "2x8", "1x16"]
    assert round(100 * sharing.off_node_chance("8x2")) == 93 and round(100 * sharing.off_node_chance("4x4")) == 80
    with pytest.raises(InputError, match="--ranks 1"):
        sharing.layouts(1)


def test_channels_on_one_package_cannot_test_inter_cmp():
    rows = [
        {"channel": "intra_cmp", "small_us": 0.5, "peak_MBps": 18000},
        {"channel": "inter_node", "small_us": 5.0, "peak_MBps": 7000},
    ]
    first, second = channels._findings(rows, findings.section("channels"), virtual=True)
    assert first.verdict == "reproduced" and "one package" in first.why
    assert second.verdict == "cannot be tested here" and "same channel" in second.why
    rows[1]["small_us"] = 0.6  # only 1.2x slower: not far faster
    assert channels._findings(rows, findings.section("channels"), True)[0].verdict == "not reproduced"


def ring(ranks: int, nbytes: int) -> dict:
    upper = [0] + [1 << (k - 1) for k in range(1, 50)]
    b = next(k for k, u in enumerate(upper) if nbytes <= u)
    return {
        "app": "msgprof",
        "ranks": ranks,
        "bins": {"upper_bytes": upper},
        "p2p": [[r, (r + 1) % ranks, b, 1, nbytes] for r in range(ranks)] + [[0, 0, b, 1, nbytes]],
        "collective_model": [],
    }


def test_message_shares_leave_self_apart_and_are_judged_against_the_table():
    model = msgshare.msgdist.parse_model("4x2x2")
    got = msgshare.shares(ring(16, 1024), model)
    assert got["messages"] == [50.0, 25.0, 25.0] and got["self_bytes_percent"] == pytest.approx(5.9, abs=0.1)
    paper = findings.section("message_distribution")
    assert msgshare._app_finding("cg", got, paper).verdict == "not reproduced"  # 45/45/10 in the paper
    close = {"messages": [44.0, 44.0, 12.0], "bytes": [35.0, 38.0, 27.0]}
    assert msgshare._app_finding("cg", close, paper).verdict == "reproduced"


def test_allocation_verdicts_follow_the_papers_claims():
    def rows(block: int, cyclic: int) -> list[dict]:
        return [
            {"alloc": "block", "bytes": {"inter_node": block}, "count": {"inter_node": 1}},
            {"alloc": "cyclic", "bytes": {"inter_node": cyclic}, "count": {"inter_node": 1}},
        ]

    assert allocation._finding("cg", rows(10, 40)).verdict == "reproduced"
    assert allocation._finding("cg", rows(30, 40)).verdict == "not reproduced"
    assert allocation._finding("mg", rows(30, 20)).verdict == "reproduced"
    assert allocation._finding("ft", rows(100, 104)).verdict == "reproduced"
    assert allocation._finding("ring", rows(1, 2)) is None


def test_stride_ratio_is_read_on_the_largest_array():
    rec = {
        "points": [
            {"stride": 256, "bytes": 1 << 20, "contention": 1.1, "ns": 1.0},
            {"stride": 256, "bytes": 1 << 26, "contention": 2.1, "ns": 3.0},
            {"stride": 64, "bytes": 1 << 26, "contention": 1.4, "ns": 2.0},
        ]
    }
    assert stride.by_stride(rec) == [
        {"stride": 64, "bytes": 1 << 26, "ratio": 1.4, "ns": 2.0},
        {"stride": 256, "bytes": 1 << 26, "ratio": 2.1, "ns": 3.0},
    ]


def folder_from_stored(tmp_path: Path) -> tuple[Path, dict]:
    """A reproduce folder as a finished run leaves it, from the stored study records."""
    folder = tmp_path / "report"
    state = {"mode": "quick", "done": {}}
    for name in NAMES:
        (folder / "records").mkdir(parents=True, exist_ok=True)
        shutil.copy(STUDIES / f"{name}.jsonl", folder / "records" / f"{name}.jsonl")
        figure = studies.get(name).plot(stored(name), folder / "figures" / f"{name}.png")
        state["done"][name] = {
            "code": 0,
            "record": f"records/{name}.jsonl",
            "figure": str(figure.relative_to(folder)),
            "verdicts": [f["verdict"] for f in stored(name)["findings"]],
            "seconds": 1.0,
        }
    reproduce.save_progress(folder, state)
    return folder, state


def test_report_markdown_has_every_study_its_tables_and_figures(tmp_path):
    folder, state = folder_from_stored(tmp_path)
    md, page = reproduce.write_report(folder, NAMES, state)
    text = md.read_text()
    assert text.startswith("# pxq: the published multicore-cluster studies")
    assert "## Machine" in text and "| host |" in text
    for name in NAMES:
        assert re.search(rf"^## {name}: ", text, re.M), name
        image = re.search(rf"!\[{name}\]\(([^)]+)\)", text)
        assert image and (folder / image.group(1)).is_file(), name
    assert text.count("| finding | paper | here | verdict | why |") == len(NAMES)
    assert "**cannot be tested here**" in text and "Chai, Gao and Panda" in text
    assert page.read_text().count("data:image/png;base64,") == len(NAMES)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(chromium() is None, reason="no Chromium here (./pxq test installs it where apt can)")
def test_report_page_loads_in_headless_chromium_with_every_figure(tmp_path):
    folder, state = folder_from_stored(tmp_path)
    _, page = reproduce.write_report(folder, NAMES, state)
    dom = loaded_dom(page, tmp_path)
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert f'data-figures="{len(NAMES)}"' in body and f'data-loaded="{len(NAMES)}"' in body, body
    assert all(f'id="{name}"' in dom for name in NAMES)


def loaded_dom(page: Path, tmp_path: Path) -> str:
    """The page's DOM after its load event, as headless Chromium renders it from the file alone."""
    out = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'chromium'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_reproduce_refuses_unknown_studies_and_a_folder_of_the_other_mode(tmp_path):
    with pytest.raises(InputError, match="unknown study 'nope'"):
        reproduce.select("channels,nope")
    with pytest.raises(InputError, match="--only is empty"):
        reproduce.select(",")
    folder, _ = folder_from_stored(tmp_path)
    with pytest.raises(InputError, match="quick report: use --quick"):
        reproduce.load_progress(folder, "full")
    assert set(reproduce.load_progress(folder, "quick")["done"]) == set(NAMES)
    (folder / reproduce.PROGRESS).write_text("{half")
    with pytest.raises(reproduce.RecordError, match="delete it to start"):
        reproduce.load_progress(folder, "quick")
