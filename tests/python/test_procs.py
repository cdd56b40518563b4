import os
import subprocess
import sys
import textwrap
from pathlib import Path

from pxq.core import procs

DRIVERS = Path(__file__).resolve().parents[2] / "drivers" / "pxq"

# A driver interrupted while its launcher runs, with Popen's waitpid lock left held: what a
# signal landing between Popen.poll()'s taking that lock and its `try` leaves behind (CPython
# runs signal handlers as the call returns). Popen.wait() would then block forever.
INTERRUPTED_WITH_LOCK_HELD = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time, uuid
    from pxq.core import procs

    class Stuck(subprocess.Popen):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self._waitpid_lock.acquire()

    procs.subprocess.Popen = Stuck
    procs.install_signal_handlers()
    signal.signal(signal.SIGALRM, lambda n, f: os.kill(os.getpid(), signal.SIGINT))
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    run_id = uuid.uuid4().hex
    start = time.monotonic()
    try:
        procs.run(["sleep", "120"], dict(os.environ), run_id, {timeout})
    except procs.Interrupted:
        print(f"interrupted after {{time.monotonic() - start:.1f}} s; left: {{procs.tagged_pids(run_id)}}")
    """
)


def _child(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(DRIVERS))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_an_interrupt_stops_the_run_even_with_popens_lock_left_held():
    for timeout in ("None", "100.0"):  # captured output, and a run with a timeout
        done = _child(INTERRUPTED_WITH_LOCK_HELD.format(timeout=timeout))
        assert done.returncode == 0, done.stderr
        assert "interrupted after" in done.stdout and "left: []" in done.stdout, done.stdout


def test_an_interrupt_stops_an_uncaptured_run_with_popens_lock_left_held():
    code = INTERRUPTED_WITH_LOCK_HELD.format(timeout="None").replace(
        "dict(os.environ), run_id, None)", "dict(os.environ), run_id, 100.0, capture=False)"
    )
    assert "capture=False" in code
    done = _child(code)
    assert done.returncode == 0, done.stderr
    assert "interrupted after" in done.stdout and "left: []" in done.stdout, done.stdout


def test_exited_and_reap_read_the_exit_code_without_popens_lock():
    proc = subprocess.Popen(["sh", "-c", "sleep 0.2; exit 3"])
    proc._waitpid_lock.acquire()  # held for good: only a path around it can see the end
    assert not procs.exited(proc)
    assert not procs.reap(proc, 0.05)
    assert procs.reap(proc, 10)
    assert proc.returncode == 3
    assert procs.exited(proc)
    killed = subprocess.Popen(["sleep", "60"])
    killed.kill()
    assert procs.reap(killed) and killed.returncode == -9
