"""The confinement of a student's code: `pxq lab check` and `pxq lab grade` build and run a
student's copy inside bubblewrap (bwrap, installed by ./pxq build). What it guarantees, and how
each guarantee is tested (tests/labs/test_sandbox.py runs hostile copies through it):

- **Its own processes only.** New PID, IPC, UTS and network namespaces and a session of its
  own: the copy sees no process of the host (its /proc is its own), cannot signal one, cannot
  reach another process's files through /proc/PID/root or read its environment, cannot push
  keystrokes into the teacher's terminal, and has no network but its own loopback.
- **Only the files the build and run need.** An empty root holding the system's programs and
  libraries (/usr), /etc without what is not world-readable (/etc/shadow, host keys), /sys
  read-only, the lab's harness and pxq's programs read-only, and private /tmp, /dev/shm and
  HOME. The copy and the run's scratch folder are the only places it can write. The teacher's
  home, other students' copies, the lab's solution and pxq's builds of it are not there.
- **No privilege.** Every capability dropped (root included), no new privileges on exec, and an
  environment holding only the MPI, OpenMP and locale settings (no tokens, no keys).
- **Bounded.** A cgroup (v2, or v1's pids and memory hierarchies) caps its processes and
  memory; where none can be made, resource limits stand in (processes for a user other than
  root, memory per process). Every process also has limits on CPU time, file size and open
  files; the output a run prints is capped (pxq.core.procs).
- **Gone when the check ends.** The sandbox's first process is its PID namespace's init: when
  the command ends, the kernel ends every process left inside (double forks and setsid
  included), so a detached child neither lives on nor holds the output open. Should the
  driver die, bubblewrap ends the sandbox with it; the cgroup is emptied and removed after
  every check.

What it does not do: the harness runs in the student's process, so the program's own claims
(its result line) are only as good as that process; the grade therefore rests on what pxq
checks outside it (pxq.teaching.harness: the answer recomputed by pxq's own build)."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError

INSTALL = "install bubblewrap (apt-get install bubblewrap; ./pxq build installs it), or add --unconfined"
ENTER = Path(__file__).with_name("enter.py")
REAPER = Path(__file__).with_name("reaper.py")  # each confined rank runs under it
PREFIX = "pxq-lab-"  # the sandboxes' cgroups: pxq-lab-PID-HEX, PID the driver that made it
# The system's top-level folders a build needs, bound read-only (or re-made as the links they are).
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")


def _memory_default() -> int:
    """Half the machine's memory, at most 8 GiB: room for a compiler and a lab's ranks."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    return int(min(8 << 30, total // 2))


@dataclass(frozen=True)
class Limits:
    """What a sandbox may use. CPU seconds are per process and per command (a build step gets
    longer than a run)."""

    pids: int = 512  # processes and threads at once: a fork bomb stops here
    memory_bytes: int = field(default_factory=_memory_default)
    file_bytes: int = 2 << 30  # the largest file a process may write
    nofile: int = 4096
    output_bytes: int = 16 << 20  # what one command may print (more ends it: pxq.core.procs)


def _bwrap_base(network: bool) -> list[str]:
    """The namespaces and privileges every confined command runs with."""
    out = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "pxq-lab"]
    out += ["--unshare-cgroup-try", "--new-session", "--die-with-parent", "--cap-drop", "ALL"]
    if not network:
        out.append("--unshare-net")
    return out


def _system_binds() -> list[str]:
    out = []
    for name in SYSTEM:
        top = Path("/") / name
        if top.is_symlink():
            out += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            out += ["--ro-bind", str(top), str(top)]
    return out


@functools.cache
def _probe() -> str | None:
    """Why bubblewrap cannot confine here (None when it can)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    argv = [*_bwrap_base(False), *_system_binds(), "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap does not start ({e})"
    if done.returncode != 0:
        return f"bwrap cannot make a sandbox here ({done.stderr.strip()[:200]})"
    return None


def check() -> None:
    """Refuses (exit 2) when a student's code cannot be confined, naming the fix."""
    why = _probe()
    if why:
        raise InputError(f"a student's code runs confined, and {why}: {INSTALL}")


@functools.cache
def _unreadable(top: str, most: int = 20000) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files and folders under TOP that not every user of this machine may read (no
    read permission for others): what a student's code must not see. (files, folders)."""
    files, folders = [], []
    seen = 0
    for here, dirs, names in os.walk(top):
        keep = []
        for d in dirs:
            path = os.path.join(here, d)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and (st.st_mode & 0o005) != 0o005:
                folders.append(path)
            elif stat.S_ISDIR(st.st_mode):
                keep.append(d)
        dirs[:] = keep
        for n in names:
            seen += 1
            path = os.path.join(here, n)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o004:
                files.append(path)
        if seen > most:
            break
    return tuple(files), tuple(folders)


def _cgroup_paths() -> list[tuple[str, Path]]:
    """Where this process's sandboxes' cgroups go: ("v2", its cgroup2 folder) where the unified
    tree's root delegates pids and memory; else ("v1", folder) for each of the v1 pids and
    memory hierarchies mounted, under this process's own cgroup there."""
    mounts: list[tuple[str, str, str]] = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4:
                mounts.append((parts[1], parts[2], parts[3]))
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                own[c] = path
    for point, kind, _ in mounts:
        if kind == "cgroup2":
            try:
                delegated = (Path(point) / "cgroup.subtree_control").read_text().split()
            except OSError:
                continue
            if {"pids", "memory"} <= set(delegated):
                return [("v2", Path(point))]
    found = []
    for controller in ("pids", "memory"):
        for point, kind, options in mounts:
            if kind == "cgroup" and controller in options.split(","):
                found.append((controller, Path(point) / own.get(controller, "/").lstrip("/")))
                break
    return found


class _Cgroups:
    """The sandbox's cgroups: made on entry, emptied and removed on exit."""

    def __init__(self, limits: Limits) -> None:
        self.kind = ""  # "v2", "v1", or "" where none could be made
        self.controllers: set[str] = set()  # what they bound: pids, memory
        self.groups: list[Path] = []
        name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            for controller, parent in _cgroup_paths():
                _sweep(parent)
                group = parent / name
                group.mkdir()
                self.groups.append(group)
                if controller in ("v2", "pids"):
                    (group / "pids.max").write_text(str(limits.pids))
                if controller in ("v2", "memory"):
                    memory = "memory.max" if controller == "v2" else "memory.limit_in_bytes"
                    (group / memory).write_text(str(limits.memory_bytes))
                    swap = "memory.swap.max" if controller == "v2" else "memory.memsw.limit_in_bytes"
                    with contextlib.suppress(OSError):  # no swap accounting: the memory limit alone
                        (group / swap).write_text("0" if controller == "v2" else str(limits.memory_bytes))
                self.kind = "v2" if controller == "v2" else "v1"
                self.controllers |= {"pids", "memory"} if controller == "v2" else {controller}
        except OSError:  # not root, or no delegation: the resource limits stand in
            self.remove()
            self.kind, self.controllers, self.groups = "", set(), []

    def procs_files(self) -> list[str]:
        return [str(g / "cgroup.procs") for g in self.groups]

    def members(self) -> list[int]:
        out: set[int] = set()
        for g in self.groups:
            with contextlib.suppress(OSError, ValueError):
                out.update(int(p) for p in (g / "cgroup.procs").read_text().split())
        return sorted(out)

    def remove(self) -> None:
        """Ends every process left in the cgroups, then removes them."""
        for g in self.groups:
            with contextlib.suppress(OSError):
                (g / "cgroup.kill").write_text("1")
        for _ in range(200):
            left = self.members()
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if not left:
                break
            time.sleep(0.01)
        for g in self.groups:
            for _ in range(100):
                try:
                    g.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # a member not reaped yet
                    time.sleep(0.01)


def _sweep(parent: Path) -> None:
    """Removes the sandbox cgroups a driver that died (kill -9) left in PARENT, ending what is
    in them."""
    with contextlib.suppress(OSError):
        for group in parent.glob(f"{PREFIX}*"):
            pid = group.name[len(PREFIX) :].split("-")[0]
            if not pid.isdigit() or Path(f"/proc/{pid}").exists():
                continue
            dead = _Cgroups.__new__(_Cgroups)
            dead.groups = [group]
            dead.remove()


@dataclass
class Sandbox:
    """A student's sandbox for one check: WRITABLE (the copy) is bound read-write, READABLE
    (the harness, pxq's programs) read-only with HIDDEN masked inside it (the solution), and
    nothing else of the teacher's files. Use it as a context manager: its cgroups live for
    the check."""

    writable: list[Path] = field(default_factory=list)
    readable: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)
    network: bool = False  # loopback only unless True (runs on other hosts need the network)
    limits: Limits = field(default_factory=Limits)
    _cgroups: _Cgroups | None = None

    def __enter__(self) -> Sandbox:
        self._cgroups = _Cgroups(self.limits)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cgroups is not None:
            self._cgroups.remove()
            self._cgroups = None

    @property
    def how(self) -> str:
        """How its processes and memory are bounded: "cgroup v2", "cgroup v1" or "rlimits"."""
        if self._cgroups is not None and self._cgroups.kind:
            return f"cgroup {self._cgroups.kind}"
        return "rlimits"

    def describe(self) -> dict[str, Any]:
        """What the sandbox guarantees, for the grade's record."""
        return {
            "namespaces": ["pid", "ipc", "uts", "mount"] + ([] if self.network else ["net"]),
            "capabilities": "none",
            "bounded_by": self.how,
            "pids": self.limits.pids,
            "memory_bytes": self.limits.memory_bytes,
            "file_bytes": self.limits.file_bytes,
            "output_bytes": self.limits.output_bytes,
        }

    def _limits(self, cpu_seconds: float) -> list[str]:
        out = [
            f"cpu={max(1, int(cpu_seconds))}",
            f"fsize={self.limits.file_bytes}",
            "core=0",
            f"nofile={self.limits.nofile}",
        ]
        controllers = self._cgroups.controllers if self._cgroups is not None else set()
        if "pids" not in controllers and os.geteuid() != 0:  # root is not held by RLIMIT_NPROC
            out.append(f"nproc={_user_processes() + self.limits.pids}")
        if "memory" not in controllers:
            out.append(f"data={self.limits.memory_bytes}")
        return out

    def wrap(self, argv: list[str], scratch: Path, more: Iterable[Path] = (), cpu_seconds: float = 3600) -> list[str]:
        """ARGV run inside the sandbox, with SCRATCH as its writable temporary folder (and
        HOME), MORE further writable folders, each process held to CPU_SECONDS of CPU time."""
        scratch = Path(scratch).resolve()
        out = [sys.executable, str(ENTER)]
        if self._cgroups is not None:
            for procs in self._cgroups.procs_files():
                out += ["--cgroup", procs]
        for limit in self._limits(cpu_seconds):
            out += ["--limit", limit]
        out += ["--"]
        out += _bwrap_base(self.network)
        out += _system_binds()
        out += ["--ro-bind", "/etc", "/etc"]
        files, folders = _unreadable("/etc")
        for f in files:
            out += ["--ro-bind", "/dev/null", f]
        for d in folders:
            out += ["--tmpfs", d]
        out += ["--ro-bind-try", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm"]
        out += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
        for path in dict.fromkeys(Path(p).resolve() for p in self.readable):
            if path.exists():
                out += ["--ro-bind", str(path), str(path)]
        for path in dict.fromkeys(Path(p).resolve() for p in self.hidden):
            if path.is_dir():
                out += ["--tmpfs", str(path)]
            elif path.exists():
                out += ["--ro-bind", "/dev/null", str(path)]
        for path in dict.fromkeys([*(Path(p).resolve() for p in [*self.writable, *more]), scratch]):
            out += ["--bind", str(path), str(path)]
        if not self.network:
            # Loopback is the only interface left: Open MPI's TCP (between virtual nodes) and
            # its runtime must use it, which they skip by default.
            for key in ("btl_tcp", "oob_tcp"):
                if not any(os.environ.get(f"OMPI_MCA_{key}_if_{w}") for w in ("include", "exclude")):
                    out += ["--setenv", f"OMPI_MCA_{key}_if_include", "lo"]
        out += ["--setenv", "TMPDIR", str(scratch), "--setenv", "HOME", str(scratch), "--chdir", str(scratch)]
        return out + ["--"] + [str(a) for a in argv]


def python() -> str:
    """The system's Python 3, which a sandbox has (its /usr), for the reaper."""
    return "/usr/bin/python3" if Path("/usr/bin/python3").exists() else (shutil.which("python3") or "python3")


def _user_processes() -> int:
    """The processes this user runs now (RLIMIT_NPROC counts them all)."""
    uid, n = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                n += entry.stat().st_uid == uid
    return n
