"""Child processes tied to the driver's life.

Every MPI job, probe and benchmark the driver starts goes through `run()`:
- it runs in a session of its own, tagged with `PXQ_RUN_ID` in its environment, which every
  process it starts inherits (mpirun, orted daemons started by the launch agent, ranks);
- a timeout, an interrupt or any exception stops the whole tree: SIGTERM, then SIGKILL, to
  the session and to every process carrying the tag (a stopped rank included);
- a watchdog process (`python -m pxq.core.watchdog`) holds the read end of a pipe from the driver.
  Should the driver die without cleaning up (SIGKILL), the pipe closes and the watchdog
  stops every tracked tree and removes its temporary folders.

SIGTERM and SIGHUP to the driver are turned into `Interrupted`, a KeyboardInterrupt, so they
unwind exactly like Ctrl-C; `main()` exits with 128 + the signal number.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

RUN_TAG = "PXQ_RUN_ID"
DRIVER_TAG = "PXQ_DRIVER_PID"  # the driver a process was started for (pxq.core.leftovers)


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP reached the driver."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_interrupted)


def tagged_pids(run_id: str) -> list[int]:
    """Processes whose environment carries PXQ_RUN_ID=run_id (not this process)."""
    return pids_with_env(RUN_TAG, run_id)


def environments() -> Iterator[tuple[int, list[bytes]]]:
    """(pid, its environment's KEY=VALUE entries) for every process this one may read, itself
    left out."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                yield int(entry.name), f.read().split(b"\0")
        except OSError:
            continue


def pids_with_env(key: str, value: str) -> list[int]:
    """Processes whose environment carries key=value (not this process)."""
    needle = f"{key}={value}".encode()
    return [pid for pid, env in environments() if needle in env]


def _signal_all(pgid: int | None, run_id: str, sig: int) -> int:
    """Sends sig to the session's group and every tagged process; how many were there."""
    hit = 0
    if pgid is not None:
        try:
            os.killpg(pgid, sig)
            hit += 1
        except (ProcessLookupError, PermissionError):
            pass
    for pid in tagged_pids(run_id):
        try:
            os.kill(pid, sig)
            hit += 1
        except (ProcessLookupError, PermissionError):
            pass
    return hit


def exited(proc: subprocess.Popen) -> bool:
    """Whether proc has ended (reaped here, its code in proc.returncode), without Popen's own
    lock: a signal that lands between Popen.poll()'s taking that lock and its `try` leaves the
    lock held for good, and any later Popen.wait() would then block forever."""
    if proc.returncode is not None:
        return True
    try:
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
    except ChildProcessError:  # reaped already, its status lost to an interrupt: say it failed
        proc.returncode = -1
        return True
    if pid != proc.pid:
        return False
    proc.returncode = os.waitstatus_to_exitcode(status)
    return True


def reap(proc: subprocess.Popen, timeout: float | None = None) -> bool:
    """Waits up to `timeout` seconds (None: as long as it takes) for proc to end, as `exited`
    does (never through Popen's lock); whether it ended."""
    if timeout is None:
        while not exited(proc):
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(proc.pid, 0)
                if pid == proc.pid:
                    proc.returncode = os.waitstatus_to_exitcode(status)
        return True
    deadline = time.monotonic() + timeout
    while not exited(proc):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(0.02, left))
    return True


def stop_tree(pgid: int | None, run_id: str, grace: float = 2.0, proc: subprocess.Popen | None = None) -> None:
    """SIGTERM, up to `grace` seconds, then SIGKILL until nothing of the run is left."""
    if _signal_all(pgid, run_id, signal.SIGTERM) == 0:
        return
    # Stopped processes only see SIGTERM once continued.
    _signal_all(pgid, run_id, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not tagged_pids(run_id) and (proc is None or exited(proc)):
            return
        time.sleep(0.05)
    for _ in range(50):
        _signal_all(pgid, run_id, signal.SIGKILL)
        if proc is not None:
            reap(proc, 0.1)
        if not tagged_pids(run_id):
            return
        time.sleep(0.05)


class _Watchdog:
    """One per driver process, started on first use."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.fd: int | None = None

    def _start(self) -> None:
        r, w = os.pipe()
        env = dict(os.environ)
        here = str(Path(__file__).resolve().parents[2])  # the folder holding the pxq package
        env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.pop(RUN_TAG, None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pxq.core.watchdog"],
            stdin=r,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
        )
        os.close(r)
        self.fd = w

    def ensure(self) -> None:
        if self.fd is None or (self.proc is not None and exited(self.proc)):
            self._start()

    def send(self, message: dict) -> None:
        self.ensure()
        assert self.fd is not None
        try:
            os.write(self.fd, (json.dumps(message) + "\n").encode())
        except OSError:
            self.fd = None


_watchdog = _Watchdog()


def watch(run_id: str, pgid: int | None) -> None:
    _watchdog.send({"op": "watch", "run_id": run_id, "pgid": pgid})


def unwatch(run_id: str) -> None:
    _watchdog.send({"op": "done", "run_id": run_id})


@contextlib.contextmanager
def workdir(prefix: str = "pxq-run-", base: str | None = None, tidy_base: bool = False) -> Iterator[Path]:
    """A temporary folder (in `base`, else the temporary folder) removed when the block ends,
    or by the watchdog should the driver die first; `tidy_base` removes `base` too once no
    other run's folder is in it. Open MPI splits some paths at white space, so a TMPDIR holding
    any falls back to /tmp."""
    if base is None:
        base = tempfile.gettempdir()
        if any(c.isspace() for c in base) and os.path.isdir("/tmp"):
            base = "/tmp"
    path = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base)  # its driver named: pxq.core.leftovers
    _watchdog.send({"op": "tmp", "path": path})
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _watchdog.send({"op": "tmpdone", "path": path})
        if tidy_base:
            with contextlib.suppress(OSError):
                os.rmdir(base)


SHM = "/dev/shm"


@contextlib.contextmanager
def shm_workdir() -> Iterator[Path | None]:
    """A folder of the run's own in the memory-backed file system (None where there is none
    to write in), for the MPI library's shared-memory segments: an interrupted job's segments
    then go with the folder, whichever process died first."""
    if not (os.path.isdir(SHM) and os.access(SHM, os.W_OK | os.X_OK)):
        yield None
        return
    with workdir("pxq-shm-", base=SHM) as path:
        yield path


@dataclass
class Finished:
    returncode: int  # -1 when the run was killed for its timeout or its output
    output: str  # stdout and stderr together (empty when not captured)
    seconds: float
    timed_out: bool
    overflowed: bool = False  # it printed more than its output limit and was stopped


PR_SET_PDEATHSIG = 1


def _tether() -> Callable[[], None] | None:
    """What the child runs before it becomes the launcher: SIGTERM to it when the driver dies,
    however it dies (kill -9 included), so mpirun stops its ranks even if the watchdog went
    with the driver. None where the C library has no prctl (not Linux)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def tether() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the driver died before the signal was set: stop at once
            os.kill(os.getpid(), signal.SIGTERM)

    return tether


# Once the launcher has exited, how long what it printed may take to drain before whatever
# still holds its output (a detached child) is stopped.
LINGER = 2.0


def _collect(proc: subprocess.Popen, run_id: str, timeout: float | None, limit: int | None) -> tuple[bytes, str]:
    """What the process tree prints until its output closes: (bytes, "") when it did, with
    "timeout" when the timeout passed first, "overflow" when it printed more than LIMIT bytes.
    A tree whose launcher has exited while something it left holds the output open is
    stopped after LINGER seconds, so a detached child never keeps the caller waiting."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    chunks: list[bytes] = []
    size = 0
    start = time.monotonic()
    ended: float | None = None  # when the launcher exited
    stopped: float | None = None  # when what it left was stopped
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if timeout is not None and now - start >= timeout:
                return b"".join(chunks), "timeout"
            if ended is None and exited(proc):
                ended = now
            if stopped is None and ended is not None and now - ended >= LINGER:
                stop_tree(proc.pid, run_id, grace=0.5)
                stopped = time.monotonic()
            if stopped is not None and now - stopped >= LINGER:
                return b"".join(chunks), ""  # held by a process outside the tag: the output ends here
            wait = 0.2 if timeout is None else max(0.0, min(0.2, timeout - (now - start)))
            if not sel.select(timeout=wait):
                continue
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not data:
                return b"".join(chunks), ""
            if limit is not None and size + len(data) > limit:
                chunks.append(data[: limit - size])
                return b"".join(chunks), "overflow"
            chunks.append(data)
            size += len(data)


def run(
    argv: list[str],
    env: dict[str, str],
    run_id: str,
    timeout: float | None,
    capture: bool = True,
    on_line: Callable[[str], None] | None = None,
    max_output: int | None = None,
) -> Finished:
    """Runs argv in its own session, tagged with run_id; stops the whole tree on timeout or
    any exception (interrupts included), then re-raises the exception. With `on_line` (and no
    timeout) the output is captured line by line and each line handed to it as it comes; with
    `max_output`, a tree that prints more bytes is stopped (Finished.overflowed)."""
    env = dict(env)
    env[RUN_TAG] = run_id
    env[DRIVER_TAG] = str(os.getpid())
    _watchdog.ensure()  # before the child exists: nothing it starts is ever unwatched
    start = time.monotonic()
    streamed = on_line is not None
    try:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE if capture else None,
            stderr=subprocess.STDOUT if capture else None,
            text=streamed,
            errors="replace" if streamed else None,
            env=env,
            start_new_session=True,
            preexec_fn=_tether(),
        )
    except OSError as e:
        return Finished(127, f"cannot start {argv[0]}: {e.strerror}\n", 0.0, False)
    watch(run_id, proc.pid)
    try:
        if on_line is not None and proc.stdout is not None:
            seen = []
            for line in proc.stdout:
                seen.append(line)
                on_line(line)
            reap(proc)
            if tagged_pids(run_id):
                stop_tree(proc.pid, run_id, grace=0.5)
            return Finished(proc.returncode, "".join(seen), time.monotonic() - start, False)
        if not capture:
            if not reap(proc, timeout):
                stop_tree(proc.pid, run_id, grace=0.5, proc=proc)
                reap(proc)
                return Finished(-1, "", time.monotonic() - start, True)
            if tagged_pids(run_id):
                stop_tree(proc.pid, run_id, grace=0.5)
            return Finished(proc.returncode, "", time.monotonic() - start, False)
        raw, why = _collect(proc, run_id, timeout, max_output)
        output = raw.decode("utf-8", errors="replace")
        if why:
            stop_tree(proc.pid, run_id, grace=0.5, proc=proc)
            reap(proc)
            return Finished(-1, output, time.monotonic() - start, why == "timeout", why == "overflow")
        # The launcher is gone; nothing it started may outlive it.
        if tagged_pids(run_id):
            stop_tree(proc.pid, run_id, grace=0.5)
        reap(proc)
        return Finished(proc.returncode, output, time.monotonic() - start, False)
    except BaseException:
        stop_tree(proc.pid, run_id, grace=1.0, proc=proc)
        reap(proc)
        raise
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        unwatch(run_id)
