"""Each rank of a student's program runs under this (run by path, standard library only):

    python3 reaper.py PROGRAM ARGS...

It becomes its rank's subreaper, runs the program, and when the program ends it ends every
process the program left (a child in a session of its own, a double fork: orphans come back to
the nearest subreaper), then exits as the program did. So no process of a student's rank outlives
it, and none keeps the rank's output open, which would keep mpirun, and the check, waiting."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def children(me: int) -> list[int]:
    """The processes whose parent is ME."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            out.append(int(entry.name))
    return out


def end_the_rest(me: int) -> None:
    """SIGKILL to every child until none is left, reaping each (orphans of the killed keep
    coming back here)."""
    for _ in range(1000):
        left = children(me)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.01)
            except ChildProcessError:
                break


def main(argv: list[str]) -> int:
    if not argv:
        print("pxq reaper: usage: reaper.py PROGRAM ARGS...", file=sys.stderr)
        return 125
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("pxq reaper: cannot become a subreaper", file=sys.stderr)
        return 125
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            print(f"pxq reaper: cannot run {argv[0]}: {e.strerror}", file=sys.stderr)
            os._exit(127)
    running = [True]  # until the program is reaped: its pid may then be gone, or another's

    def forward(number: int, _frame: object) -> None:
        """A signal to the reaper goes to its program (mpirun ends a failed job's ranks with
        SIGTERM, repeated): while it runs, never after."""
        if running[0]:
            with contextlib.suppress(ProcessLookupError):  # exited, not yet reaped
                os.kill(pid, number)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, forward)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            running[0] = False
            break
        except InterruptedError:
            continue
    end_the_rest(os.getpid())
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        return 128 + number
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
