"""The published studies: the registry, the verdict rules on hand-made and stored figures, the
study records (schema), and pxq reproduce's report (markdown, and the HTML page loaded in
headless Chromium with every figure present)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pxq.analysis.verdicts import findings
from pxq.analysis.verdicts.allocation import byte_findings
from pxq.core import records, schemas
from pxq.core.errors import InputError
from pxq.experiments import reproduce
from pxq.experiments import studykit as studies
from pxq.studies import channels, msgshare, sharing, stride, tiling

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
    "rankpairs",
]


def stored(name: str) -> dict:
    return json.loads((STUDIES / f"{name}.jsonl").read_text())


def test_every_study_is_registered_with_its_published_section():
    assert [m.name for m in studies.registry()] == NAMES
    for mod in studies.registry():
        assert mod.section in findings.published(), mod.name
        assert findings.source(mod.section) and mod.minutes > 0
        assert set(mod.defaults(True)) == set(mod.defaults(False)), mod.name
    with pytest.raises(InputError, match="unknown study 'nas'.*channels"):
        studies.get("nas")


@pytest.mark.parametrize("name", NAMES)
def test_stored_study_records_are_valid_and_carry_verdicts(name):
    rec = stored(name)
    assert [p.message for p in schemas.problems(rec, name)] == [], name
    assert rec["findings"]
    for f in rec["findings"]:
        allowed = findings.CHECK_VERDICTS if f["kind"] == "check" else findings.PART_VERDICTS
        assert f["verdict"] in allowed, f
        if f["verdict"] not in ("reproduced", "passed"):
            assert f["why"], f"{name}: a verdict other than reproduced says why: {f}"
    mod = studies.get(name)
    measured = {f["ref"] for f in rec["findings"] if f["kind"] == "part"}
    wanted = {f"{e.ref}/{p['id']}" for e in findings.distinct(set(mod.sections)) for p in e.parts}
    assert measured <= wanted, f"{name}: parts outside its sections: {measured - wanted}"


def test_effect_is_inconclusive_within_the_noise_never_a_failure():
    assert findings.effect(1.30, 0.10, True, 0.05) == "reproduced"
    assert findings.effect(1.02, 0.10, True, 0.05) == "inconclusive"
    assert findings.effect(0.80, 0.10, True, 0.05) == "not reproduced"
    assert findings.effect(0.40, 0.10, False, 0.35) == "reproduced"  # a 60% cut against a 70% claim
    assert findings.effect(0.80, 0.10, False, 0.35) == "not reproduced"
    with pytest.raises(ValueError):
        findings.Finding("f", "p", "h", "maybe", "allocation/cg/bytes")


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
    cmp, node, large = channels._findings(rows, findings.section("channels"), virtual=True)
    assert cmp.verdict == "cannot be tested here" and "one package" in cmp.why
    assert node.verdict == "cannot be tested here" and "loopback" in node.why and "10.0x" in node.here
    assert large.verdict == "cannot be tested here" and "same channel" in large.why
    node = channels._findings(rows, findings.section("channels"), virtual=False)[1]
    assert node.verdict == "reproduced"  # real nodes: 10x slower than intra-CMP
    rows[1]["small_us"] = 0.6  # only 1.2x slower: not far faster
    assert channels._findings(rows, findings.section("channels"), False)[1].verdict == "not reproduced"


def test_channels_on_a_cluster_of_this_machine_judge_only_what_its_link_emulates():
    """The link's bandwidth stands for a network's when shaped; its latency only where netem adds
    it: without, the latency part cannot be tested, and an unshaped link stands for nothing."""
    rows = [
        {"channel": "intra_cmp", "small_us": 0.5, "peak_MBps": 9000},
        {"channel": "inter_cmp", "small_us": 0.9, "peak_MBps": 1200},
        {"channel": "inter_node", "small_us": 6.0, "peak_MBps": 125},
    ]
    paper = findings.section("channels")
    gige = {"name": "c1", "link": {"name": "gige", "bytes_per_s": 125e6}, "emulated": ["one link per node"]}
    _, node, large = channels._findings(rows, paper, False, gige)
    assert node.verdict == "cannot be tested here" and "no netem" in node.why and "12.0x" in node.here
    assert large.verdict == "not reproduced" and "over the gige link" in large.here  # 1200 MB/s > the link's 125
    netem = dict(gige, emulated=["one link per node", "link latency (netem)"])
    assert channels._findings(rows, paper, False, netem)[1].verdict == "reproduced"
    unshaped = dict(gige, link={"name": "unshaped", "bytes_per_s": None})
    assert "unshaped" in channels._findings(rows, paper, False, unshaped)[2].why


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
    assert msgshare._app_finding("cg", got, paper)[0].verdict == "not reproduced"  # 45/45/10 in the paper
    close = {"messages": [44.0, 44.0, 12.0], "bytes": [35.0, 38.0, 27.0]}
    assert [f.verdict for f in msgshare._app_finding("cg", close, paper)] == ["reproduced", "reproduced"]
    assert msgshare._app_finding("bt", close, paper)[0].kind == "check"  # no BT finding in the catalogue
    pxq_is = {"messages": [8.9, 14.7, 76.3], "bytes": [6.7, 13.4, 79.9]}  # pxq-is, class B, 16 ranks
    verdicts = [(f.ref, f.verdict) for f in msgshare._app_finding("is", pxq_is, paper)]
    assert verdicts == [
        ("message_distribution/is/messages", "reproduced"),
        ("message_distribution/is/bytes", "reproduced"),
    ]
    at_s = msgshare._app_finding("is", pxq_is, paper, "S")  # the class is named, and the paper's beside it
    assert all("at class S (paper" in f.here and "class B)" in f.here and "paper's is B" in f.why for f in at_s)
    assert "paper's is" not in msgshare._app_finding("is", pxq_is, paper, "B")[1].why


def sized(ranks: int, sends: list[tuple[int, int, int]]) -> dict:
    """Each rank r sends COUNT messages of NBYTES to r XOR MASK (1: the chip's other core, 2: the
    node's other chip on model 4x2x2) or, for MASK 0, to the same core of the next node."""
    upper = [0] + [1 << (k - 1) for k in range(1, 50)]
    rows = []
    for r in range(ranks):
        for mask, count, nbytes in sends:
            dst = r ^ mask if mask else (r + 4) % ranks
            rows.append([r, dst, next(k for k, u in enumerate(upper) if nbytes <= u), count, count * nbytes])
    return {"ranks": ranks, "bins": {"upper_bytes": upper}, "p2p": rows, "collective_model": []}


def test_the_size_dimension_is_judged_on_namd_and_hpl_profiles_and_says_how_to_get_them():
    model = msgshare.msgdist.parse_model("4x2x2")

    def verdicts(got: list, on: msgshare.msgdist.Model = model) -> dict[str, str]:
        return {f.ref.rsplit("/", 1)[1]: f.verdict for f in msgshare._sizes(got, on)[0]}

    namd = sized(16, [(1, 1, 16 << 10), (2, 3, 16 << 10), (0, 6, 16 << 10)])  # 10 / 30 / 60 at 16 KB
    hpl = sized(16, [(1, 10, 1024), (0, 1, 1 << 20)])  # 10 small on the chip, 1 large off the node
    got = verdicts([("namd2", namd), ("xhpl", hpl)])
    judged = ("namd_range", "namd_channels", "hpl_range", "hpl_on_node")
    assert got == {**dict.fromkeys(judged, "reproduced"), "hpl_16x4": "cannot be tested here"}
    small = sized(16, [(1, 1, 1024), (2, 3, 1024), (0, 6, 1024)])  # NAMD's shares, but at 1 KB
    all_off = sized(16, [(0, 10, 1024), (0, 1, 1 << 20)])  # HPL's sizes, but every message off the node
    got = verdicts([("namd3", small), ("xhpl", all_off)])
    assert [got[p] for p in judged] == ["not reproduced"] * 2 + ["reproduced", "not reproduced"]
    # 64 ranks on 16 nodes: 15 / 42 / 43 in the paper; 1 / 2 / 2 messages per rank is 20 / 40 / 40
    wide = msgshare.msgdist.parse_model("16x2x2")
    hpl64 = sized(64, [(1, 1, 1024), (2, 2, 1024), (0, 2, 1024)])
    assert verdicts([("xhpl", hpl64)], wide)["hpl_16x4"] == "reproduced"
    assert verdicts([("xhpl", sized(64, [(0, 5, 1024)]))], wide)["hpl_16x4"] == "not reproduced"
    found, comparison = msgshare._sizes([("cg", namd)], model)  # no NAMD or HPL profile: how to get one
    assert {f.verdict for f in found} == {"cannot be tested here"} and len(found) == 5
    assert all("pxq study msgdist --profiles" in f.why for f in found)
    assert "at 64 ranks" in found[-1].why and "(model 16x2x2)" in found[-1].why
    assert comparison[0].quantity == "cg: % of messages per size range" and comparison[0].here == "0 / 0 / 100 / 0 / 0"
    off = msgshare._sizes([("namd2", sized(8, [(1, 1, 16 << 10)]))], model)[0]  # the paper's figure is at 16 ranks
    assert "the profile of namd2 has 8 ranks" in off[0].why and off[0].verdict == "cannot be tested here"


def test_allocation_verdicts_follow_the_papers_claims():
    def rows(block: int, cyclic: int) -> list[dict]:
        return [
            {"alloc": "block", "bytes": {"inter_node": block}, "count": {"inter_node": 1}},
            {"alloc": "cyclic", "bytes": {"inter_node": cyclic}, "count": {"inter_node": 1}},
        ]

    def verdicts(app: str, block: int, cyclic: int) -> dict[str, str]:
        return {f.ref.split("/", 1)[1]: f.verdict for f in byte_findings(app, rows(block, cyclic))}

    assert verdicts("cg", 10, 40) == {"cg/bytes": "reproduced", "cg/time": "cannot be tested here"}
    assert verdicts("cg", 30, 40)["cg/bytes"] == "not reproduced"
    mg = verdicts("mg", 30, 20)
    assert mg["mg/bytes"] == "reproduced" and mg["mg/time"] == mg["mg/network_time"] == "cannot be tested here"
    assert verdicts("ft", 100, 104)["ft_is/bytes"] == "reproduced"
    assert verdicts("ft", 100, 104)["ft_is/network_time"] == "cannot be tested here"
    assert byte_findings("ring", rows(1, 2)) == []


def test_stride_ratio_is_read_on_the_largest_array():
    rec = {
        "points": [
            {"stride": 256, "bytes": 1 << 20, "contention": 1.1, "ns": 1.0},
            {"stride": 256, "bytes": 1 << 26, "contention": 2.1, "ns": 3.0},
            {"stride": 64, "bytes": 1 << 26, "contention": 1.4, "ns": 2.0},
        ]
    }
    assert stride.by_stride(rec, 3) == [
        {"stride": 64, "bytes": 1 << 26, "ratio": 1.4, "ns": 2.0, "flags": []},
        {"stride": 256, "bytes": 1 << 26, "ratio": 2.1, "ns": 3.0, "flags": []},
    ]
    assert stride.by_stride(rec, 1)[0]["flags"]  # one run: no spread to read a ratio against
    assert stride.by_stride(rec, 3, copies=2)[1]["flags"] == []  # 2.1x with 2 copies: what a shared bus costs
    rec["points"][1]["contention"] = 6.2  # 6.2x with 2 copies: more than sharing a bus can cost
    (flag,) = stride.by_stride(rec, 3, copies=2)[1]["flags"]
    assert "6.20x with 2 copies" in flag


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
            "verdicts": [f["verdict"] for f in stored(name)["findings"] if f["kind"] == "part"],
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
    assert text.count("| part | claim | here | verdict | rests on | why |") == len(NAMES)
    assert "| finding | source | parts | verdict | why |" in text and "Chai, Gao and Panda" in text
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
    with pytest.raises(InputError, match="not JSON.*delete it to start"):
        reproduce.load_progress(folder, "quick")


def test_the_reports_headline_counts_each_distinct_finding_once(tmp_path):
    folder, state = folder_from_stored(tmp_path)
    items = reproduce._study_records(folder, NAMES, state)
    assessed, checks = reproduce.assessment(items)
    assert [a["ref"] for a in assessed] == [e.ref for e in findings.distinct()]  # every one, once
    for a in assessed:
        verdicts = [p["verdict"] for p in a["parts"]]
        if a["verdict"] == "reproduced":
            assert all(v == "reproduced" for v in verdicts), a["ref"]
        if "not tested" in verdicts:
            pytest.fail(f"{a['ref']}: a part no study of the full set measured")
    assert checks and all(c["kind"] == "check" for c in checks)
    md, page = reproduce.write_report(folder, NAMES, state)
    counts = findings.tally(assessed)
    head = f"{len(findings.distinct())} distinct published findings: " + ", ".join(
        f"{n} {v}" for v, n in counts.items()
    )
    assert head in md.read_text() and head in page.read_text()
    assert "self-checks (never counted as reproduced)" in md.read_text()
    assert page.read_text().count("<details>") == len(findings.distinct())


def test_hostile_record_fields_are_escaped_and_progress_names_no_path(tmp_path):
    folder, state = folder_from_stored(tmp_path)
    path = folder / "records" / "channels.jsonl"
    rec = json.loads(path.read_text())
    rec["title"] = "<script>alert(1)</script> [x](javascript:alert(1)) \x1b[31mred"
    rec["findings"][0]["here"] = "a | b <img src=x onerror=alert(1)>"
    path.write_text(json.dumps(rec) + "\n")
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    state["done"]["channels"]["figure"] = str(secret)
    state["done"]["msgdist"]["record"] = str(tmp_path / "elsewhere.jsonl")
    (tmp_path / "elsewhere.jsonl").write_text(path.read_text())
    md, page = reproduce.write_report(folder, NAMES, state)
    text, html_text = md.read_text(), page.read_text()
    assert "<script>alert" not in html_text and html_text.count("<script>") == 1  # the page's own only
    assert "<img src=x" not in html_text
    assert "\x1b" not in text and "\x1b" not in html_text
    assert "<script>" not in text and "\\[x\\]" in text and "a \\| b \\<img" in text
    assert base64_of(secret) not in html_text  # the figure comes from figures/NAME.png only
    assert "msgdist: Message distribution" in text  # read from records/msgdist.jsonl by name


def test_a_record_outside_its_schema_is_refused_at_the_door(tmp_path):
    """A verdict no study writes (one that would break out of an HTML attribute) never reaches
    the report: the record is refused by its schema, with its line and the reason."""
    folder, state = folder_from_stored(tmp_path)
    path = folder / "records" / "channels.jsonl"
    rec = json.loads(path.read_text())
    rec["findings"][0]["verdict"] = 'reproduced" onmouseover="alert(1)'
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(records.RecordError, match=r"channels.jsonl:1: not a valid study record: findings/0/verdict"):
        reproduce.write_report(folder, NAMES, state)


def base64_of(path: Path) -> str:
    import base64

    return base64.b64encode(path.read_bytes()).decode()


def test_a_resumed_reproduce_runs_again_the_studies_that_did_not_finish(tmp_path, monkeypatch):
    """progress.json keeps a study that errored or whose runs failed; a resume runs it again
    and keeps the finished ones."""
    from rich.console import Console

    from pxq import cli

    folder, state = folder_from_stored(tmp_path)
    state["done"]["tiling"] = {"code": 3, "seconds": 1.0, "verdicts": [], "record": "records/tiling.jsonl"}
    state["done"]["channels"] = {"code": 2, "error": "the probe was refused", "seconds": 1.0}
    reproduce.save_progress(folder, state)
    ran = []
    monkeypatch.setattr(
        reproduce, "run_one", lambda mod, *a, **k: ran.append(mod.name) or {"code": 0, "verdicts": [], "seconds": 0.0}
    )
    monkeypatch.setattr(reproduce, "write_report", lambda *a, **k: (folder / "report.md", folder / "report.html"))
    args = cli.parser().parse_args(["reproduce", "--only", "channels,tiling,stride", "--out", str(folder)])
    args.budget = 0.0
    console = Console(record=True, width=200)
    assert reproduce.reproduce(console, folder, True, args.only, args) == 0
    assert sorted(ran) == ["channels", "tiling"]  # stride had finished
    assert "retrying 2 study(ies) that did not finish before: channels, tiling" in console.export_text()
    assert reproduce.finished({"code": 0}) and not reproduce.finished({"code": 1}) and not reproduce.finished(None)


def test_reproduce_with_a_network_runs_only_the_network_studies_on_a_cluster(tmp_path, monkeypatch):
    """--network brings a cluster up around each study with parts across a network, alone, and
    the progress entry and summary name it; the other studies run as before."""
    import contextlib

    from rich.console import Console

    from pxq import cli

    folder = tmp_path / "r"
    inside: list[str] = []
    where: dict[str, bool] = {}

    @contextlib.contextmanager
    def around(profile, nodes, cores, per_node, say):
        inside.append("up")
        yield type("C", (), {"name": "net1", "nodes": nodes})()
        inside.append("down")

    def run_one(mod, *a, **k):
        where[mod.name] = bool(inside) and inside[-1] == "up"
        return {"code": 0, "verdicts": [], "seconds": 0.0}

    monkeypatch.setattr(reproduce.netns, "around", around)
    monkeypatch.setattr(reproduce, "run_one", run_one)
    monkeypatch.setattr(reproduce, "write_report", lambda *a, **k: (folder / "report.md", folder / "report.html"))
    args = cli.parser().parse_args(["reproduce", "--only", "stride,allocation", "--out", str(folder)])
    args.budget, args.cluster_link = 0.0, "gige"
    console = Console(record=True, width=200)
    assert reproduce.reproduce(console, folder, True, args.only, args) == 0
    assert where == {"allocation": True, "stride": False} and inside == ["up", "down"]
    state = reproduce.load_progress(folder, "quick")
    assert state["done"]["allocation"]["cluster"] == {"name": "net1", "nodes": 4, "link": "gige"}
    assert "on cluster 'net1' (4 nodes, link gige)" in reproduce.summary(state["done"]["allocation"])
    assert "cluster" not in state["done"]["stride"]


def test_reproduce_refuses_an_unknown_link_profile_before_any_study(tmp_path, capsys):
    from pxq import cli

    assert cli.main(["reproduce", "--network", "56k", "--out", str(tmp_path / "r")]) == 2
    assert "56k" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_each_part_says_what_its_verdict_rests_on():
    paired = {"evidence": {"repeats": 4, "paired": {"rounds": 4, "settled": "slower"}}}
    assert reproduce.rests_on(paired) == "4 paired rounds, slower"
    open_pair = {"evidence": {"repeats": 9, "paired": {"rounds": 9, "settled": "unsettled"}}}
    assert reproduce.rests_on(open_pair) == "9 paired rounds, not settled"
    assert reproduce.rests_on({"evidence": {"repeats": 5, "spread": 0.12}}) == "5 runs each, spread 12%"
    assert reproduce.rests_on({"evidence": {}}) == reproduce.rests_on({}) == "-"


def test_reproduce_says_up_front_what_it_knows_cannot_be_tested_and_runs_nothing_for_it(tmp_path, monkeypatch):
    """Scalability on fewer than 4 cores: `pxq reproduce` names it before any study runs, the
    study runs no configuration, and its parts are catalogued with the reason; `pxq study
    scalability` (verdicts_only False) still measures its table."""
    from types import SimpleNamespace

    from rich.console import Console

    from pxq.studies import scalability

    opts = dict(scalability.defaults(True), max_ranks=2)
    assert "4 or more ranks (2 cores here" in scalability.untestable(opts)
    assert scalability.untestable(dict(opts, max_ranks=4)) is None

    def no_runs(*a, **kw):
        raise AssertionError("a study known untestable must run nothing under pxq reproduce")

    monkeypatch.setattr(scalability, "measure", no_runs)
    console = Console(file=open(tmp_path / "log", "w"), width=200)
    ctx = studies.Context(console, tmp_path / "s.jsonl", None, True, verdicts_only=True)
    out = scalability.run(ctx, opts)
    assert out.recs == [] and out.code == 0 and out.found
    assert {f.verdict for f in out.found} == {"cannot be tested here"}
    assert any("not measured" in n for n in out.notes)
    measuring = studies.Context(console, tmp_path / "s.jsonl", None, True)
    measuring.spec = lambda app, **kw: SimpleNamespace(app=app, **kw)
    with pytest.raises(AssertionError, match="must run nothing"):
        scalability.run(measuring, opts)


def test_the_report_flags_one_channel_measured_far_apart_by_two_studies():
    """Rank pairs 13x below the ping-pong probe on the same channel is not a finding but a figure
    one of them got wrong: the report's cross-checks flag it; figures that agree are said to."""
    from pxq.studies import rankpairs

    recs = [
        json.loads(ln)
        for ln in (Path(__file__).parent / "data" / "figures" / "rankpairs.jsonl").read_text().splitlines()
        if ln.strip()
    ]
    medians = rankpairs.channel_medians(recs)
    assert set(medians) == {"intra_cmp", "inter_node"} and all(v > 0 for v in medians.values())
    channels = {
        "rows": [
            {"channel": "intra_cmp", "bandwidth_MBps": [[1 << 20, 9000.0], [4 << 20, 12000.0]]},
            {"channel": "inter_node", "bandwidth_MBps": [[1 << 20, 120.0], [4 << 20, 118.0]]},
        ]
    }
    pairs = {"data": {"channels_MBps": {"intra_cmp": 12000.0 / 13, "inter_node": 110.0}}}
    items = [("channels", channels, {}), ("rankpairs", pairs, {})]
    checks = {c["what"]: c for c in reproduce.cross_checks(items)}
    assert checks["intra-cmp bandwidth"]["implausible"] and checks["intra-cmp bandwidth"]["pingpong_bytes"] == 4 << 20
    assert not checks["inter-node bandwidth"]["implausible"]
    text = reproduce.markdown([], {}, "today", "quick", reproduce.cross_checks(items))
    assert "## Cross-checks: one quantity from two studies" in text
    assert "implausible (!): more than 3x apart" in text and "agree within 3x" in text
    assert reproduce.cross_checks([("channels", channels, {})]) == []  # one study alone: nothing to set beside
    # Records pxq did not write (hand-edited, hostile): left out of the cross-check, no traceback.
    for rows in ("x", [{"channel": "intra_cmp", "bandwidth_MBps": [[1]]}], [{"channel": 1, "bandwidth_MBps": "x"}],
                 [{"channel": "intra_cmp", "bandwidth_MBps": [["a", 2], [4, 0]]}]):  # fmt: skip
        assert reproduce.cross_checks([("channels", {"rows": rows}, {}), ("rankpairs", pairs, {})]) == []
    for data in ([], {"channels_MBps": "x"}, {"channels_MBps": {"intra_cmp": "fast", "inter_node": -5}}):
        assert reproduce.cross_checks([("channels", channels, {}), ("rankpairs", {"data": data}, {})]) == []


def test_network_sharing_judges_each_app_on_its_paired_rounds():
    """On real nodes, 4x1 against 2x2 per app on the rounds of one interleaved sweep: slower by
    10% in every round settles "reproduced"; an app whose two layouts tie makes the part "not
    reproduced" and names it; times without rounds fall back on medians and spreads."""
    import random

    rng = random.Random(3)

    def row(app, lay, scale, rounds=True):
        drift = [1 + 0.2 * rng.random() for _ in range(6)]  # the machine's state, shared by a round
        times = [scale * d * (1 + 0.005 * rng.random()) for d in drift]
        return {
            "app": app,
            "layout": lay,
            "runs": 6,
            "median": sorted(times)[3],
            "comm_median": 0.1 * scale,
            "spread": 0.2,
            "times": times,
            "comm": [0.1 * t for t in times],
            "rounds": [["s1", k, f"{app}-{lay}-{k}"] for k in range(6)] if rounds else [],
        }

    rng.seed(3)
    a1, a2 = row("cg", "4x1", 1.0), row("cg", "2x2", 1.1)
    a2["times"] = [t * 1.1 for t in a1["times"]]
    a2["comm"] = [c * 1.1 for c in a1["comm"]]
    parts = sharing._findings([a1, a2], False, 4)
    time_part = next(p for p in parts if p.ref.endswith("more_per_node/time"))
    assert time_part.verdict == "reproduced" and "paired over" in time_part.why and "cg 1.10x" in time_part.here
    tie = dict(a1, app="ft", rounds=[["s1", k, f"ft-4x1-{k}"] for k in range(6)])
    tie2 = dict(tie, layout="2x2", rounds=[["s1", k, f"ft-2x2-{k}"] for k in range(6)])
    parts = sharing._findings([a1, a2, tie, tie2], False, 4)
    time_part = next(p for p in parts if p.ref.endswith("more_per_node/time"))
    assert time_part.verdict == "not reproduced" and "ft" in time_part.why
    loose = [dict(a1, rounds=[]), dict(a2, rounds=[])]
    assert next(p for p in sharing._findings(loose, False, 4) if p.ref.endswith("/time")).verdict in (
        "reproduced",
        "inconclusive",
    )


def test_a_studys_line_names_every_verdict_its_self_checks_got():
    entry = {"code": 0, "seconds": 3.0, "verdicts": ["reproduced"], "checks": ["inconclusive", "inconclusive"]}
    line = reproduce.summary(entry)
    assert "self-checks: 2 inconclusive" in line and "passed" not in line  # not "0 of 2 passed"
    entry["checks"] = ["passed", "failed", "inconclusive"]
    assert "self-checks: 1 passed, 1 failed, 1 inconclusive" in reproduce.summary(entry)
