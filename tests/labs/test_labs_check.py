"""The teaching labs end to end (CTest labs.check): every lab's starter and solution build with
CMake, run under MPI and verify exactly; `check` grades by what the code does (tiles, threads,
kernels, copies, round trips, warm-up, on-node messages), never by a speed threshold: the
solution is done (exit 0), the untouched starter not done (exit 5); a copy that does not build
exits 4, one with a wrong result exits 1, one that hangs exits 3 within seconds, naming the
likely cause; the students' usual mistakes each get "not correct" or "not done"; `lab grade`
writes the class's table.

PYTHONPATH and PXQ_BUILD_DIR are set by CTest."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from pxq.machine import caches, ceilings, envinfo
from pxq.teaching import harness as labs
from pxq.teaching import prediction, sealing

NUMBERS = [1, 2, 3, 4, 5, 6]
# CTest runs this file on two workers (pytest-xdist, --dist loadgroup). Every check of lab 2
# uses pxq's own build of lab 2's solution, which one test removes first: those tests share a
# worker, one after another.
LAB2 = pytest.mark.xdist_group("lab2-solution")
MARKED = [pytest.param(n, marks=LAB2) if n == 2 else n for n in NUMBERS]


def check(number: int, which: str, copy: Path | None = None) -> tuple[int, labs.Outcome | None, str]:
    buf = io.StringIO()
    console = Console(file=buf, width=2000)
    code, out = labs.check(labs.get(str(number)), which, copy, 1, console)
    return code, out, buf.getvalue()


_OWN: dict[tuple[int, str], tuple[int, labs.Outcome | None, str]] = {}


def check_own(number: int, which: str) -> tuple[int, labs.Outcome | None, str]:
    """check() of pxq's own starter or solution, once per test process: several tests read the
    same grade (a copy is checked afresh every time)."""
    if (number, which) not in _OWN:
        _OWN[(number, which)] = check(number, which)
    return _OWN[(number, which)]


@pytest.mark.parametrize("number", MARKED)
def test_solution_verifies_and_is_not_the_starter(number):
    code, out, text = check_own(number, "solution")
    assert code == 0, text
    assert "correct: every run verified exactly" in text and "grade: done (exit 0" in text
    assert out is not None and not out.starter_like, out.code_note
    for e in out.effects:
        assert e.verdict in ("reproduced", "not reproduced", "inconclusive")
        if not e.counted and e.repeats < 2:
            assert e.verdict == "inconclusive" and "--repeat" in e.settle  # one run: too noisy to read
    assert ("the effect shows" in text) or ("why that can happen here" in text)


@pytest.mark.parametrize("number", MARKED)
def test_starter_builds_verifies_and_is_graded_not_done(number):
    code, out, text = check_own(number, "begin")
    assert code == labs.EXIT_NOT_DONE, text
    assert out is not None and out.starter_like, out.code_note
    assert "grade: not done (exit 5" in text and "Traceback" not in text


@LAB2
def test_what_the_starter_and_solution_do_differs_as_the_labs_say():
    """The signatures behind starter_like, lab by lab, from the programs' own reports."""
    _, begin, _ = check_own(4, "begin")
    _, solution, _ = check_own(4, "solution")
    assert begin.data["span"] == begin.data["block"]  # one update() over the whole block
    assert solution.data["span"] == 256 * 1024  # one tile per call
    _, begin, _ = check_own(2, "begin")
    _, solution, _ = check_own(2, "solution")
    assert begin.data["on_node"] == pytest.approx(0.5)  # 24 of 48 halo messages
    assert solution.data["on_node"] == pytest.approx(2 / 3)  # 32 of 48
    assert solution.effect.verdict == "reproduced" and begin.effect.verdict != "reproduced"


def edited_copy(number: int, tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A student's copy of the lab's starter with one edit made in `name`."""
    dest = tmp_path / f"lab{number}"
    assert labs.start(labs.get(str(number)), dest, Console(file=io.StringIO())) == 0
    text = (dest / name).read_text()
    assert old in text, name
    (dest / name).write_text(text.replace(old, new))
    return dest


def test_a_copy_that_does_not_compile_exits_4_with_the_compiler_message(tmp_path):
    dest = edited_copy(4, tmp_path, "ring_compute.cpp", "update(block, elems);", "update(block, elems)")
    code, out, text = check(4, "copy", dest)
    assert code == labs.EXIT_BUILD and out is None
    assert "ring_compute.cpp" in text and "error" in text and "does not compile" in text


def test_a_copy_compiles_only_its_own_files_and_links_the_harness_pxq_built(tmp_path):
    """Labs 1-5: the copy's build compiles the student's file alone and links the harness's
    objects from pxq's build of the solution; lab 6's student file is a header the harness
    includes, so its copy compiles the harness too."""
    # A right program written otherwise: one sweep call per repetition, and a barrier inside the
    # window so that every copy's window ends with the slowest.
    once = "  sweep(array, bytes, stride, reps);\n  win.end"
    per_rep = "  for (int i = 0; i < reps; ++i) sweep(array, bytes, stride, 1);\n  MPI_Barrier(w.comm);\n  win.end"
    dest = solution_copy(3, tmp_path, "copies.cpp", once, per_rep)
    code, _, text = check(3, "copy", dest)
    assert code == 0, text
    objects = sorted(p.name for p in (dest / "build").rglob("*.o"))
    assert objects == ["copies.cpp.o"], objects
    shared = labs.harness_objects(labs.get("3"))
    assert sorted(p.name for p in shared.iterdir()) == ["main.cpp.o"]
    cache = (dest / "build" / "CMakeCache.txt").read_text()
    assert f"LAB_HARNESS_OBJECTS:PATH={shared}" in cache


def test_pxq_s_own_build_of_a_lab_is_configured_again_only_when_its_configure_step_changes(monkeypatch):
    """Every check of a copy builds pxq's solution first: configured once, then only built (CMake
    runs again by itself when the lab's files change); a lost note, or other arguments, configure it
    afresh."""
    mod = labs.get("3")
    console = Console(file=io.StringIO())
    labs.build(mod, "solution", labs.folder(mod) / "solution", console)
    ran: list[list[str]] = []
    real = labs._build_step
    monkeypatch.setattr(labs, "_build_step", lambda argv, confine: ran.append(argv) or real(argv, confine))
    program = labs.build(mod, "solution", labs.folder(mod) / "solution", console)
    assert program.is_file() and [a[:2] for a in ran] == [["cmake", "--build"]], ran
    note = program.parent / labs.CONFIGURED
    note.write_text(json.dumps(["cmake", "-S", "elsewhere"]))  # another configure step than this one's
    ran.clear()
    labs.build(mod, "solution", labs.folder(mod) / "solution", console)
    assert [a[:2] for a in ran] == [["cmake", "-S"], ["cmake", "--build"]], ran
    assert json.loads(note.read_text()) == ran[0]  # noted again once configured and built


def test_a_copy_with_a_wrong_result_exits_1(tmp_path):
    # A loop that leaves the last element out of every pass after the first.
    dest = edited_copy(4, tmp_path, "ring_compute.cpp", "update(block, elems);", "update(block, elems - (p > 0));")
    code, out, text = check(4, "copy", dest)
    assert code == 1 and out is None
    assert "not correct" in text and "wrong result" in text and "Verification FAILED" in text


def test_a_copy_whose_threads_run_with_mpi_thread_single_exits_1(tmp_path):
    loop = "  for (int r = 1; r <= g.rows; ++r)"
    dest = edited_copy(5, tmp_path, "heat_step.cpp", loop, "#pragma omp parallel for reduction(max : change)\n" + loop)
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert "MPI_THREAD_FUNNELED" in text


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("  tile_elems *= 8;  // tiles 8x the size asked for\n", "8x the tile asked for"),
        ("  tile_elems = 32768;  // one tile of its own, 256 KiB\n", "the tile asked for"),
    ],
)
def test_lab4_tiles_that_are_not_the_tile_asked_for_are_not_correct(tmp_path, change, said):
    """The numbers verify either way; the harness saw what each update() touched."""
    head = "void compute(double* block, std::size_t elems, int passes, std::size_t tile_elems) {\n"
    dest = solution_copy(4, tmp_path, "ring_compute.cpp", head, head + change)
    code, out, text = check(4, "copy", dest)
    assert code == 1, text
    assert said in text and "update() call" in text


def test_lab4_passes_and_tiles_swapped_is_not_correct(tmp_path):
    """Each pass over every tile before the next pass: tiles of the right size, nothing reused in cache."""
    mod = labs.get("4")
    dest = tmp_path / "lab4-swapped"
    assert labs.start(mod, dest, Console(file=io.StringIO())) == 0
    (dest / "ring_compute.cpp").write_text(
        '#include <algorithm>\n#include "ring.hpp"\nnamespace ring {\n'
        "void compute(double* block, std::size_t elems, int passes, std::size_t tile_elems) {\n"
        "  for (int p = 0; p < passes; ++p)\n"
        "    for (std::size_t s = 0; s < elems; s += tile_elems) update(block + s, std::min(tile_elems, elems - s));\n"
        "}\n}  // namespace ring\n"
    )
    code, out, text = check(4, "copy", dest)
    assert code == 1, text
    assert "between two passes over the same data" in text


def written_copy(number: int, tmp_path: Path, name: str, text: str) -> Path:
    """A student's copy of lab NUMBER whose file NAME is TEXT, as the student wrote it."""
    dest = tmp_path / f"lab{number}-copy"
    assert labs.start(labs.get(str(number)), dest, Console(file=io.StringIO())) == 0
    (dest / name).write_text(text)
    return dest


def _lab2_copy(tmp_path: Path, body: str) -> Path:
    head = (
        '#include "decomp.hpp"\nnamespace stencil {\nCell cell_of(int rank, int rows, int cols, int ranks_per_node) {\n'
    )
    return written_copy(2, tmp_path, "decomp.cpp", f"{head}{body}\n}}\n}}  // namespace stencil\n")


@LAB2
def test_lab2_column_major_is_not_done_the_grid_allows_more(tmp_path):
    """Not row-major, yet no more on a node (50%) than row-major: the grid allows 66.7% with 2 x 2 blocks."""
    dest = _lab2_copy(tmp_path, "  (void)ranks_per_node; (void)cols;\n  return {rank % rows, rank / rows};")
    code, out, text = check(2, "copy", dest)
    assert code == labs.EXIT_NOT_DONE, text
    assert "the grid allows 66.7% with 2 x 2 blocks" in text and "the effect shows" not in text


# 2 x 2 blocks of cells a node, the nodes' blocks row by row (blocks of bh x bw cells).
LAB2_BLOCKS = (
    "  const int node = rank / ranks_per_node, slot = rank % ranks_per_node;\n"
    "  return {(node / (cols / bw)) * bh + slot / bw, (node % (cols / bw)) * bw + slot % bw};"
)


@LAB2
def test_lab2_blocks_hard_coded_for_this_run_are_not_correct(tmp_path):
    """2 x 2 blocks whatever ranks_per_node: right at the run's 4 x 4 grid with 4 ranks a node,
    two ranks on one cell for 8 ranks a node, which the harness asks cell_of() for."""
    dest = _lab2_copy(tmp_path, "  (void)rows;\n  const int bh = 2, bw = 2;\n" + LAB2_BLOCKS)
    code, out, text = check(2, "copy", dest)
    assert code == 1, text
    assert "for the 8 x 8 grid with 8 ranks a node" in text and "the same cell" in text


@LAB2
def test_lab2_blocks_only_for_4_ranks_a_node_are_not_done(tmp_path):
    """2 x 2 blocks for 4 ranks a node and row-major otherwise: done at the run's layout alone."""
    body = (
        "  if (ranks_per_node != 4 || rows % 2 || cols % 2) return {rank / cols, rank % cols};\n"
        "  const int bh = 2, bw = 2;\n" + LAB2_BLOCKS
    )
    code, out, text = check(2, "copy", _lab2_copy(tmp_path, body))
    assert code == labs.EXIT_NOT_DONE, text
    assert "66.7% of halo messages stay on a node here, but for the 8 x 8 grid with 8 ranks a node" in out.code_note
    assert "2 x 4 blocks keep 71.4%" in out.code_note


@LAB2
def test_lab2_an_exception_thrown_by_the_copy_is_not_correct_not_bad_input(tmp_path):
    """cell_of() throwing for another node size ends the run through the harness's exception
    path (exit 2, as a refused command line): a program failing, graded 3, never "bad input"."""
    text = (
        '#include <stdexcept>\n#include "decomp.hpp"\nnamespace stencil {\n'
        "Cell cell_of(int rank, int rows, int cols, int ranks_per_node) {\n"
        '  if (ranks_per_node != 4) throw std::invalid_argument("4 ranks a node only");\n'
        "  (void)rows;\n  return {rank / cols, rank % cols};\n}\n}  // namespace stencil\n"
    )
    code, out, text = check(2, "copy", written_copy(2, tmp_path, "decomp.cpp", text))
    assert code == 3, text
    assert "an exception ended it" in text and "4 ranks a node only" in text


@LAB2
def test_lab2_two_ranks_on_one_cell_is_not_correct_and_says_which(tmp_path):
    dest = _lab2_copy(tmp_path, "  (void)ranks_per_node;\n  return {rank / cols, rank == 1 ? 0 : rank % cols};")
    code, out, text = check(2, "copy", dest)
    assert code == 1, text
    assert "ranks 0 and 1 both own cell (0, 0)" in text and "ORTE_ERROR_LOG" not in text


def test_lab6_kernels_forced_onto_serial_are_not_correct(tmp_path):
    """The numbers verify on one thread; Kokkos's callbacks say the kernels ran in the wrong space."""
    mod = labs.get("6")
    dest = tmp_path / "lab6-serial"
    assert labs.start(mod, dest, Console(file=io.StringIO())) == 0
    text = (labs.folder(mod) / "solution" / "smooth.hpp").read_text()
    assert "Kokkos::RangePolicy<Space>" in text
    (dest / "smooth.hpp").write_text(text.replace("Kokkos::RangePolicy<Space>", "Kokkos::RangePolicy<Kokkos::Serial>"))
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "ran in another execution space" in text and "RangePolicy<Space>" in text


def test_lab6_a_kernel_reading_its_own_output_is_not_correct(tmp_path):
    body = "y(i) = x(i) + c * (x(i - 1) - 2.0 * x(i) + x(i + 1));"
    dest = solution_copy(6, tmp_path, "smooth.hpp", body, body.replace("x(i - 1)", "y(i - 1)"))
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "differs from the plain loops" in text


def test_lab6_a_largest_change_that_keeps_its_sign_is_not_correct(tmp_path):
    """max(y - x) instead of max |y - x| verifies whenever the largest change happens to be an
    increase; the harness also steps the negated data, where it is a decrease."""
    abs_change = "Kokkos::Experimental::fabs(y(i) - x(i))"
    dest = solution_copy(6, tmp_path, "smooth.hpp", abs_change, "(y(i) - x(i))")
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "differs from the plain loops" in text


# The largest change as a second kernel taking an atomic maximum into a View made each step.
LAB6_ATOMIC = """  Kokkos::View<double> largest("largest");
  Kokkos::parallel_for(
      "change", Kokkos::RangePolicy<Space>(1, n - 1),
      KOKKOS_LAMBDA(const int i) { Kokkos::atomic_fetch_max(&largest(), Kokkos::Experimental::fabs(y(i) - x(i))); });
  Kokkos::fence();
  return largest();
"""


def test_lab6_an_atomic_maximum_in_a_view_made_each_step_is_done(tmp_path):
    """Right, written otherwise: no reduction but a second kernel, and a View whose initialisation
    Kokkos runs in the default host space whatever Space is (Kokkos's own kernel, not judged)."""
    text = (labs.folder(labs.get("6")) / "solution" / "smooth.hpp").read_text()
    reduce_from, reduce_to = text.index("  double change = 0;\n"), text.index("  return change;\n") + 17
    mine = text[:reduce_from] + LAB6_ATOMIC + text[reduce_to:]
    code, out, text = check(6, "copy", written_copy(6, tmp_path, "smooth.hpp", mine))
    assert code == 0, text
    assert "launches 2 Kokkos kernel(s) per step" in text


def test_lab6_half_ported_is_not_correct(tmp_path):
    """The parallel_for ported (LAB 1), the largest change still a plain loop (LAB 2 not done)."""
    mod = labs.get("6")
    dest = tmp_path / "lab6-half"
    assert labs.start(mod, dest, Console(file=io.StringIO())) == 0
    text = (labs.folder(mod) / "solution" / "smooth.hpp").read_text()
    start = text.index("  Kokkos::parallel_reduce(")
    end = text.index("  return change;")
    plain = (
        "  Kokkos::fence();\n  for (int i = 1; i < n - 1; ++i) change = std::fmax(change, std::fabs(y(i) - x(i)));\n"
    )
    (dest / "smooth.hpp").write_text(text[:start] + plain + text[end:])
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "the largest change is still a plain loop" in text


def test_lab5_every_thread_relaxing_every_row_is_not_correct(tmp_path):
    """`omp parallel` without `for`: the same numbers, N times the work; the harness counts the rows."""
    pragma = "#pragma omp parallel for reduction(max : change) schedule(static)"
    dest = solution_copy(5, tmp_path, "heat_step.cpp", pragma, "#pragma omp parallel reduction(max : change)")
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert "relaxed 2 times a step" in text and "omp parallel for" in text


def test_lab5_mpi_called_from_every_thread_under_funneled_is_not_correct(tmp_path):
    """Every thread exchanging the halos: MPI from threads FUNNELED does not allow."""
    old = (
        "  exchange_halos(g, w);\n  double change = 0;\n"
        "#pragma omp parallel for reduction(max : change) schedule(static)\n"
    )
    new = (
        "  double change = 0;\n#pragma omp parallel reduction(max : change)\n  {\n  exchange_halos(g, w);\n"
        "#pragma omp barrier\n#pragma omp for schedule(static)\n"
    )
    dest = solution_copy(5, tmp_path, "heat_step.cpp", old, new)
    text = (dest / "heat_step.cpp").read_text()
    (dest / "heat_step.cpp").write_text(text.replace("relax_row(g, r));\n", "relax_row(g, r));\n  }\n", 1))
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert "exchange_halos" in text and ("times a step" in text or "main one" in text)


@LAB2
def test_the_command_line_checks_a_started_copy(tmp_path):
    run = [sys.executable, "-m", "pxq", "lab"]
    start = subprocess.run([*run, "start", "2", "--dir", str(tmp_path / "w")], capture_output=True, text=True)
    assert start.returncode == 0, start.stderr
    assert "decomp.cpp: LAB markers on line(s)" in start.stdout
    again = subprocess.run([*run, "start", "2", "--dir", str(tmp_path / "w")], capture_output=True, text=True)
    assert again.returncode == 2 and "not empty" in again.stdout + again.stderr
    # The folder named as the student stands in it (relative), as `./pxq lab check 2` does
    ck = subprocess.run(
        [*run, "check", "2", "--dir", "w", "--repeat", "1"], capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert ck.returncode == labs.EXIT_NOT_DONE, ck.stdout + ck.stderr
    assert "row-major cells" in ck.stdout and "not judged" in ck.stdout
    assert (tmp_path / "w" / "build" / "lab-stencil").is_file()


def solution_copy(number: int, tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A student's copy holding the lab's solution with one mistake made in `name`."""
    mod = labs.get(str(number))
    dest = tmp_path / f"lab{number}-mistake"
    assert labs.start(mod, dest, Console(file=io.StringIO())) == 0
    text = (labs.folder(mod) / "solution" / name).read_text()
    assert old in text, name
    (dest / name).write_text(text.replace(old, new))
    return dest


def test_lab3_a_copy_that_sweeps_more_than_it_reports_is_not_correct(tmp_path):
    """Every word counts the sweeps that touched it: a copy that sweeps once more than the
    window it returns says is caught by the harness's own count, whatever the timings."""
    once = "  sweep(array, bytes, stride, reps);\n"
    dest = solution_copy(3, tmp_path, "copies.cpp", once, once + "  sweep(array, bytes, stride, 1);\n")
    code, out, text = check(3, "copy", dest)
    assert code == 1, text
    assert "not correct" in text and "a word's count differs from the sweeps reported" in text


LAB3_TURNS = {
    # One window around sweeps that run one rank after another: the windows overlap, the sweeps do not.
    "one window, the ranks in turn": (
        "  sweep(array, bytes, stride, reps);\n",
        "  for (int r = 0; r < w.size; ++r) {\n    if (r == w.rank) sweep(array, bytes, stride, reps);\n"
        "    MPI_Barrier(w.comm);\n  }\n",
    ),
    # Every repetition in turn: the sweeps' spans overlap, but each rank sweeps half of its span.
    "each repetition in turn": (
        "  sweep(array, bytes, stride, reps);\n",
        "  for (int i = 0; i < reps; ++i)\n    for (int r = 0; r < w.size; ++r) {\n"
        "      if (r == w.rank) sweep(array, bytes, stride, 1);\n      MPI_Barrier(w.comm);\n    }\n",
    ),
}


@pytest.mark.parametrize("how", sorted(LAB3_TURNS))
def test_lab3_copies_that_take_turns_inside_overlapping_windows_are_not_done(tmp_path, how):
    """The copies are judged by when the harness's own sweep() ran on each rank, not by the
    windows the student's code reports: sweeps that take turns measure each copy alone."""
    dest = solution_copy(3, tmp_path, "copies.cpp", *LAB3_TURNS[how])
    code, out, text = check(3, "copy", dest)
    assert code == 5, text
    assert out is not None and out.starter_like and "only 1 of 2 copies ran at once" in text


def test_lab3_a_window_that_does_not_hold_its_sweep_is_not_correct(tmp_path):
    """A window read before the sweep (it times nothing) is refused by the harness, which saw
    when its sweep() ran on MPI_Wtime's clock."""
    timed = "  win.start = MPI_Wtime();\n  sweep(array, bytes, stride, reps);\n  win.end = MPI_Wtime();\n"
    early = "  win.start = MPI_Wtime();\n  win.end = MPI_Wtime();\n  sweep(array, bytes, stride, reps);\n"
    dest = solution_copy(3, tmp_path, "copies.cpp", timed, early)
    code, out, text = check(3, "copy", dest)
    assert code == 1, text
    assert "a window does not hold its rank's sweeps" in text


def test_lab5_a_change_taken_from_the_last_rows_thread_is_not_correct(tmp_path):
    """`lastprivate(change)`: the grid is right, step() returns the largest change of the last
    rows' thread only; the harness compares every step's return with its rows' largest."""
    pragma = "#pragma omp parallel for reduction(max : change) schedule(static)"
    mistake = "#pragma omp parallel for firstprivate(change) lastprivate(change) schedule(static)"
    dest = solution_copy(5, tmp_path, "heat_step.cpp", pragma, mistake)
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert "step() returned another value than the largest change" in text and "reduction(max : change)" in text


LAB5_LOOP = (
    "#pragma omp parallel for reduction(max : change) schedule(static)\n"
    "  for (int r = 1; r <= g.rows; ++r) change = std::max(change, relax_row(g, r));"
)


def _lab5_update(schedule: str, guard: str) -> str:
    """The row loop with one shared `change` updated by `if (d > change) change = d`."""
    return (
        f"#pragma omp parallel for schedule({schedule})\n  for (int r = 1; r <= g.rows; ++r) {{\n"
        f"    const double d = relax_row(g, r);\n{guard}    if (d > change) change = d;\n  }}"
    )


@pytest.mark.parametrize(
    ("loop", "code", "said"),
    [
        (_lab5_update("static", ""), 1, "rank-steps of the race probe"),
        (_lab5_update("dynamic", "#pragma omp critical\n"), 0, "grade: done"),
    ],
    ids=["unguarded-race", "critical-section"],
)
def test_lab5_a_shared_change_needs_a_reduction_or_a_critical_section(tmp_path, loop, code, said):
    """A race the heat grid hides: the unguarded update verifies there (the largest change sits
    in the first rows), so the harness's race probe releases the threads together with ever larger
    changes and some steps lose the largest: not correct. The same update in a critical section,
    rows handed out dynamically, loses none: done."""
    dest = solution_copy(5, tmp_path, "heat_step.cpp", LAB5_LOOP, loop)
    got, out, text = check(5, "copy", dest)
    assert got == code, text
    assert said in text and (code == 0 or "reduction(max : change)" in text)


@pytest.mark.parametrize(
    "divisor",
    ["/ 2.0", "/ (2.0 * (reps + warmup))", "/ (4.0 * reps)"],
    ids=["no-trip-count", "the-warm-up-counted", "four-messages-a-trip"],
)
def test_lab1_a_wrong_divisor_is_not_correct_and_names_the_divisor(tmp_path, divisor):
    """A one-way time 20-200x too large (no trip count), 5-33% too small (the warm-up trips counted
    too: 210 for 200 timed, 30 for 20) or 2x too small: each lies outside the trips' own range."""
    dest = solution_copy(1, tmp_path, "pingpong.cpp", "/ (2.0 * reps)", divisor)
    code, out, text = check(1, "copy", dest)
    assert code == 1 and out is None, text
    assert "is not one message's one-way time" in text and "check the divisor" in text


def test_lab1_timing_another_size_than_asked_is_not_correct(tmp_path):
    timed = "for (int i = 0; i < reps; ++i) link.round_trip(bytes);"
    dest = solution_copy(1, tmp_path, "pingpong.cpp", timed, "for (int i = 0; i < reps; ++i) link.round_trip(8);")
    code, _, text = check(1, "copy", dest)
    assert code == 1, text
    assert "carried 8 bytes, not the 64 bytes asked for" in text


def _lab1_copy(tmp_path: Path, body: str) -> Path:
    head = '#include <algorithm>\n#include <chrono>\n#include "pingpong.hpp"\nnamespace pingpong {\n'
    head += "double one_way_seconds(Link& link, std::size_t bytes) {\n"
    return written_copy(1, tmp_path, "pingpong.cpp", f"{head}{body}\n}}\n}}  // namespace pingpong\n")


def test_lab1_the_fastest_trip_is_as_right_as_the_mean(tmp_path):
    """A minimum-of-trips estimator, a clock read around every trip: right, and graded done."""
    dest = _lab1_copy(
        tmp_path,
        "  for (int i = 0; i < 10; ++i) link.round_trip(bytes);\n  double best = 1e30;\n"
        "  for (int i = 0; i < 50; ++i) {\n    const double t0 = MPI_Wtime();\n    link.round_trip(bytes);\n"
        "    best = std::min(best, MPI_Wtime() - t0);\n  }\n  return best / 2.0;",
    )
    code, out, text = check(1, "copy", dest)
    assert code == 0, text


def test_lab1_the_slowest_trip_is_not_a_message_s_time(tmp_path):
    """A read around every trip and the slowest returned: above 1.5x the trips' mean whenever one
    trip is an outlier (here, 500 trips of 8 bytes against a microsecond's mean)."""
    body = """#include <algorithm>
#include "pingpong.hpp"
namespace pingpong {
double one_way_seconds(Link& link, std::size_t bytes) {
  for (int i = 0; i < 10; ++i) link.round_trip(bytes);
  double worst = 0;
  for (int i = 0; i < 500; ++i) {
    const double t0 = MPI_Wtime();
    link.round_trip(bytes);
    worst = std::max(worst, (MPI_Wtime() - t0) / 2.0);
  }
  return worst;
}
}  // namespace pingpong
"""
    code, out, text = check(1, "copy", written_copy(1, tmp_path, "pingpong.cpp", body))
    assert code == 1, text
    assert "above 1.5x the mean" in text and "the slowest trip is an outlier" in text


def test_lab1_another_clock_is_refused_naming_the_contract(tmp_path):
    dest = _lab1_copy(
        tmp_path,
        "  for (int i = 0; i < 10; ++i) link.round_trip(bytes);\n"
        "  const auto t0 = std::chrono::steady_clock::now();\n"
        "  for (int i = 0; i < 100; ++i) link.round_trip(bytes);\n"
        "  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 200.0;",
    )
    code, _, text = check(1, "copy", dest)
    assert code == 1, text
    assert "the lab's contract is to time with MPI_Wtime" in text


def test_lab1_a_latency_100x_too_large_is_not_correct(tmp_path):
    dest = solution_copy(1, tmp_path, "pingpong.cpp", "/ (2.0 * reps)", "/ (2.0 * reps) * 100")
    code, _, text = check(1, "copy", dest)
    assert code == 1 and "check the divisor" in text and "the unit (seconds)" in text


def test_lab1_mismatched_round_trips_are_stopped_within_30_s_naming_the_cause(tmp_path):
    import time

    warm = "for (int i = 0; i < warmup; ++i) link.round_trip(bytes);"
    dest = solution_copy(1, tmp_path, "pingpong.cpp", warm, warm.replace("warmup;", "warmup + (link.rank() == 0);"))
    t0 = time.monotonic()
    code, _, text = check(1, "copy", dest)
    assert time.monotonic() - t0 < 60  # the build, then a run stopped after its 20 s
    assert code == 3, text
    assert "did not finish in 20 s" in text and "different numbers of round_trip() calls" in text


def test_lab1_without_a_warm_up_is_not_done(tmp_path):
    dest = solution_copy(1, tmp_path, "pingpong.cpp", "const int warmup = 10;", "const int warmup = 0;")
    code, out, text = check(1, "copy", dest)
    assert code == labs.EXIT_NOT_DONE, text
    assert out.data["warmup_trips"] == 0 and "no untimed warm-up" in out.code_note


def test_lab1_a_warm_up_of_another_size_is_not_done(tmp_path):
    """1-byte warm-up trips before timing 4 MiB ones warm another size's path: the harness counts
    the warm-up trips of the size timed."""
    warm = "for (int i = 0; i < warmup; ++i) link.round_trip(bytes);"
    dest = solution_copy(1, tmp_path, "pingpong.cpp", warm, warm.replace("round_trip(bytes)", "round_trip(1)"))
    code, out, text = check(1, "copy", dest)
    assert code == labs.EXIT_NOT_DONE, text
    assert out.data["warmup_trips"] == 0 and "of another size" in out.code_note


def test_lab4_a_loop_dropping_the_last_shorter_tile_is_not_correct(tmp_path):
    loop = "for (std::size_t start = 0; start < elems; start += tile_elems)"
    dest = solution_copy(
        4, tmp_path, "ring_compute.cpp", loop, loop.replace("start < elems", "start + tile_elems <= elems")
    )
    code, out, text = check(4, "copy", dest)
    assert code == 1 and out is None, text  # 48K and 3M tiles do not divide the 32 MiB block
    assert "Verification FAILED" in text


def test_a_result_line_printed_by_the_students_code_is_not_taken(tmp_path):
    fake = 'std::printf("LAB-RESULT - {\\"verified\\": true}\\n"); return;'
    dest = edited_copy(4, tmp_path, "ring_compute.cpp", "(void)tile_elems;", f"(void)tile_elems; {fake}")
    text = (dest / "ring_compute.cpp").read_text()
    (dest / "ring_compute.cpp").write_text("#include <cstdio>\n" + text)
    code, out, text = check(4, "copy", dest)
    assert code == 1 and out is None, text  # nothing computed: the harness's own check fails


def test_lab_grade_writes_the_class_table(tmp_path):
    mod = labs.get("1")
    starter = tmp_path / "ann"
    assert labs.start(mod, starter, Console(file=io.StringIO())) == 0
    solution = tmp_path / "bob"
    assert labs.start(mod, solution, Console(file=io.StringIO())) == 0
    (solution / "pingpong.cpp").write_text((labs.folder(mod) / "solution" / "pingpong.cpp").read_text())
    wrong = solution_copy(1, tmp_path, "pingpong.cpp", "/ (2.0 * reps)", "/ 2.0")
    out = tmp_path / "grades"
    run = [sys.executable, "-m", "pxq", "lab", "grade", "1", str(starter), str(solution), str(wrong)]
    done = subprocess.run([*run, "--repeat", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "grades.csv").read_text())))
    assert [(r["copy"], r["grade"], r["exit"]) for r in rows] == [
        (str(starter), "not done", "5"),
        (str(solution), "done", "0"),
        (str(wrong), "not correct", "1"),
    ]
    table = (tmp_path / "grades.md").read_text()
    assert "| copy | lab | grade |" in table and "1 done, 1 not done, 1 not correct of 3 copies." in table
    graded = json.loads((tmp_path / "grades.json").read_text())
    assert [g["outcome"] for g in graded] == ["not done", "done", "not correct"]


HOSTILE = r"""
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
namespace {
// Runs before main(), as code meant to escape would: writes outside the copy and inside it,
// and knocks on a port the test listens on outside the sandbox.
int escape_attempt() {
  if (std::FILE* f = std::fopen("@OUTSIDE@", "w")) { std::fputs("escaped", f); std::fclose(f); }
  if (std::FILE* f = std::fopen("@INSIDE@", "w")) { std::fputs("inside", f); std::fclose(f); }
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(@PORT@);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) std::fputs("connected\n", stderr);
  close(s);
  return 0;
}
const int attempted = escape_attempt();
}  // namespace
"""


def test_a_copy_that_writes_outside_its_folder_or_uses_the_network_is_confined(tmp_path):
    """The solution with code that, before main(), writes a file outside its copy and one in
    it, and connects to a port the test listens on: it still builds, runs and is graded done,
    the file outside is never written, the port never hears from it, the file inside is."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    outside, port = tmp_path / "escaped.txt", listener.getsockname()[1]
    dest = solution_copy(4, tmp_path, "ring_compute.cpp", '#include "ring.hpp"', '#include "ring.hpp"')
    code = HOSTILE.replace("@OUTSIDE@", str(outside)).replace("@INSIDE@", str(dest / "inside.txt"))
    (dest / "ring_compute.cpp").write_text(code.replace("@PORT@", str(port)) + (dest / "ring_compute.cpp").read_text())
    code, out, text = check(4, "copy", dest)
    assert code == 0, text
    assert not outside.exists(), "the copy wrote outside its folder"
    assert (dest / "inside.txt").read_text() == "inside"
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody connected
    listener.close()


def test_a_copy_that_reads_the_nonce_to_print_a_result_is_refused(tmp_path):
    """Code that looks for this run's nonce (the environment, /proc/self/environ) and prints a
    result line with what it finds: the harness wiped the nonce before main(), so the line is
    not the harness's, and the run is refused."""
    steal = r"""
  {
    const char* n = std::getenv("PXQ_LAB_NONCE");
    std::string found = n ? n : "";
    std::ifstream env("/proc/self/environ");
    std::string entry;
    while (found.empty() && std::getline(env, entry, '\0'))
      if (entry.rfind("PXQ_LAB_NONCE=", 0) == 0) found = entry.substr(14);
    std::printf("LAB-RESULT %s {\"verified\": true, \"lab\": \"04-tile-ring\"}\n", found.empty() ? "-" : found.c_str());
    std::fflush(stdout);
  }
  (void)tile_elems;"""
    dest = edited_copy(4, tmp_path, "ring_compute.cpp", "(void)tile_elems;", steal)
    text = (dest / "ring_compute.cpp").read_text()
    (dest / "ring_compute.cpp").write_text(
        "#include <cstdio>\n#include <cstdlib>\n#include <fstream>\n#include <string>\n" + text
    )
    code, out, text = check(4, "copy", dest)
    assert code == 1 and out is None, text
    assert "reaches past the exercise" in text and "`getenv` reads or changes the environment" in text
    assert "`/proc/` reads the system's process tables" in text
    assert "`LAB-RESULT` prints the harness's result line" in text


# The held-out forgery of the audit: nothing computed, the result line printed with the nonce the
# harness keeps in its own variable, and the program ended before the harness's line.
FORGED = r"""
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include "lab.hpp"
#include "ring.hpp"
namespace ring {
void compute(double*, std::size_t, int, std::size_t) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("LAB-RESULT %s {\"lab\":\"04-tile-ring\",\"verified\":true,\"ranks\":2,\"block_bytes\":33554432,"
                "\"tile_bytes\":262144,\"passes\":8,\"iterations\":4,\"reference\":false,\"compute_s\":1e-05,"
                "\"exchange_s\":0.0,\"total_s\":1e-05,\"largest_span_bytes\":262144,\"update_calls\":1}\n",
                lab::detail::nonce.c_str());
    std::fflush(stdout);
  }
  MPI_Finalize();
  std::exit(0);
}
}  // namespace ring
"""


def test_the_audit_s_forgery_is_not_correct(tmp_path):
    dest = edited_copy(4, tmp_path, "ring_compute.cpp", "(void)tile_elems;", "(void)tile_elems;")
    (dest / "ring_compute.cpp").write_text(FORGED)
    code, out, text = check(4, "copy", dest)
    assert code == 1 and out is None and "done" not in text.split("grade:")[-1], text
    assert "lab::detail" in text and "`exit(`" in text and "`MPI_Finalize`" in text


def test_a_result_line_carrying_the_nonce_but_not_the_answer_is_not_correct(tmp_path):
    """A forger that got past every screen and holds the nonce (here a program that simply
    reads it): its line says verified, and its answer is not what pxq's own build computes
    from the same seed, so the grade is not correct."""
    mod = labs.get("4")
    buf = io.StringIO()
    console = Console(file=buf, width=2000)
    trusted = labs.build(mod, "solution", labs.folder(mod) / "solution", console)
    fake = tmp_path / "forger.sh"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
        '  printf \'LAB-RESULT %s {"lab": "04-tile-ring", "verified": true, "answer": "0000000000000000"}\\n\' '
        '"$PXQ_LAB_NONCE"\n'
        "fi\n"
    )
    fake.chmod(0o755)
    ctx = labs.Context(console, fake, 1, 2, {}, 60.0, trusted=trusted, answer_ignores=mod.answer_ignores)
    with pytest.raises(labs.LabFailure, match="does not compute from the same input") as failed:
        ctx.run("1x2")
    assert failed.value.code == 1
    truthful = labs.Context(console, trusted, 1, 2, {}, 60.0, trusted=trusted, answer_ignores=mod.answer_ignores)
    assert truthful.run("1x2", ["--tile", "48K"])["verified"] is True  # the same input, any tile: the same answer
    assert len(truthful._answers) == 1


PIPE_HOLDER = r"""
#include <unistd.h>
#include <cstdio>
namespace {
// Before main(): a grandchild in a session of its own that keeps the output open for 10 minutes
// and tries to read the host's secrets into the copy.
int hold() {
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      if (std::FILE* out = std::fopen("@COPY@/found.txt", "w")) {
        const char* paths[] = {"/etc/shadow", "@HOME@/.ssh/id_rsa", "@HOME@/.bash_history"};
        for (const char* path : paths)
          if (std::FILE* f = std::fopen(path, "r")) {
            char line[256];
            while (std::fgets(line, sizeof line, f)) std::fputs(line, out);
            std::fclose(f);
          }
        std::fclose(out);
      }
      sleep(600);
    }
    execl("/bin/true", "true", static_cast<char*>(nullptr));  // the middle child ends
  }
  return 0;
}
const int held = hold();
}  // namespace
"""


def test_a_correct_copy_leaving_a_child_that_holds_the_output_is_graded_promptly_and_leaves_nothing(tmp_path):
    import os
    import time

    dest = solution_copy(4, tmp_path, "ring_compute.cpp", '#include "ring.hpp"', '#include "ring.hpp"')
    home = os.path.expanduser("~")
    code = PIPE_HOLDER.replace("@COPY@", str(dest)).replace("@HOME@", home)
    (dest / "ring_compute.cpp").write_text(code + (dest / "ring_compute.cpp").read_text())
    start = time.monotonic()
    result, _, text = check(4, "copy", dest)
    assert result == 0, text
    assert time.monotonic() - start < 300  # never the 120 s hang per run of the old sandbox
    found = (dest / "found.txt").read_text() if (dest / "found.txt").exists() else ""
    assert "root:" not in found and "PRIVATE KEY" not in found
    # This copy's processes only: its program's path names the copy (another worker's check of
    # lab 4, or pxq's own build of the solution, may be running lab-ring at this moment).
    program = str(dest.resolve() / "build" / "lab-ring")
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _runs(p, program)]
    assert leftovers == [], "a process of the copy outlived the check"


def _runs(proc: Path, name: str) -> bool:
    try:
        return name.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize("shadow", ["nlohmann/json.hpp", "lab.hpp", "ring.hpp"])
def test_a_header_in_the_copy_that_could_shadow_the_harness_s_is_refused(tmp_path, shadow):
    dest = edited_copy(4, tmp_path, "ring_compute.cpp", "(void)tile_elems;", "(void)tile_elems;")
    (dest / shadow).parent.mkdir(parents=True, exist_ok=True)
    (dest / shadow).write_text("#error shadowed\n")
    with pytest.raises(labs.InputError, match="could stand in for the lab's own"):
        check(4, "copy", dest)


@LAB2
def test_three_students_checking_lab2_at_once_are_each_graded_right(tmp_path):
    """Three `lab check 2` at the same moment, pxq's own build of the solution (which every check
    of a copy recomputes the answers with) removed first so that all three need it: each gets its
    own grade (row-major: not done; 2 x 2 blocks: done; two ranks on one cell: not correct)."""
    import shutil

    from pxq.core import paths

    shutil.rmtree(paths.build_dir() / "labs" / "02-msgdist" / "solution", ignore_errors=True)
    starter = tmp_path / "starter"
    assert labs.start(labs.get("2"), starter, Console(file=io.StringIO())) == 0
    done = solution_copy(2, tmp_path / "s", "decomp.cpp", "namespace stencil {", "namespace stencil {")
    wrong = _lab2_copy(tmp_path, "  (void)ranks_per_node;\n  return {rank / cols, rank == 1 ? 0 : rank % cols};")
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "pxq", "lab", "check", "2", "--dir", str(d), "--repeat", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name, d in (("starter", starter), ("done", done), ("wrong", wrong))
    }
    got = {name: (p.wait(timeout=900), p.stdout.read()) for name, p in procs.items()}
    assert got["starter"][0] == labs.EXIT_NOT_DONE, got["starter"][1]
    assert got["done"][0] == 0, got["done"][1]
    assert got["wrong"][0] == 1 and "both own cell" in got["wrong"][1], got["wrong"][1]


@pytest.mark.parametrize(
    "beside",
    [
        '  Kokkos::parallel_for("change", Kokkos::RangePolicy<Space>(1, n - 1), KOKKOS_LAMBDA(const int) {});\n',
        "  double unused = 0;\n"
        '  Kokkos::parallel_reduce("change", Kokkos::RangePolicy<Space>(1, n - 1),\n'
        "      KOKKOS_LAMBDA(const int, double& m) { m = Kokkos::Experimental::fmax(m, 0.0); },\n"
        "      Kokkos::Max<double>(unused));\n",
    ],
    ids=["empty-parallel-for", "empty-reduction"],
)
def test_lab6_an_empty_kernel_beside_a_plain_loop_is_not_correct(tmp_path, beside):
    """The kernels counted every step, the largest change still a plain loop: the harness's guarded
    step closes x's and y's pages between kernels, so the loop's first read faults and is named."""
    mod = labs.get("6")
    dest = tmp_path / "lab6-empty-kernel"
    assert labs.start(mod, dest, Console(file=io.StringIO())) == 0
    text = (labs.folder(mod) / "solution" / "smooth.hpp").read_text()
    start, end = text.index("  Kokkos::parallel_reduce("), text.index("  return change;")
    plain = "  for (int i = 1; i < n - 1; ++i) change = std::fmax(change, std::fabs(y(i) - x(i)));\n"
    (dest / "smooth.hpp").write_text(text[:start] + beside + plain + text[end:])
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "read or wrote x or y outside its Kokkos kernels" in text and "guarded OpenMP step" in text


def test_lab6_a_kernel_of_one_iteration_looping_over_the_points_is_not_correct(tmp_path):
    """The whole update inside one kernel of one iteration: kernels counted, x and y touched only
    inside kernels, yet one thread does the loop; the guarded step notes which thread first
    touched each page of x and y inside each kernel."""
    one = (
        '  Kokkos::parallel_for(\n      "smooth", Kokkos::RangePolicy<Space>(0, 1), KOKKOS_LAMBDA(const int) {\n'
        "        for (int i = 1; i < n - 1; ++i) y(i) = x(i) + c * (x(i - 1) - 2.0 * x(i) + x(i + 1));\n      });"
    )
    old = (
        '  Kokkos::parallel_for(\n      "smooth", Kokkos::RangePolicy<Space>(1, n - 1),\n'
        "      KOKKOS_LAMBDA(const int i) { y(i) = x(i) + c * (x(i - 1) - 2.0 * x(i) + x(i + 1)); });"
    )
    dest = solution_copy(6, tmp_path, "smooth.hpp", old, one)
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "swept x or y on one thread of" in text and "RangePolicy<Space>(1, n - 1)" in text


def test_lab5_a_sum_of_the_rows_changes_is_not_correct_and_named_a_maximum(tmp_path):
    """`reduction(+ : change)`: shared right, reduced wrong; the grid verifies, every step's return
    differs from its rows' largest change, and the reason says it must be a maximum."""
    dest = solution_copy(
        5,
        tmp_path,
        "heat_step.cpp",
        LAB5_LOOP,
        "#pragma omp parallel for reduction(+ : change) schedule(static)\n"
        "  for (int r = 1; r <= g.rows; ++r) change += relax_row(g, r);",
    )
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert "step() returned another value than the largest change" in text and "not a sum" in text


def test_lab6_a_plain_loop_over_a_host_mirror_is_not_correct(tmp_path):
    """The update in a kernel, an empty kernel beside it, then x and y deep-copied into mirrors of
    the student's own and the largest change taken by a plain loop over those: x and y are touched
    only by kernels and deep copies, but the mirrors are Views step() made, which the guarded step
    closes too."""
    mod = labs.get("6")
    dest = tmp_path / "lab6-mirror"
    assert labs.start(mod, dest, Console(file=io.StringIO())) == 0
    text = (labs.folder(mod) / "solution" / "smooth.hpp").read_text()
    start, end = text.index("  Kokkos::parallel_reduce("), text.index("  return change;")
    mirror = (
        '  Kokkos::parallel_for("change", Kokkos::RangePolicy<Space>(1, n - 1), KOKKOS_LAMBDA(const int) {});\n'
        "  auto hx = Kokkos::create_mirror(x);\n  auto hy = Kokkos::create_mirror(y);\n"
        "  Kokkos::deep_copy(hx, x);\n  Kokkos::deep_copy(hy, y);\n"
        "  for (int i = 1; i < n - 1; ++i) change = std::fmax(change, std::fabs(hy(i) - hx(i)));\n"
    )
    (dest / "smooth.hpp").write_text(text[:start] + mirror + text[end:])
    code, out, text = check(6, "copy", dest)
    assert code == 1, text
    assert "a View step() made itself outside its Kokkos kernels" in text and "host mirror" in text


def test_lab6_a_temporary_view_touched_only_by_kernels_is_done(tmp_path):
    """Right, written otherwise: the old values copied into a View made each step (a deep copy), the
    update and the largest change kernels reading it; the guarded step closes it and only kernels
    and deep copies touch it."""
    text = (labs.folder(labs.get("6")) / "solution" / "smooth.hpp").read_text()
    old = "  const int n = static_cast<int>(x.extent(0));\n"
    tmp = old + '  Kokkos::View<double*> old("old", n);\n  Kokkos::deep_copy(old, x);\n'
    mine = text.replace(old, tmp).replace("x(i - 1) - 2.0 * x(i) + x(i + 1)", "old(i - 1) - 2.0 * old(i) + old(i + 1)")
    assert mine != text
    code, out, text = check(6, "copy", written_copy(6, tmp_path, "smooth.hpp", mine))
    assert code == 0, text


def test_lab1_the_median_of_many_timed_trips_is_done(tmp_path):
    """Right, written otherwise (the guide's row): a clock read around every trip, the median kept."""
    body = """#include <algorithm>
#include <vector>
#include "pingpong.hpp"
namespace pingpong {
double one_way_seconds(Link& link, std::size_t bytes) {
  for (int i = 0; i < 10; ++i) link.round_trip(bytes);
  std::vector<double> trips(101);
  for (double& t : trips) {
    const double t0 = MPI_Wtime();
    link.round_trip(bytes);
    t = MPI_Wtime() - t0;
  }
  std::nth_element(trips.begin(), trips.begin() + 50, trips.end());
  return trips[50] / 2.0;
}
}  // namespace pingpong
"""
    code, out, text = check(1, "copy", written_copy(1, tmp_path, "pingpong.cpp", body))
    assert code == 0, text


@LAB2
def test_lab2_the_nodes_blocks_placed_column_by_column_are_done(tmp_path):
    """The guide's row: 2 x 2 blocks (as square as the grid allows) whose nodes go down the grid's
    columns first; the same share on a node as the solution's row-by-row placement."""
    body = (
        "  int bh = 1;\n"
        "  for (int h = 1; h * h <= ranks_per_node; ++h)\n"
        "    if (ranks_per_node % h == 0 && rows % h == 0 && cols % (ranks_per_node / h) == 0) bh = h;\n"
        "  const int bw = ranks_per_node / bh;\n"
        "  if (rows % bh != 0 || cols % bw != 0) return {rank / cols, rank % cols};\n"
        "  const int node = rank / ranks_per_node, slot = rank % ranks_per_node;\n"
        "  const int blocks_per_col = rows / bh;\n"
        "  return {(node % blocks_per_col) * bh + slot / bw, (node / blocks_per_col) * bw + slot % bw};"
    )
    code, out, text = check(2, "copy", _lab2_copy(tmp_path, body))
    assert code == 0, text


def test_lab4_the_first_pass_over_the_whole_block_is_not_done(tmp_path):
    """The guide's row: pass 1 over the whole block, the other passes tile by tile. Tiles of the
    size asked for, every element updated `passes` times, but the first pass evicts each tile
    before its second: graded as the starter's loop is."""
    body = """#include <algorithm>
#include "ring.hpp"
namespace ring {
void compute(double* block, std::size_t elems, int passes, std::size_t tile_elems) {
  if (passes > 0) update(block, elems);
  for (std::size_t start = 0; start < elems; start += tile_elems) {
    const std::size_t count = std::min(tile_elems, elems - start);
    for (int p = 1; p < passes; ++p) update(block + start, count);
  }
}
}  // namespace ring
"""
    code, out, text = check(4, "copy", written_copy(4, tmp_path, "ring_compute.cpp", body))
    assert code == labs.EXIT_NOT_DONE, text


LAB5_REGION = """#include <algorithm>
#include <utility>
#include "heat.hpp"
namespace heat {
int thread_level() { return MPI_THREAD_FUNNELED; }
double step(Grid& g, const lab::World& w) {
  double change = 0;
#pragma omp parallel reduction(max : change)
  {
EXCHANGE
#pragma omp for schedule(static)
    for (int r = 1; r <= g.rows; ++r) change = std::max(change, relax_row(g, r));
  }
  std::swap(g.u, g.next);
  return change;
}
}  // namespace heat
"""


EARLY = "relaxed a row next to a halo while exchange_halos was still filling that halo"
OFF_MAIN = "on a thread other than MPI's main one under MPI_THREAD_FUNNELED"


@pytest.mark.parametrize(
    "exchange, code, says",
    [
        ("#pragma omp master\n    exchange_halos(g, w);", 1, EARLY),
        ("#pragma omp single nowait\n    exchange_halos(g, w);", 1, EARLY),
        ("#pragma omp single\n    exchange_halos(g, w);", 1, OFF_MAIN),
        ("#pragma omp master\n    exchange_halos(g, w);\n#pragma omp barrier", 0, ""),
        ("#pragma omp single\n    exchange_halos(g, w);", 0, "MPI_THREAD_SERIALIZED"),
    ],
    ids=[
        "master-without-barrier",
        "single-nowait",
        "single-with-its-barrier",
        "master-then-barrier",
        "single-serialized",
    ],
)
def test_lab5_rows_next_to_a_halo_relaxed_while_it_is_exchanged_are_not_correct(tmp_path, exchange, code, says):
    """The exchange inside the parallel region with nothing making the loop wait for it: the grid
    usually verifies (the exchange is quick), but the race probe slows its first exchanges and the
    harness's relax_row sees the first or last row relaxed while exchange_halos runs. With a
    barrier after `omp master` it is right. `omp single` (its barrier included) lets any thread
    call MPI, which FUNNELED forbids: over the race probe's 1000 quick steps some other thread than
    the main one takes the single (19 and 22 times in two checks on the 2-core EPYC VM). Under
    MPI_THREAD_SERIALIZED, which lets any one thread at a time call MPI, the same single is right."""
    source = LAB5_REGION.replace("EXCHANGE", exchange)
    if says == "MPI_THREAD_SERIALIZED":
        source = source.replace("MPI_THREAD_FUNNELED", says)
    dest = written_copy(5, tmp_path, "heat_step.cpp", source)
    got, out, text = check(5, "copy", dest)
    assert got == code, text
    assert says in text


@pytest.mark.parametrize("tiles, code", [("tile_elems / 8", 1), ("tile_elems", 0)], ids=["eighth", "halves-of-a-tile"])
def test_lab4_tiles_much_smaller_than_asked_are_not_correct_a_tile_in_two_calls_is_done(tmp_path, tiles, code):
    """Tiles 1/8 of the tile asked (tile_elems read as bytes): every span within the tile, but the
    loop comes back to its data after an eighth of it. Each tile updated in two calls a pass, all
    passes over the tile in a row, comes back after one tile: right."""
    body = f"""#include <algorithm>
#include "ring.hpp"
namespace ring {{
void compute(double* block, std::size_t elems, int passes, std::size_t tile_elems) {{
  const std::size_t t = std::max<std::size_t>(2, {tiles}), half = t / 2;
  for (std::size_t start = 0; start < elems; start += t) {{
    const std::size_t count = std::min(t, elems - start);
    for (int p = 0; p < passes; ++p)
      for (std::size_t s = 0; s < count; s += half) update(block + start + s, std::min(half, count - s));
  }}
}}
}}  // namespace ring
"""
    got, out, text = check(4, "copy", written_copy(4, tmp_path, "ring_compute.cpp", body))
    assert got == code, text
    if code:
        assert "1/8 of the tile asked for" in text


def test_lab5_halos_exchanged_after_the_loop_are_stale_and_not_correct(tmp_path):
    """The exchange after the loop, before the swap: each step relaxes with the halos of the step
    before. The grid starts uneven inside, so the rows next to the ranks' halos change from the
    first step and the stale halos show in the grid at 1x2 (a grid starting at 0 hid them: the
    heat had not reached the ranks' boundary in 40 steps)."""
    loop = LAB5_LOOP + "\n  exchange_halos(g, w);"
    dest = solution_copy(5, tmp_path, "heat_step.cpp", "  exchange_halos(g, w);\n", "")
    text = (dest / "heat_step.cpp").read_text()
    assert LAB5_LOOP in text
    (dest / "heat_step.cpp").write_text(text.replace(LAB5_LOOP, loop))
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert "the grid differs from the one-process computation" in text


LAB5_LEFT_OUT = "of the ranks' rows unrelaxed in some steps"
LAB5_HALO = "asked relax_row() for rows that are not the rank's"


@pytest.mark.parametrize(
    "loop, said, row",
    [
        ("for (int r = 1; r < g.rows; ++r)", LAB5_LEFT_OUT, "row g.rows = "),
        ("for (int r = 2; r <= g.rows; ++r)", LAB5_LEFT_OUT, "row 1 on rank 0"),
        ("for (int r = 0; r <= g.rows; ++r)", LAB5_HALO, "row 0, for one"),
        ("for (int r = 1; r <= g.rows + 1; ++r)", LAB5_HALO, "are not the rank's"),
    ],
    ids=["one-row-short", "from-the-second-row", "from-the-top-halo", "into-the-bottom-halo"],
)
def test_lab5_a_loop_over_the_wrong_rows_is_named(tmp_path, loop, said, row):
    """A loop one row short (the rank's last or first row left out) made the grid differ, and the
    grade said only that; a loop that takes in a halo row (row 0 or g.rows + 1) read outside the
    grid and crashed ("a crash", which did not say why). The harness counts each row's relaxes
    over the timed steps, and relax_row() counts a row that is not the rank's and reads nothing:
    the grade names the row and the loop that relaxes every row once."""
    dest = solution_copy(5, tmp_path, "heat_step.cpp", "for (int r = 1; r <= g.rows; ++r)", loop)
    code, out, text = check(5, "copy", dest)
    assert code == 1, text
    assert said in text and row in text, text
    assert "for (int r = 1; r <= g.rows; ++r)" in text


def test_lab4_a_prediction_is_graded_against_pxq_advise_and_never_changes_the_grade(tmp_path, monkeypatch):
    """The copy's prediction.toml, made before its runs: each answer graded against pxq advise's
    model (pxq's own ring declared with the lab's work, on ceilings kept for this machine: here a
    fixed set, so the model's answers are known), the lab's measured times beside it; a wrong
    prediction leaves a done copy done. The class table shows the score."""
    fixed = Path(__file__).resolve().parents[1] / "python" / "data" / "ceilings-test-cpu.json"
    kept = {**json.loads(fixed.read_text()), "format": ceilings.FORMAT, "key": caches.key(envinfo.machine())}
    (tmp_path / "ceilings.json").write_text(json.dumps(kept))
    monkeypatch.setenv("PXQ_CEILINGS", str(tmp_path / "ceilings.json"))
    dest = written_copy(
        4, tmp_path, "ring_compute.cpp", (labs.folder(labs.get("4")) / "solution" / "ring_compute.cpp").read_text()
    )
    (dest / "prediction.toml").write_text(
        '[untiled]\nbinds = "l1"\nseconds = 1000\n[tiled]\nbinds = "L2"\n'
        '[compare]\nhybrid_vs_flat = "alike"\nknee = "none"\n'
    )
    buf = io.StringIO()
    code, out, record = labs.grade(labs.get("4"), "copy", dest, 1, Console(file=buf, width=2000))
    text = buf.getvalue()
    assert code == 0, text  # the code's grade: a wrong forecast is graded, not failed
    block = out.prediction
    assert block["state"] == "graded" and block["of"] == 6, block
    by = {a["question"]: a for a in block["answers"]}
    assert by["untiled.binds"]["model"] == "memory" and by["untiled.binds"]["agrees"] is False
    assert by["tiled.binds"]["model"] == "l2" and by["tiled.binds"]["agrees"] is True
    assert by["untiled.seconds"]["agrees"] is False and by["untiled.seconds"]["measured"] > 0
    assert by["tiled.seconds"]["yours"] is None and by["tiled.seconds"]["measured"] > 0
    assert by["compare.knee"]["agrees"] is True  # the kept bus grew 1.6x from 1 to 2 cores: no knee
    assert (
        f"prediction (prediction.toml): {block['agree']} of 6 answers agree with pxq advise (ceilings of test CPU"
        in text
    )
    assert record["prediction"] == block
    # The first graded prediction is sealed in the copy, as the file held it: later checks grade it.
    assert block["sealed_now"] and "sealed now (.pxq-prediction.json)" in text
    first = sealing.first(dest, prediction.schema(labs.get("4").predict))
    assert first.answers is not None and first.answers["untiled"] == {"binds": "l1", "seconds": 1000}


LAB4_LOOP = """  for (std::size_t start = 0; start < elems; start += tile_elems) {
    const std::size_t count = std::min(tile_elems, elems - start);
    for (int p = 0; p < passes; ++p) update(block + start, count);
  }"""


def test_lab4_half_the_passes_tiled_is_not_done(tmp_path):
    """The first half of the passes tile by tile, the rest over the whole block: every update
    still verifies, but the lesson (every pass runs over a tile in cache) is half done."""
    split = (
        "  const int half = passes / 2;\n"
        "  for (std::size_t start = 0; start < elems; start += tile_elems) {\n"
        "    const std::size_t count = std::min(tile_elems, elems - start);\n"
        "    for (int p = 0; p < half; ++p) update(block + start, count);\n"
        "  }\n"
        "  for (int p = half; p < passes; ++p) update(block, elems);"
    )
    code, _, text = check(4, "copy", solution_copy(4, tmp_path, "ring_compute.cpp", LAB4_LOOP, split))
    assert code == labs.EXIT_NOT_DONE, text
    assert "covers the whole 32M block" in text


def test_lab4_tiles_walked_from_the_last_are_done(tmp_path):
    """Right but different: the tiles in reverse order (each element's updates unchanged)."""
    backwards = (
        "  const std::size_t n = (elems + tile_elems - 1) / tile_elems;\n"
        "  for (std::size_t k = n; k-- > 0;) {\n"
        "    const std::size_t start = k * tile_elems;\n"
        "    const std::size_t count = std::min(tile_elems, elems - start);\n"
        "    for (int p = 0; p < passes; ++p) update(block + start, count);\n"
        "  }"
    )
    code, _, text = check(4, "copy", solution_copy(4, tmp_path, "ring_compute.cpp", LAB4_LOOP, backwards))
    assert code == 0, text


def test_lab5_one_region_whose_master_thread_exchanges_is_done(tmp_path):
    """Right but different: one parallel region per step, the halos exchanged by the master
    thread inside it (allowed under FUNNELED) between barriers, the loop shared with `omp for`."""
    step = """  exchange_halos(g, w);
  double change = 0;
#pragma omp parallel for reduction(max : change) schedule(static)
  for (int r = 1; r <= g.rows; ++r) change = std::max(change, relax_row(g, r));
  std::swap(g.u, g.next);"""
    region = """  double change = 0;
#pragma omp parallel
  {
#pragma omp master
    exchange_halos(g, w);
#pragma omp barrier
#pragma omp for reduction(max : change) schedule(static)
    for (int r = 1; r <= g.rows; ++r) change = std::max(change, relax_row(g, r));
#pragma omp master
    std::swap(g.u, g.next);
#pragma omp barrier
  }"""
    code, _, text = check(5, "copy", solution_copy(5, tmp_path, "heat_step.cpp", step, region))
    assert code == 0, text
    assert "all 2 threads relaxed rows (MPI_THREAD_FUNNELED)" in text


@LAB2
def test_lab2_a_node_s_ranks_in_one_column_are_not_done(tmp_path):
    """q x 1 blocks where the grid allows 2 x 2: as many messages leave the node as row-major's."""
    body = (
        "  const int q = ranks_per_node;\n"
        "  if (rows % q != 0) return {rank / cols, rank % cols};\n"
        "  const int node = rank / q, slot = rank % q;\n"
        "  return {(node / cols) * q + slot, node % cols};"
    )
    code, _, text = check(2, "copy", _lab2_copy(tmp_path, body))
    assert code == labs.EXIT_NOT_DONE, text
    assert "the grid allows" in text
