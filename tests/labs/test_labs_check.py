"""The teaching labs end to end (CTest labs.check): every lab's starter and solution build with
CMake, run under MPI and verify exactly; `check` tells the solution from the starter by what
the code does (tiles, threads, kernels, copies, round trips, on-node messages), never by a
speed threshold; a student's copy that does not build exits 4, one with a wrong result exits 1.

PYTHONPATH and PXQ_BUILD_DIR are set by CTest."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from pxq import labs

NUMBERS = [1, 2, 3, 4, 5, 6]


def check(number: int, which: str, copy: Path | None = None) -> tuple[int, labs.Outcome | None, str]:
    buf = io.StringIO()
    console = Console(file=buf, width=2000)
    code, out = labs.check(labs.get(str(number)), which, copy, 1, console)
    return code, out, buf.getvalue()


@pytest.mark.parametrize("number", NUMBERS)
def test_solution_verifies_and_is_not_the_starter(number):
    code, out, text = check(number, "solution")
    assert code == 0, text
    assert "correct: every run verified exactly" in text
    assert out is not None and not out.starter_like, out.code_note
    assert out.effect is None or out.effect.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert ("the effect shows" in text) or ("no clear effect" in text and "why that can happen here" in text)


@pytest.mark.parametrize("number", NUMBERS)
def test_starter_builds_verifies_and_is_the_naive_version(number):
    code, out, text = check(number, "begin")
    assert code == 0, text
    assert out is not None and out.starter_like, out.code_note


def test_what_the_starter_and_solution_do_differs_as_the_labs_say():
    """The signatures behind starter_like, lab by lab, from the programs' own reports."""
    _, begin, _ = check(4, "begin")
    _, solution, _ = check(4, "solution")
    assert begin.data["span"] == begin.data["block"]  # one update() over the whole block
    assert solution.data["span"] == 256 * 1024  # one tile per call
    _, begin, _ = check(2, "begin")
    _, solution, _ = check(2, "solution")
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


def test_the_command_line_checks_a_started_copy(tmp_path):
    run = [sys.executable, "-m", "pxq", "lab"]
    start = subprocess.run([*run, "start", "2", "--dir", str(tmp_path / "w")], capture_output=True, text=True)
    assert start.returncode == 0, start.stderr
    assert "decomp.cpp: LAB markers on line(s)" in start.stdout
    again = subprocess.run([*run, "start", "2", "--dir", str(tmp_path / "w")], capture_output=True, text=True)
    assert again.returncode == 2 and "not empty" in again.stdout + again.stderr
    ck = subprocess.run(
        [*run, "check", "2", "--dir", str(tmp_path / "w"), "--repeat", "1"], capture_output=True, text=True, timeout=900
    )
    assert ck.returncode == 0, ck.stdout + ck.stderr
    assert "row-major cells" in ck.stdout and "no clear effect" in ck.stdout
    assert (tmp_path / "w" / "build" / "lab-stencil").is_file()
