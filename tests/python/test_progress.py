"""Progress off a terminal (a pipe, a CI log): a line per step and a heartbeat while one runs long,
never minutes of silence; on a terminal, Rich's own bar."""

import io
import re
import time

from rich.console import Console

from pxq.core import progress


def _plain() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_off_a_terminal_each_step_is_a_line_and_a_long_step_a_heartbeat(monkeypatch):
    monkeypatch.setattr(progress, "THROTTLE_S", 0.0)
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.2)
    console, out = _plain()
    with progress.Steps(console=console) as bar:
        task = bar.add_task("sweep", total=2)
        bar.update(task, description="ring 1x2 flat rep 1")
        bar.advance(task)
        bar.update(task, description="ring 1x2 tiled rep 1")
        time.sleep(1.3)  # one long step: heartbeats, not silence
        bar.advance(task)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[0/2] ring 1x2 flat rep 1 (")
    assert any(ln.startswith("[1/2] ring 1x2 tiled rep 1") for ln in lines)
    beats = [ln for ln in lines if ln.endswith("still running")]
    assert len(beats) >= 2 and "ring 1x2 tiled rep 1" in beats[0]
    assert any(ln.startswith("[2/2] ") for ln in lines)  # the last step is always said


def test_fast_steps_are_throttled_and_one_long_call_beats(monkeypatch):
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.2)
    console, out = _plain()
    with progress.Steps(console=console) as bar:
        task = bar.add_task("tune", total=100)
        for i in range(99):
            bar.update(task, advance=1, description=f"bench {i}")
    assert 1 <= len(out.getvalue().splitlines()) <= 3  # throttled: not a hundred lines
    console, out = _plain()
    with progress.running(console, "pingpong probe on layout 2x1: running"):
        time.sleep(0.7)
    lines = out.getvalue().splitlines()
    assert lines[0] == "pingpong probe on layout 2x1: running" and "still running (" in lines[-1]


def test_on_a_terminal_it_is_rich_s_bar_with_no_plain_lines():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with progress.Steps(console=console, transient=True) as bar:
        task = bar.add_task("x", total=1)
        bar.update(task, description="step")
        bar.advance(task)
    assert "[0/1] step" not in out.getvalue()


def _two_steps(first: tuple[str, float], second: tuple[str, float]) -> list[str]:
    """The plain lines of a two-step task, each step (description, seconds) long."""
    console, out = _plain()
    with progress.Steps(console=console) as bar:
        task = bar.add_task("reproduce", total=2)
        for text, seconds in (first, second):
            bar.update(task, description=text)
            time.sleep(seconds)
            bar.advance(task)
    return out.getvalue().splitlines()


def test_a_step_line_counts_the_step_s_own_time_beside_the_whole_task_s(monkeypatch):
    """reproduce's line once said '[3/5] placement (605 s): still running' for a study that took
    113 s: the seconds were the whole run's. A step's line counts from when its step began."""
    monkeypatch.setattr(progress, "THROTTLE_S", 0.0)
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.3)
    lines = _two_steps(("first study", 1.6), ("second study", 0.7))
    second = [ln for ln in lines if "second study" in ln and ln.endswith("still running")]
    assert second, lines
    step, whole = (int(x) for x in re.search(r"\((\d+) s; (\d+) s in all\)", second[0]).groups())
    assert step < whole and whole >= 2, second[0]
