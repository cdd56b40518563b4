"""Faults injected into real runs: exit codes, the records written, and nothing left behind
(processes or temporary folders). The `driver` fixture fails the test if any process the
driver started is still alive at the end."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ROOT, build_mpirun, fake_launcher, leftovers, tagged

from pxq.machine.mpi import launcher_flavour

LONG = ["--", "--block", "4M", "--iterations", "100000"]  # minutes unless stopped
SHORT = ["--", "--block", "1M", "--iterations", "3", "--passes", "2"]


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_a_rank_killed_mid_sweep_is_a_failed_run(driver):
    res = driver.results / "ring.jsonl"
    proc = driver.start(
        [
            "sweep",
            "ring",
            "--layouts",
            "1x2",
            "--modes",
            "flat",
            "--repeat",
            "2",
            "--results",
            str(res),
            "--",
            "--block",
            "4M",
            "--iterations",
            "5000",  # seconds a run (about 5 s here): the ranks outlive the wait for them (0.5 s)
        ]
    )
    os.kill(driver.wait_for_ranks(2)[0], signal.SIGKILL)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 3, out
    recs = lines(res)
    assert sorted(r["status"] for r in recs) == ["error", "ok"]
    failed = next(r for r in recs if r["status"] == "error")
    assert failed["error"]["returncode"] != 0 and failed["driver"]["sweep_key"]
    assert "1 failed run(s)" in out
    assert driver.temp_left() == []
    rep = driver.run(["report", str(res)])
    assert rep.returncode == 3 and "failed run" in rep.stdout


def test_a_stopped_rank_times_out_and_is_killed(driver):
    res = driver.results / "ring.jsonl"
    proc = driver.start(["run", "ring", "--layout", "1x2", "--timeout", "6", "--results", str(res), *LONG])
    os.kill(driver.wait_for_ranks(2)[1], signal.SIGSTOP)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 3, out
    recs = lines(res)
    assert [r["status"] for r in recs] == ["timeout"]
    assert recs[0]["error"]["reason"] == "killed after its timeout"
    assert driver.temp_left() == []


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signals_to_the_driver_stop_everything(driver, sig, code):
    res = driver.results / "ring.jsonl"
    proc = driver.start(["run", "ring", "--layout", "2x1", "--results", str(res), *LONG])
    driver.wait_for_ranks(2)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == code, out
    assert "interrupted by" in out
    assert not res.exists()  # an interrupted run has no record
    assert leftovers(driver.tag) == []
    assert driver.temp_left() == []


def test_sigkill_to_the_driver_leaves_the_watchdog_to_clean_up(driver):
    proc = driver.start(["run", "ring", "--layout", "2x1", "--results", str(driver.results / "r.jsonl"), *LONG])
    driver.wait_for_ranks(2)
    proc.kill()
    proc.wait()
    assert leftovers(driver.tag, wait=15) == []
    assert driver.temp_left() == []


def _watchdog_of(pid: int) -> int | None:
    """The watchdog the driver PID started (its child)."""
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"pxq.core.watchdog" in (entry / "cmdline").read_bytes():
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                    return int(entry.name)
        except (OSError, IndexError):
            continue
    return None


@pytest.mark.parametrize("watchdog_too", [False, True])
def test_sigkill_to_the_driver_s_whole_group_stops_everything(driver, watchdog_too):
    """kill -9 of the driver's process group, as an out-of-memory kill does (and of its watchdog
    too): mpirun and the ranks die with the driver, and what is left on disk (the run folder,
    the shared-memory folder) is removed by the next pxq command, which says so."""
    proc = subprocess.Popen(
        driver.argv(["run", "ring", "--layout", "1x2", "--results", str(driver.results / "r.jsonl"), *LONG]),
        env=driver.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    driver.wait_for_ranks(2)
    dog = _watchdog_of(proc.pid)
    assert dog is not None
    os.killpg(proc.pid, signal.SIGKILL)
    if watchdog_too:
        os.kill(dog, signal.SIGKILL)
    proc.wait()
    assert leftovers(driver.tag, wait=15) == []
    if watchdog_too:
        left = [n for n in driver.temp_left() if n.startswith(f"pxq-run-{proc.pid}-")]
        assert left, "the run folder went although nothing was left to remove it"
        after = driver.run(["report", str(driver.results / "r.jsonl"), "--format", "csv"])
        assert "killed before its end left" in after.stderr and f"pxq-run-{proc.pid}-" in after.stderr
    assert driver.temp_left() == []
    assert not any(n.startswith(f"pxq-shm-{proc.pid}-") for n in os.listdir("/dev/shm"))


def shm_segments(pids: list[int]) -> set[str]:
    """The files in /dev/shm the processes have mapped (names of unlinked ones end in
    " (deleted)")."""
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    fields = line.split(maxsplit=5)
                    if len(fields) == 6 and fields[5].startswith("/dev/shm/"):
                        found.add(fields[5].strip())
        except OSError:
            continue
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_shared_memory_segments_go_with_the_run(driver, sig):
    # Open MPI keeps its segments named in /dev/shm until mpirun cleans up, so ranks that die
    # first (or a driver killed outright) would leave them: each run keeps them in a folder of
    # its own, removed with the run. MPICH unlinks its segments once they are mapped. Either
    # way nothing new is left in /dev/shm (driver.faults runs alone).
    before = set(os.listdir("/dev/shm"))
    proc = driver.start(["run", "ring", "--layout", "1x2", "--results", str(driver.results / "r.jsonl"), *LONG])
    ranks = driver.wait_for_ranks(2)
    segments: set[str] = set()
    if launcher_flavour(build_mpirun()) == "open-mpi":
        deadline = time.monotonic() + 60  # past MPI_Init
        while not all(shm_segments([r]) for r in ranks) and time.monotonic() < deadline:
            time.sleep(0.2)
        segments = shm_segments(ranks)
        assert segments, "the ranks map no shared memory in /dev/shm"
        folders = {str(Path(s).parent) for s in segments}
        assert len(folders) == 1 and Path(folders.pop()).name.startswith("pxq-shm-"), segments
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert leftovers(driver.tag, wait=15) == []
    deadline = time.monotonic() + 15  # SIGKILL: the watchdog removes the folder
    while set(os.listdir("/dev/shm")) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sorted(set(os.listdir("/dev/shm")) - before) == []
    assert [p for p in segments if os.path.lexists(p) or os.path.lexists(Path(p).parent)] == []
    assert driver.temp_left() == []


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_to_the_wrapper_reach_the_driver(driver, sig, code):
    proc = driver.start(
        ["run", "ring", "--layout", "1x2", "--results", str(driver.results / "r.jsonl"), *LONG],
        wrapper=True,
        env={"PXQ_NO_INSTALL": "1"},
    )
    driver.wait_for_ranks(2, timeout=120)
    with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
        assert b"-m\0pxq" in f.read()  # the wrapper exec'd the driver: same PID
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == code, out
    assert leftovers(driver.tag) == []
    assert driver.temp_left() == []


def test_resume_reruns_the_failures_and_then_passes(driver, tmp_path):
    # An mpirun that fails its first two calls, then is the real one.
    count = tmp_path / "calls"
    fake = fake_launcher(
        tmp_path / "flaky-mpirun",
        f"n=$(cat {count} 2>/dev/null || echo 0)\necho $((n + 1)) > {count}\n"
        f"[ $n -lt 2 ] && {{ echo 'flaky: start-up failed' >&2; exit 1; }}\n"
        'exec "$REAL" "$@"',
    )
    res = driver.results / "ring.jsonl"
    args = [
        "sweep",
        "ring",
        "--layouts",
        "1x2,1x1x2",
        "--modes",
        "flat,hybrid",
        "--repeat",
        "2",
        "--results",
        str(res),
        *SHORT,
    ]
    first = driver.run(args, env={"PXQ_MPIRUN": str(fake)})
    assert first.returncode == 3, first.stdout + first.stderr
    assert sorted(r["status"] for r in lines(res)) == ["error", "error", "ok", "ok"]
    again = driver.run([*args[: -len(SHORT)], "--resume", *SHORT], env={"PXQ_MPIRUN": str(fake)})
    assert again.returncode == 0, again.stdout + again.stderr
    assert "2 of 4 runs already verified" in again.stdout
    assert "NO" not in again.stdout and "failed run" not in again.stdout
    assert len(lines(res)) == 6  # the two failures stay in the file, superseded
    rep = driver.run(["report", str(res)])
    assert rep.returncode == 0, rep.stdout + rep.stderr


def test_a_sweep_whose_file_another_process_damaged_reports_its_runs(driver):
    """Another process writes a line that is no record into the sweep's file while it runs: the
    sweep still reports the runs it made (exit 0) and warns, naming pxq repair."""
    res = driver.results / "ring.jsonl"
    args = ["sweep", "ring", "--layouts", "1x1", "--modes", "flat", "--repeat", "3", "--results", str(res)]
    proc = driver.start([*args, "--", "--block", "4M", "--iterations", "2000", "--passes", "2"])  # a second a run
    deadline = time.monotonic() + 120
    while not (res.exists() and res.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.05)  # the sweep's first record is in: the file is the sweep's
    with open(res, "a") as f:
        f.write("this is no record\n")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    assert "are not records" in out and "pxq repair" in out
    row = next(x for x in out.splitlines() if "│ ring" in x)
    assert row.split("│")[6].strip() == "3"


def test_two_sweeps_into_one_file_at_once_keep_apart(driver):
    res = driver.results / "ring.jsonl"
    args = ["sweep", "ring", "--layouts", "1x1", "--modes", "flat", "--repeat", "3", "--results", str(res), *SHORT]
    a, b = driver.start(args), driver.start(args)
    out_a, _ = a.communicate(timeout=300)
    out_b, _ = b.communicate(timeout=300)
    assert a.returncode == 0 and b.returncode == 0, out_a + out_b
    for out in (out_a, out_b):
        row = next(x for x in out.splitlines() if "│ ring" in x)
        assert row.split("│")[6].strip() == "3"  # runs: its own three only
    recs = lines(res)
    assert len(recs) == 6 and len({r["driver"]["sweep_id"] for r in recs}) == 2


def test_the_same_sweep_twice_is_two_sweeps(driver):
    res = driver.results / "ring.jsonl"
    args = ["sweep", "ring", "--layouts", "1x1", "--modes", "flat", "--repeat", "2", "--results", str(res), *SHORT]
    for _ in range(2):
        out = driver.run(args)
        assert out.returncode == 0, out.stdout + out.stderr
        row = next(x for x in out.stdout.splitlines() if "│ ring" in x)
        assert row.split("│")[6].strip() == "2"


def test_launcher_start_up_failure_is_a_run_failure_not_bad_input(driver, tmp_path):
    """An MPI launcher that fails to start the job is a failed run (exit 3, an error record
    with its message); a program that is no MPI launcher at all is bad input (exit 2, named)."""
    fake = fake_launcher(tmp_path / "broken-mpirun", 'echo "mpirun: cannot start the daemons" >&2\nexit 1')
    res = driver.results / "ring.jsonl"
    out = driver.run(["run", "ring", "--results", str(res), *SHORT], env={"PXQ_MPIRUN": str(fake)})
    assert out.returncode == 3, out.stdout + out.stderr
    (rec,) = lines(res)
    assert rec["status"] == "error" and "cannot start the daemons" in rec["error"]["output_tail"]
    for program in ("/bin/false", "/bin/true"):
        out = driver.run(["run", "ring", "--results", str(res), *SHORT], env={"PXQ_MPIRUN": program})
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"PXQ_MPIRUN={program}" in out.stderr and "names no MPI launcher" in out.stderr
        assert "Traceback" not in out.stderr and len(lines(res)) == 1


def test_a_crash_after_the_record_is_not_ok(driver, tmp_path):
    # An mpirun that runs the job, then fails: the app's ok record must not stand.
    fake = fake_launcher(tmp_path / "crashy-mpirun", '"$REAL" "$@"\nexit 139')
    res = driver.results / "ring.jsonl"
    out = driver.run(["run", "ring", "--results", str(res), *SHORT], env={"PXQ_MPIRUN": str(fake)})
    assert out.returncode == 3, out.stdout + out.stderr
    recs = lines(res)
    assert len(recs) == 1 and recs[0]["status"] == "error" and "time" in recs[0]


@pytest.mark.parametrize("weird", ["with space", "dollar $(touch PWNED)", 'quote " and `id`'])
def test_weird_tmpdir_on_virtual_nodes(driver, tmp_path, weird):
    tmpdir = tmp_path / weird
    tmpdir.mkdir()
    res = driver.results / "ring.jsonl"
    out = driver.run(["run", "ring", "--layout", "2x1", "--results", str(res), *SHORT], env={"TMPDIR": str(tmpdir)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert [r["status"] for r in lines(res)] == ["ok"]
    assert not any(p.name == "PWNED" for p in Path.cwd().iterdir())
    assert list(tmpdir.iterdir()) == []


def test_weird_checkout_path_on_virtual_nodes(driver, tmp_path):
    checkout = tmp_path / 'pxq checkout $(touch PWNED) "q'
    shutil.copytree(ROOT / "drivers", checkout / "drivers")
    res = driver.results / "ring.jsonl"
    env = {"PYTHONPATH": str(checkout / "drivers" / "pxq")}
    out = driver.run(["run", "ring", "--layout", "2x1", "--results", str(res), *SHORT], env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert [r["status"] for r in lines(res)] == ["ok"]
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


def _tiny_tmpfs(path: Path) -> None:
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.fail("the full-disk test mounts a tmpfs: run the tests as root (CI does)")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "pxq-full", str(path)], check=True)


def _fill(path: Path, leave: int) -> None:
    with open(path / "filler", "wb") as f:
        try:
            f.write(b"\0" * (1 << 20))
        except OSError:
            pass
    stat = os.statvfs(path)
    free = stat.f_bavail * stat.f_frsize
    if free > leave:
        with open(path / "filler2", "wb") as f:
            f.write(b"\0" * (free - leave))


def test_a_full_disk_leaves_the_results_file_whole(driver, tmp_path):
    disk = tmp_path / "disk"
    _tiny_tmpfs(disk)
    try:
        res = disk / "ring.jsonl"
        ok = driver.run(["run", "ring", "--results", str(res), *SHORT])
        assert ok.returncode == 0, ok.stdout + ok.stderr
        # Blank lines (which readers skip) up to a page boundary: the next record needs a new
        # page of the filesystem, and there will be none.
        with open(res, "ab") as f:
            f.write(b"\n" * (-res.stat().st_size % 4096))
        before = res.read_bytes()
        _fill(disk, leave=0)
        full = driver.run(["run", "ring", "--results", str(res), *SHORT])
        assert full.returncode == 3, full.stdout + full.stderr
        assert "No space left on device" in full.stderr and "Traceback" not in full.stderr
        assert res.read_bytes() == before  # no partial line
        # The C++ writer on its own: the same promise (a new file: no page with room left in it).
        fresh = disk / "fresh.jsonl"
        app = subprocess.run(
            [
                str(Path(driver.env["PXQ_BUILD_DIR"]) / "bin" / "pxq-ring"),
                "--block",
                "1M",
                "--iterations",
                "2",
                "--json",
                str(fresh),
            ],
            capture_output=True,
            text=True,
            env={**driver.env, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
        )
        assert app.returncode == 3 and "No space left on device" in app.stderr, app.stdout + app.stderr
        assert not fresh.exists() or fresh.read_bytes() == b""
        rep = driver.run(["report", str(res)])
        assert rep.returncode == 0, rep.stdout + rep.stderr
    finally:
        subprocess.run(["umount", str(disk)])


def test_an_interrupted_tune_leaves_the_previous_results_whole(driver, tmp_path):
    """Ctrl-C in the middle of `pxq tune`: the benchmark's earlier results file is as it was (the
    new one is written aside and replaces it only when the benchmark has finished)."""
    out = driver.results / "tiles.json"
    before = '{"context": {"host": "earlier"}, "benchmarks": []}\n'
    out.write_text(before)
    args = ["tune", "ring", "--tiles", "4K,64K", "--threads", "1", "--repeat", "50", "--min-time", "0.5"]
    proc = driver.start([*args, "--out", str(out), "--profile", str(tmp_path / "profile.json")])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("pxq-bench-tiling" in cmd for _, cmd in tagged(driver.tag)):
        time.sleep(0.1)
    time.sleep(2.0)  # the benchmark has opened its output and written into it
    proc.send_signal(signal.SIGINT)
    text, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, text
    assert out.read_text() == before
    assert sorted(p.name for p in driver.results.iterdir()) == ["tiles.json"]
    assert leftovers(driver.tag) == []
