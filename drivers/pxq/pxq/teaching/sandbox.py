"""The confinement of a student's code: `pxq lab check` and `pxq lab grade` build and run a
student's copy inside bubblewrap (bwrap, installed by ./pxq build), where the whole file
system is read-only but for the copy itself and the run's scratch folder, /dev/shm is private,
and there is no network but loopback. A copy that writes outside its folder fails there, and
nothing it does reaches the teacher's files or the net.

What confinement does not do: the harness runs in the student's process, so code written to
defeat it (calling the harness's internals) can still forge a result; it can only forge it
inside the sandbox. The teacher reads the code, as for any submission."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pxq.core.errors import InputError

INSTALL = "install bubblewrap (apt-get install bubblewrap; ./pxq build installs it), or add --unconfined"


@functools.cache
def _probe() -> str | None:
    """Why bubblewrap cannot confine here (None when it can)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
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


@dataclass
class Sandbox:
    """Where a confined command may write: these folders (bound read-write), all else read-only."""

    writable: list[Path] = field(default_factory=list)
    network: bool = False  # loopback only unless True (runs on other hosts need the network)

    def wrap(self, argv: list[str], scratch: Path, more: Iterable[Path] = ()) -> list[str]:
        """ARGV run inside the sandbox, with SCRATCH as its writable temporary folder."""
        out = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm"]
        for path in dict.fromkeys([*self.writable, scratch, *more]):
            real = str(Path(path).resolve())
            out += ["--bind", real, real]
        if not self.network:
            out.append("--unshare-net")
            # Loopback is the only interface left: Open MPI's TCP (between virtual nodes) and
            # its runtime must use it, which they skip by default.
            for key in ("btl_tcp", "oob_tcp"):
                if not any(os.environ.get(f"OMPI_MCA_{key}_if_{w}") for w in ("include", "exclude")):
                    out += ["--setenv", f"OMPI_MCA_{key}_if_include", "lo"]
        out += ["--die-with-parent", "--setenv", "TMPDIR", str(Path(scratch).resolve()), "--"]
        return out + [str(a) for a in argv]


HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inc", ".inl", ".ipp", ".tcc")


def check_copy(copy: Path, student_files: list[str]) -> None:
    """A student's copy holds the files the student edits, and no header or folder that could
    stand in for the harness's or the system's (refused, exit 2, naming the file)."""
    keep = {"build", *student_files}
    for item in sorted(copy.iterdir()):
        if item.name in keep or item.name.startswith(".pxq"):
            continue
        if item.is_dir() or item.suffix.lower() in HEADER_SUFFIXES or item.is_symlink():
            raise InputError(
                f"{item}: a copy holds only the files you edit ({', '.join(student_files)}); a header or folder "
                "beside them could stand in for the lab's own: move it out of the copy"
            )
