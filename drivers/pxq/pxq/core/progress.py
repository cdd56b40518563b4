"""Progress that is never silent for more than a few seconds, on a terminal or off one.

On a terminal: Rich's live bar or spinner. Off one (a pipe, a CI log, `> file`), where Rich
draws nothing until the end: a plain line per step (throttled to one every THROTTLE_S while
steps come fast) and, while one step runs long, a line every HEARTBEAT_S saying what is still
running and for how long."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from rich.progress import Progress

THROTTLE_S = 2.0  # off a terminal: at most one step line this often while steps come fast
HEARTBEAT_S = 10.0  # off a terminal: a line at least this often while one step runs


class _Heartbeat:
    """A daemon thread that prints `line()` whenever nothing was said for HEARTBEAT_S."""

    def __init__(self, console: Any, line: Any) -> None:
        self.console, self.line, self.every = console, line, HEARTBEAT_S
        self.last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def said(self) -> None:
        self.last = time.monotonic()

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self.every)):
            if time.monotonic() - self.last >= self.every:
                text = self.line()
                if text:
                    self.console.print(text, markup=False, highlight=False)
                self.said()

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Steps(Progress):
    """rich.progress.Progress that, off a terminal, prints a line per step (a new description or
    a step done), at most one per THROTTLE_S, and a heartbeat while a step runs long."""

    def __init__(self, *columns: Any, **kw: Any) -> None:
        super().__init__(*columns, **kw)
        self._plain = not self.console.is_terminal
        self._said_at = -THROTTLE_S
        self._said_text: str | None = None
        self._current: Any = None
        self._since: dict[Any, float] = {}  # when each task's description (its step) last changed
        self._beat = _Heartbeat(self.console, self._still) if self._plain else None

    def _line(self, task_id: Any) -> str:
        """'[done/total] step (S s)': S the step's own time; the whole task's beside it once they differ."""
        task = self._tasks[task_id]
        total = f"/{task.total:g}" if task.total else ""
        whole = task.elapsed or 0.0
        step = time.monotonic() - self._since.get(task_id, time.monotonic() - whole)
        took = f"{step:.0f} s" if round(step) == round(whole) else f"{step:.0f} s; {whole:.0f} s in all"
        return f"[{task.completed:g}{total}] {task.description} ({took})"

    def _still(self) -> str | None:
        if self._current is None or self._current not in self._tasks:
            return None
        return f"{self._line(self._current)}: still running"

    def _say(self, task_id: Any, force: bool = False) -> None:
        self._current = task_id
        now = time.monotonic()
        text = self._tasks[task_id].description
        if not force and (text == self._said_text or now - self._said_at < THROTTLE_S):
            return
        self._said_at, self._said_text = now, text
        self.console.print(self._line(task_id), markup=False, highlight=False)
        if self._beat is not None:
            self._beat.said()

    def update(self, task_id: Any, **kw: Any) -> None:
        if "description" in kw and kw["description"] != self._tasks[task_id].description:
            self._since[task_id] = time.monotonic()
        super().update(task_id, **kw)
        if self._plain:
            self._say(task_id)

    def advance(self, task_id: Any, advance: float = 1) -> None:
        super().advance(task_id, advance)
        if self._plain:
            task = self._tasks[task_id]
            self._say(task_id, force=task.total is not None and task.completed >= task.total)

    def __enter__(self) -> Steps:
        super().__enter__()
        if self._beat is not None:
            self._beat.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._beat is not None:
            self._beat.__exit__(*exc)
        super().__exit__(*exc)


@contextlib.contextmanager
def running(console: Any, what: str) -> Iterator[None]:
    """One long step: a spinner on a terminal; off one, a line when it starts and one every
    HEARTBEAT_S while it runs."""
    if getattr(console, "is_terminal", False):
        with console.status(what):
            yield
        return
    t0 = time.monotonic()
    console.print(what, markup=False, highlight=False)
    with _Heartbeat(console, lambda: f"{what}: still running ({time.monotonic() - t0:.0f} s)"):
        yield
