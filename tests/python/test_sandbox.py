"""The sandbox a student's code runs in (pxq.teaching.sandbox), tried as a hostile student's code
would try it: shell commands run through Sandbox.wrap and pxq.core.procs.run, as `pxq lab
check` runs a copy's build and runs. Each attempt must fail and leave the host as it was:
escaping through /proc, signalling a process outside, reading secrets (/etc/shadow, a key in
HOME, another process's environment, the driver's own environment), detached processes
outliving the check, a fork bomb, memory and output floods, a child holding the output open,
the network. bubblewrap is installed by ./pxq build; these tests need it (and root for the
cgroup checks, as CI has)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pxq.core import procs
from pxq.teaching import copies, reaper, sandbox


@pytest.fixture
def box(tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    with sandbox.Sandbox([copy]) as b:
        yield b


def inside(box: sandbox.Sandbox, tmp_path: Path, script: str, timeout: float = 60, **kw) -> procs.Finished:
    scratch = tmp_path / f"scratch-{uuid.uuid4().hex[:6]}"
    scratch.mkdir()
    argv = box.wrap(["/bin/bash", "-c", script], scratch, cpu_seconds=kw.pop("cpu", 60))
    return procs.run(argv, dict(os.environ), uuid.uuid4().hex, timeout, **kw)


def host_pids_with(text: str) -> list[int]:
    """Host processes whose command line holds TEXT."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if text.encode() in Path(f"/proc/{entry.name}/cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_bubblewrap_confines_here():
    assert sandbox._probe() is None, sandbox._probe()


def test_no_process_of_the_host_is_visible_and_none_can_be_signalled(box, tmp_path):
    mark = f"pxq-outside-{uuid.uuid4().hex[:8]}"
    outside = subprocess.Popen(["/bin/bash", "-c", f"exec -a {mark} sleep 300"])
    try:
        done = inside(
            box,
            tmp_path,
            # (not kill -1: should the sandbox ever lose its PID namespace, that would end every
            # process of the user running the tests)
            f"ls /proc | grep -c '^[0-9]'; grep -l {mark} /proc/[0-9]*/cmdline; kill -9 {outside.pid}; echo after",
        )
        assert done.returncode != 0 or "after" in done.output
        assert outside.poll() is None, "a process outside the sandbox was killed"
        assert mark not in done.output.replace(f"exec -a {mark}", "")
        assert int(done.output.split()[0]) < 10, done.output  # its own few processes, not the host's
    finally:
        outside.kill()
        outside.wait()


def test_writing_through_proc_root_reaches_nothing_outside(box, tmp_path):
    target = tmp_path / "escaped"
    done = inside(box, tmp_path, f"for p in /proc/[0-9]*; do echo x > $p/root{target} 2>/dev/null; done; echo tried")
    assert "tried" in done.output
    assert not target.exists(), "a file was written outside the copy through /proc/PID/root"


def test_secrets_of_the_host_are_not_readable(box, tmp_path, monkeypatch):
    home = Path(os.path.expanduser("~"))
    key = f"pxq-secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("PXQ_TEST_TOKEN_SECRET", key)  # the driver's environment
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key)
    other = subprocess.Popen(["sleep", "300"], env={**os.environ, "OTHER_SECRET": key})
    try:
        done = inside(
            box,
            tmp_path,
            f"cat /etc/shadow; cat /etc/gshadow; ls -a {home}; cat {home}/.ssh/* {home}/.bash_history; env; "
            "cat /proc/*/environ; cat /proc/*/cmdline; echo end",
        )
    finally:
        other.kill()
        other.wait()
    assert "end" in done.output
    assert key not in done.output.replace(f"PXQ_TEST_TOKEN_SECRET={key}", "")
    assert "AWS_SECRET_ACCESS_KEY" not in done.output and "OTHER_SECRET" not in done.output
    assert "root:" not in done.output  # /etc/shadow's first line
    if Path("/etc/shadow").exists():
        assert "cat: /etc/shadow: No such file" not in done.output  # masked, not merely missing


def test_what_a_student_s_code_may_write_is_its_copy_and_its_scratch(box, tmp_path):
    copy = box.writable[0]
    done = inside(box, tmp_path, f"echo ok > {copy}/mine && echo x > {tmp_path}/theirs; echo x > /usr/x; echo end")
    assert (copy / "mine").read_text() == "ok\n"
    assert not (tmp_path / "theirs").exists() and "end" in done.output


def test_detached_processes_do_not_outlive_the_command(box, tmp_path):
    mark = f"pxq-detached-{uuid.uuid4().hex[:8]}"
    start = time.monotonic()
    done = inside(
        box,
        tmp_path,
        f"(setsid bash -c 'exec -a {mark} sleep 500' &); (nohup bash -c 'exec -a {mark} sleep 500' >/dev/null 2>&1 &); "
        f"bash -c 'exec -a {mark} sleep 500' & disown; echo started",
    )
    assert "started" in done.output and time.monotonic() - start < 15
    time.sleep(0.5)
    assert host_pids_with(mark) == [], "a detached process outlived the sandbox"


def test_a_child_holding_the_output_open_neither_hangs_the_check_nor_lives_on(box, tmp_path):
    mark = f"pxq-holder-{uuid.uuid4().hex[:8]}"
    start = time.monotonic()
    done = inside(box, tmp_path, f"(setsid bash -c 'exec -a {mark} sleep 500' &); echo result", timeout=120)
    assert done.returncode == 0 and "result" in done.output
    assert time.monotonic() - start < 15, "the check waited for a detached child holding its output"
    assert host_pids_with(mark) == []


def test_a_fork_bomb_is_held_and_ends_with_the_command(box, tmp_path):
    before = len([e for e in os.scandir("/proc") if e.name.isdigit()])
    start = time.monotonic()
    done = inside(box, tmp_path, "bomb() { bomb | bomb & }; bomb; sleep 2; echo survived", timeout=60)
    assert not done.timed_out and time.monotonic() - start < 30
    time.sleep(0.5)
    after = len([e for e in os.scandir("/proc") if e.name.isdigit()])
    assert after < before + 20, f"{after - before} processes left behind"
    if box.how.startswith("cgroup"):
        assert "fork: retry" in done.output or "Resource temporarily unavailable" in done.output


def test_memory_and_output_floods_are_stopped(tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    small = sandbox.Limits(memory_bytes=128 << 20, output_bytes=1 << 20)
    with sandbox.Sandbox([copy], limits=small) as box:
        done = inside(box, tmp_path, "x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo ${#x}")
        assert "400000000" not in done.output  # killed or refused before it held 400 MB
        flood = inside(box, tmp_path, "yes flood", timeout=60, max_output=box.limits.output_bytes)
        assert flood.overflowed and not flood.timed_out and len(flood.output) <= 1 << 20


def test_no_network_but_its_own_loopback(box, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        done = inside(box, tmp_path, f"(echo hi > /dev/tcp/127.0.0.1/{port}) 2>&1; ip -o link 2>/dev/null; echo end")
        with pytest.raises(BlockingIOError):
            listener.accept()
        assert "end" in done.output
    finally:
        listener.close()


def test_the_environment_keeps_only_what_a_run_needs():
    env = {"PATH": "/usr/bin", "OMPI_MCA_x": "1", "OMP_NUM_THREADS": "2", "PXQ_RUN_ID": "r", "HOME": "/root"}
    env |= {"AWS_SECRET_ACCESS_KEY": "k", "SSH_AUTH_SOCK": "/tmp/agent", "GITHUB_TOKEN": "t"}
    from pxq.teaching import enter

    assert set(enter.kept(env)) == {"PATH", "OMPI_MCA_x", "OMP_NUM_THREADS", "PXQ_RUN_ID"}


def test_the_record_says_what_the_sandbox_guarantees(box):
    d = box.describe()
    assert {"pid", "ipc", "uts", "mount", "net"} <= set(d["namespaces"]) and d["capabilities"] == "none"
    assert d["bounded_by"] in ("cgroup v1", "cgroup v2", "rlimits") and d["pids"] == box.limits.pids


def test_the_cgroups_of_a_driver_killed_with_9_are_removed_by_the_next_check(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("cgroups are made as root")
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); from pxq.teaching import sandbox; "
        "b = sandbox.Sandbox([]).__enter__(); print(b._cgroups.groups, flush=True); time.sleep(60)"
    )
    child = subprocess.Popen(
        ["python3", "-c", code, str(Path(sandbox.__file__).parents[2])], stdout=subprocess.PIPE, text=True
    )
    groups = eval(child.stdout.readline(), {"PosixPath": Path})  # noqa: S307 - our own output
    child.kill()
    child.wait()
    assert groups and all(g.exists() for g in groups)
    with sandbox.Sandbox([]):
        pass
    assert not any(g.exists() for g in groups)


def test_a_copy_reaching_past_the_exercise_is_named_line_by_line(tmp_path):
    (tmp_path / "ring_compute.cpp").write_text(
        "// comments may say exit( and getenv freely\n"
        "#include <cstdlib>\n"
        'void f() { const char* n = std::getenv("PXQ_LAB_NONCE"); std::printf("LAB-RESULT %s {}", n); }\n'
        "void g() { std::_Exit(0); }\n"
        '__attribute__((constructor)) void h() { asm("nop"); }\n'
    )
    found = copies.reaches(tmp_path, ["ring_compute.cpp"])
    text = "\n".join(found)
    assert "ring_compute.cpp:1" not in text  # the comment is not read
    for fragment in ("ring_compute.cpp:3: `getenv`", "`PXQ_`", "`LAB-RESULT`", "ring_compute.cpp:4: `_Exit(`"):
        assert fragment in text, text
    assert "ring_compute.cpp:5: `__attribute__((constructor`" in text and "`asm`" in text
    (tmp_path / "ring_compute.cpp").write_text(
        '#include <cstdio>\nvoid f() { std::printf("%d\\n", 1); asm volatile("" ::: "memory"); }\n'
    )
    assert copies.reaches(tmp_path, ["ring_compute.cpp"]) == []  # printing and a compiler barrier are fine


def test_the_reaper_forwards_signals_to_its_child_and_takes_those_after_it_quietly():
    """mpirun ends a failed job's ranks with SIGTERM, repeated; the reaper wrapping a rank
    forwards one to its program, and one arriving after the program was reaped (while it ends the
    rest) is not forwarded to a pid that is gone: no traceback, the program's own death reported."""
    for _ in range(5):
        p = subprocess.Popen(
            [sys.executable, reaper.__file__, "sleep", "5"], stderr=subprocess.PIPE, start_new_session=True
        )
        time.sleep(0.3)  # the program started
        while p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGTERM)
            time.sleep(0.0005)
        err = p.stderr.read().decode() if p.stderr else ""
        assert "Traceback" not in err and p.returncode == -signal.SIGTERM, err
