"""The teaching labs without MPI: the registry, each lab's folder (worksheet, starter with LAB
markers, solution of the same files), `start` and its refusals, and bad input to `check`.
The labs are built and checked end to end by CTest's labs.check."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from pxq.cli import main
from pxq.core.errors import InputError
from pxq.labs import msgshare
from pxq.teaching import copies, prediction
from pxq.teaching import harness as labs

TEACHING = labs.ROOT / "docs" / "teaching"


def quiet() -> Console:
    return Console(file=io.StringIO(), width=200)


def test_six_labs_in_order_each_with_a_worksheet_starter_and_solution():
    mods = labs.registry()
    assert [m.number for m in mods] == [1, 2, 3, 4, 5, 6]
    for mod in mods:
        folder = labs.folder(mod)
        readme = (folder / "README.md").read_text()
        for part in ("**Goal.**", "**Time:**", "## Steps", "## Questions"):
            assert part in readme, (mod.folder, part)
        for answer in ("Teacher's note", "Answers.", "(1) "):  # the answers live in the teacher's guide
            assert answer not in readme, (mod.folder, answer)
        guide = (TEACHING / f"{mod.folder}.md").read_text()
        for part in ("## What the checker says for the usual mistakes", "(tested)", "Answers.", "**Timing:**"):
            assert part in guide, (mod.folder, part)
        assert f"#lab-{mod.number}" in guide and f"## Lab {mod.number}" in (TEACHING / "notes.md").read_text()
        assert (folder / "CMakeLists.txt").is_file()
        # A prediction is the student's, made for their machine: the solution holds none.
        files = [n for n in labs.student_files(mod) if n != prediction.FILE]
        assert files and files == sorted(p.name for p in (folder / "solution").iterdir())
        assert (prediction.FILE in labs.student_files(mod)) == (mod.predict is not None)
        for name in files:
            assert "// LAB" in (folder / "begin" / name).read_text(), (mod.folder, name)
            assert "// LAB" not in (folder / "solution" / name).read_text(), (mod.folder, name)
        assert 0 < mod.minutes <= 30
    index = (labs.LABS / "README.md").read_text()
    assert all(f"({m.folder}/README.md)" in index for m in mods)


@pytest.mark.parametrize("key", ["4", "04", "04-tile-ring", "tile-ring", " 4 "])
def test_a_lab_is_found_by_number_or_name(key):
    assert labs.get(key).folder == "04-tile-ring"


def test_unknown_lab_names_the_six():
    with pytest.raises(InputError, match="unknown lab '9'.*1 \\(01-channels\\)"):
        labs.get("9")


def test_start_copies_the_starter_and_never_overwrites_work(tmp_path):
    dest = tmp_path / "mine"
    assert labs.start(labs.get("4"), dest, quiet()) == 0
    assert (dest / "ring_compute.cpp").read_text() == (
        labs.folder(labs.get("4")) / "begin/ring_compute.cpp"
    ).read_text()
    assert json.loads((dest / labs.MARKER).read_text()) == {"lab": "04-tile-ring"}
    with pytest.raises(InputError, match="not empty.*lab check 4 --dir"):
        labs.start(labs.get("4"), dest, quiet())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot make"):
        labs.start(labs.get("4"), blocker / "sub", quiet())
    assert not (blocker / "sub").exists()


def test_check_refuses_a_missing_copy_another_labs_copy_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="no such folder.*lab start 4"):
        labs.source_of(labs.get("4"), "copy", tmp_path / "none")
    dest = tmp_path / "c"
    labs.start(labs.get("5"), dest, quiet())
    with pytest.raises(InputError, match="a copy of lab 05-hybrid, not of 04-tile-ring"):
        labs.source_of(labs.get("4"), "copy", dest)
    (dest / labs.MARKER).unlink()
    with pytest.raises(InputError, match="lacks ring_compute.cpp"):
        labs.source_of(labs.get("4"), "copy", dest)
    with pytest.raises(InputError, match="--repeat 0"):
        labs.check(labs.get("4"), "solution", None, 0, quiet())


def test_the_default_copy_is_found_where_the_student_stands_and_named_absolutely(tmp_path, monkeypatch):
    """`./pxq lab start 4 && ./pxq lab check 4`: the copy is labs-work/04-tile-ring under the
    current folder, and the build (in a scratch folder, sandboxed) gets its absolute path."""
    monkeypatch.chdir(tmp_path)
    labs.start(labs.get("4"), labs.default_copy(labs.get("4")), quiet())
    which, source = labs.source_of(labs.get("4"), "copy", None)
    assert which == "copy" and source.is_absolute()
    assert source == (tmp_path / "labs-work" / "04-tile-ring").resolve()


def test_cli_bad_input_exits_2_without_a_traceback(capsys, tmp_path):
    assert main(["lab", "check", "7"]) == 2
    assert main(["lab", "start", "x", "--dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err
    assert "unknown lab '7'" in err.out + err.err
    assert main(["lab", "list"]) == 0


def test_on_node_share_of_a_stencil_by_decomposition():
    row_major = [[i // 4, i % 4] for i in range(16)]
    blocks = [[(i // 8) * 2 + (i % 4) // 2, ((i // 4) % 2) * 2 + i % 2] for i in range(16)]
    assert sorted(map(tuple, blocks)) == sorted(map(tuple, row_major))
    assert msgshare.neighbour_shares(row_major, 4) == pytest.approx(0.5)
    assert msgshare.neighbour_shares(blocks, 4) == pytest.approx(2 / 3)
    assert msgshare.neighbour_shares(row_major, 8) == pytest.approx(40 / 48)


def test_start_copies_no_answers(tmp_path):
    for mod in labs.registry():
        dest = tmp_path / mod.folder
        assert labs.start(mod, dest, quiet()) == 0
        names = sorted(p.name for p in dest.iterdir())
        assert names == sorted([*labs.student_files(mod), labs.MARKER]), names
        for path in dest.iterdir():
            text = path.read_text()
            assert "Answers" not in text and "Teacher" not in text, (mod.folder, path.name)


def test_the_lab2_answer_matches_what_cyclic_allocation_gives():
    """Ranks 4 apart share a node under cyclic: row-major keeps half its halo messages on a
    node, 2 x 2 blocks none (what pxq's check prints)."""
    rows = [[r // 4, r % 4] for r in range(16)]
    blocks = [[(r // 8) * 2 + (r % 4) // 2, ((r // 4) % 2) * 2 + r % 2] for r in range(16)]
    assert msgshare.neighbour_shares(rows, 4, cyclic=True) == pytest.approx(0.5)
    assert msgshare.neighbour_shares(blocks, 4, cyclic=True) == 0.0
    guide = (TEACHING / "02-msgdist.md").read_text()
    assert "24 of 48 messages (50%) stay on a node" in guide and "none stays (0%)" in guide
    assert "every stencil message leaves the node" not in (labs.folder(labs.get("2")) / "README.md").read_text()


def test_a_students_copy_is_confined_and_what_the_sandbox_allows(tmp_path, monkeypatch):
    from pxq.teaching import copies, sandbox

    box = sandbox.Sandbox([tmp_path / "copy"], readable=[labs.LABS / "common"], hidden=[labs.LABS / "common" / "x"])
    argv = box.wrap(["mpirun", "-np", "2", "./lab"], tmp_path / "scratch", [tmp_path / "prof"])
    bwrap = argv.index("bwrap")
    assert argv[1] == str(sandbox.ENTER) and "--" in argv[:bwrap]  # limits and cgroups first, then bwrap
    assert {"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session", "--die-with-parent"} <= set(argv)
    assert argv[argv.index("--cap-drop") + 1] == "ALL" and ("--ro-bind", "/", "/") not in zip(argv, argv[1:], argv[2:])
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert binds == [str((tmp_path / p).resolve()) for p in ("copy", "prof", "scratch")]
    reads = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert str((labs.LABS / "common").resolve()) in reads and "/etc" in reads
    assert "--unshare-net" in argv and argv[-4:] == ["mpirun", "-np", "2", "./lab"]
    reads = labs.sandbox_reads(labs.get("4"))
    assert labs.folder(labs.get("4")) in reads and labs.ROOT not in reads and labs.ROOT / "labs" not in reads
    assert argv[argv.index("TMPDIR") + 1] == str((tmp_path / "scratch").resolve())
    assert labs.confinement("solution", tmp_path, None, False) is None  # pxq's own code
    assert labs.confinement("copy", tmp_path, None, True) is None  # --unconfined, said out loud
    with pytest.raises(InputError, match="cannot be: check it on this machine, or add --unconfined"):
        labs.confinement("copy", tmp_path, "hosts", False)
    monkeypatch.setattr(sandbox, "_probe", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(InputError, match="apt-get install bubblewrap"):
        labs.confinement("copy", tmp_path, None, False)
    (tmp_path / "ring_compute.cpp").write_text("")
    (tmp_path / ".pxq-lab.json").write_text("{}")
    (tmp_path / "build").mkdir()
    copies.check_copy(tmp_path, ["ring_compute.cpp"])  # the student's file, the marker, its build
    for shadow in ("json.hpp", "nlohmann"):
        (tmp_path / shadow).mkdir() if "." not in shadow else (tmp_path / shadow).write_text("")
        with pytest.raises(InputError, match=f"{shadow}: a copy holds only the files you edit"):
            copies.check_copy(tmp_path, ["ring_compute.cpp"])
        if "." in shadow:
            (tmp_path / shadow).unlink()


def test_on_a_cluster_of_this_machine_lab_1_crosses_its_link_and_a_copy_must_be_seen_by_its_nodes(
    tmp_path, monkeypatch
):
    """While a cluster is up, lab 1's other node is one of it (named with its link); a student's
    copy cannot be confined there (the runs enter the nodes' namespaces), and a copy under /tmp,
    which each node has of its own, is refused with the fix."""
    from pxq.cluster import emulator as cluster
    from pxq.cluster import nodes
    from pxq.labs import channels
    from pxq.launch import netns

    fake = cluster.Cluster("lab", 2, {"name": "gige", "bytes_per_s": 125e6}, 9000, [1, 2], 2, 0.1, False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(netns, "current", lambda: fake)
    ctx = labs.Context(
        console=quiet(),
        program=tmp_path / "lab",
        repeat=1,
        cores=2,
        machine={"caches": {"l2": {"shared_by": 1}}, "packages": 1},
    )
    names = [name for name, _ in channels.configs(ctx)]
    assert names[-1] == "another node (cluster lab: gige link)"
    assert "latency is this machine's TCP's" in channels._caveat(names[-1])
    with pytest.raises(InputError, match="add --unconfined to run it there"):
        labs.confinement("copy", tmp_path, None, False)
    monkeypatch.setattr(nodes, "shared_under_tmp", lambda: ["pxq-checkout"])
    with pytest.raises(InputError, match="under /tmp, which each node of cluster 'lab' has of its own"):
        netns.check_visible(Path("/tmp/my-copy"), "work outside /tmp")
    netns.check_visible(Path("/tmp/pxq-checkout/labs-work/01"), "work outside /tmp")  # bound into the nodes
    netns.check_visible(Path("/home/student/01"), "work outside /tmp")
    monkeypatch.setattr(netns, "current", lambda: None)
    assert channels.configs(ctx)[-1][0] == "another node (virtual nodes: TCP)"


def _context(budget: float) -> labs.Context:
    return labs.Context(Console(file=io.StringIO()), Path("/nonexistent"), 3, 2, {}, budget=budget)


def test_a_timed_effect_runs_paired_rounds_until_settled_within_the_teachers_budget(monkeypatch):
    """--repeat 3 rounds, then (with --budget) one more round at a time while the paired
    comparison of the effect is unsettled: a drifting machine whose effect is a steady 1.5x
    settles after a few rounds; without a budget only the fixed rounds run."""
    drift = [1.0, 2.2, 1.3, 3.1, 1.1, 2.7, 1.6, 2.0]
    jitter = [1.0, 1.02, 0.99, 1.01, 0.98, 1.0, 1.02, 0.99]
    done = {"base": 0, "mine": 0}
    calls: list[str] = []

    def run(self, layout, args=None, **kw):  # round k's drift falls on both runs of round k
        calls.append(layout)
        k = done[layout] % len(drift)
        done[layout] += 1
        return {"seconds": drift[k] * (1.0 if layout == "base" else jitter[k] / 1.5)}

    monkeypatch.setattr(labs.Context, "run", run)
    configs = [("base", {"layout": "base"}), ("mine", {"layout": "mine"})]
    ctx = _context(60.0)
    out = ctx.interleaved(configs, settle_on=labs.pairs_of("base", "mine", "seconds"))
    n = len(out["base"])
    assert 4 <= n <= 8 and len(out["mine"]) == n  # settled soon after the fixed rounds
    pairs = [(a["seconds"], b["seconds"]) for a, b in zip(out["base"], out["mine"])]
    e = labs.effect_of("mine is 1.5x faster", 1.5, 2.0, 0.15, "why", repeats=3, pairs=pairs)
    assert e.verdict == "reproduced" and e.repeats == n and "x faster [" in e.paired
    calls.clear()
    done.update(base=0, mine=0)
    fixed = _context(0.0).interleaved(configs, settle_on=labs.pairs_of("base", "mine", "seconds"))
    assert len(fixed["base"]) == 3 and len(calls) == 6  # no budget: the fixed rounds only


def test_a_paired_effect_unsettled_or_settled_below_the_threshold_says_so():
    noisy = [(1.0, 0.5), (1.0, 1.6), (1.0, 0.6), (1.0, 1.3)]
    e = labs.effect_of("mine is faster", 1.1, 0.8, 0.15, "why", repeats=4, pairs=noisy)
    assert e.verdict == "inconclusive" and "--budget" in e.settle and "unsettled after 4 blocks" in e.paired
    small = [(1.0 * d, 0.95 * d) for d in (1.0, 1.5, 1.2, 2.0, 1.1)]  # settled faster, by 5%: under 15%
    e = labs.effect_of("mine is 1.05x faster", 1.05, 0.5, 0.15, "why", repeats=5, pairs=small)
    assert e.verdict == "not reproduced" and "faster" in e.paired
    few = labs.effect_of("mine", 1.5, 0.01, 0.15, "why", repeats=3, pairs=small[:3])
    assert few.verdict == "reproduced" and few.paired == ""  # 3 rounds: the repeats' spread decides, as before


def test_lab4_grades_the_span_each_update_touched_against_the_tile_asked():
    """From what the harness saw update() touch: right tiles pass (the last shorter one too, and a
    tile updated in two calls a pass), tiles larger or much smaller than asked and one tile size of
    the loop's own are not correct, whatever the numbers."""
    from pxq.labs import tiling

    block = 32 << 20

    def run(tile: int, span: int) -> dict:
        return {"tile_bytes": tile, "block_bytes": block, "largest_span_bytes": span}

    tiles = [32 << 10, 48 << 10, 256 << 10, 3 << 20, 8 << 20]
    tiling.follows_the_tile({str(t): run(t, t) for t in tiles})  # the solution: no failure
    with pytest.raises(labs.LabFailure, match="8x the tile asked for") as big:
        tiling.follows_the_tile({str(t): run(t, 8 * t) for t in tiles})
    assert big.value.code == 1
    swapped = {str(t): {**run(t, t), "largest_reuse_bytes": block} for t in tiles}  # pass by pass over all tiles
    with pytest.raises(labs.LabFailure, match="between two passes over the same data"):
        tiling.follows_the_tile(swapped)
    tiling.follows_the_tile({str(t): {**run(t, t), "largest_reuse_bytes": t} for t in tiles})
    with pytest.raises(labs.LabFailure, match="whatever tile was asked for"):
        tiling.follows_the_tile({str(t): run(t, 16 << 10) for t in tiles})  # 16K, hard-coded: never above a tile
    eighth = {str(t): {**run(t, t // 8), "largest_reuse_bytes": t // 8} for t in tiles}  # tile_elems / 8
    with pytest.raises(labs.LabFailure, match="after only 4K, 1/8 of the tile asked for"):
        tiling.follows_the_tile(eighth)
    halves = {str(t): {**run(t, t // 2), "largest_reuse_bytes": t} for t in tiles}  # each tile in two calls a pass
    tiling.follows_the_tile(halves)


def test_a_starter_like_copy_never_shows_the_effect():
    """Its numbers stay; every effect reads "not judged", and a copy that did the lesson keeps its verdicts."""
    shown = labs.Effect("yours is 1.17x faster", 1.17, 0.05, "reproduced")
    counted = labs.Effect("0.71x the memory", 0.71, 0.0, "reproduced", counted=True)
    out = labs.Outcome(None, "each update() covers the whole block", True, shown, more=[counted])
    judged = labs.unjudged_if_starter(out)
    assert [e.verdict for e in judged.effects] == ["not judged", "not judged"]
    assert "whole block" in judged.effect.settle and labs.EFFECT["not judged"].startswith("not judged")
    done = labs.Outcome(None, "tiled", False, shown)
    assert labs.unjudged_if_starter(done).effect.verdict == "reproduced"


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5, 6])
def test_each_lab_has_a_rubric_row_per_question_and_slides_for_the_teacher(number, tmp_path):
    """`pxq lab teach N`: the guide (with one rubric row for each question of the worksheet) and a
    slide deck, as self-contained HTML pages, in the teacher's folder."""
    import re

    from pxq.teaching import teach

    mod = labs.get(str(number))
    guide, deck = teach.sources(mod)
    questions = re.findall(r"^(\d+)\. ", (labs.folder(mod) / "README.md").read_text().split("## Questions")[1], re.M)
    rubric = guide.read_text().split("## Rubric for the written answers")[1].split("\n## ")[0]
    rows = re.findall(r"^\| (\d+)\. ", rubric, re.M)
    assert rows == questions, (rows, questions)
    assert main(["lab", "teach", str(number), "--out", str(tmp_path / "t")]) == 0
    page = (tmp_path / "t" / "slides.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<section class="slide">') == len(
        teach.slides(deck.read_text())
    )
    assert page.count('<section class="slide">') >= 4
    assert "<table>" in (tmp_path / "t" / "guide.html").read_text()


def test_lab_4_says_how_much_of_a_tile_each_update_covered():
    from pxq.labs.tiling import _of_tile

    assert _of_tile(256 << 10, 256 << 10) == "one tile"
    assert _of_tile(128 << 10, 256 << 10) == "0.5 of a 256K tile"  # never "(one tile)" for half of one
    assert _of_tile(4096, 0) == "no tile asked for"


def test_a_copys_build_folder_configured_for_another_lab_folder_or_generator_is_remade(tmp_path):
    """A copy built by one pxq checkout and checked by another: CMake refuses the cache ("does not
    match the source used to generate cache"), which is pxq's folder, not the student's code."""
    lab = tmp_path / "pxq" / "labs" / "04-tiling"
    lab.mkdir(parents=True)
    copy = tmp_path / "copy"
    (copy / "build").mkdir(parents=True)
    assert copies.stale_build(copy, lab, "Ninja") is None  # nothing configured yet
    cache = copy / "build" / "CMakeCache.txt"
    cache.write_text(f"# The CMake cache.\nCMAKE_GENERATOR:INTERNAL=Ninja\nCMAKE_HOME_DIRECTORY:INTERNAL={lab}\n")
    assert copies.stale_build(copy, lab, "Ninja") is None
    assert "Unix Makefiles" in (copies.stale_build(copy, lab, "Unix Makefiles") or "")
    other = tmp_path / "other" / "labs" / "04-tiling"
    assert f"configured for the lab folder {lab}" in (copies.stale_build(copy, other, "Ninja") or "")
    cache.write_bytes(b"CMAKE_HOME_DIRECTORY:INTERNAL=\xff\n")
    assert copies.stale_build(copy, lab, "Ninja") == "its CMake cache cannot be read"
