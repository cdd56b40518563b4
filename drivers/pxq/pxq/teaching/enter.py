"""The first step into a student's sandbox (run by path, standard library only): joins the
sandbox's cgroups, sets its resource limits, keeps only the environment a build or a run needs,
then becomes bubblewrap. Everything the sandbox starts inherits all of it.

    python enter.py [--cgroup PROCS_FILE]... [--limit NAME=VALUE]... [--keep NAME=VALUE]... -- bwrap ...

Exit 125 when a step fails (a cgroup that refuses the process, a limit the kernel refuses):
nothing of the student's runs then."""

from __future__ import annotations

import os
import resource
import sys

LIMITS = {
    "cpu": resource.RLIMIT_CPU,  # seconds of CPU time, each process
    "fsize": resource.RLIMIT_FSIZE,  # bytes of the largest file a process writes
    "core": resource.RLIMIT_CORE,  # core dumps
    "nofile": resource.RLIMIT_NOFILE,  # open files, each process
    "nproc": resource.RLIMIT_NPROC,  # processes of the user (where no cgroup counts them)
    "data": resource.RLIMIT_DATA,  # bytes of memory, each process (where no cgroup limits it)
}
# The environment a confined build or run keeps: the MPI, OpenMP and Kokkos settings pxq's launch
# made, pxq's own (the run's tag), the locale and PATH. Everything else (tokens, keys, the
# teacher's HOME) stays outside.
KEEP_PREFIXES: tuple[str, ...] = (
    "OMPI_",
    "PMIX_",
    "PRTE_",
    "OMP_",
    "GOMP_",
    "KMP_",
    "KOKKOS_",
    "HWLOC_",
    "HYDRA_",
    "MPIR_",
    "MPICH_",
)
KEEP_PREFIXES += ("PXQ_", "LC_")
KEEP_NAMES = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_PRELOAD", "LD_LIBRARY_PATH")


def kept(environ: dict[str, str]) -> dict[str, str]:
    """What of ENVIRON a confined process sees."""
    return {k: v for k, v in environ.items() if k in KEEP_NAMES or k.startswith(KEEP_PREFIXES)}


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("pxq sandbox: usage: enter.py [options] -- bwrap ...", file=sys.stderr)
        return 125
    cut = argv.index("--")
    own, command = argv[:cut], argv[cut + 1 :]
    env = kept(dict(os.environ))
    try:
        for flag, value in zip(own[::2], own[1::2], strict=True):
            if flag == "--cgroup":
                with open(value, "w") as f:
                    f.write(str(os.getpid()))
            elif flag == "--limit":
                name, number = value.split("=", 1)
                n = int(number)
                resource.setrlimit(LIMITS[name], (n, n))
            elif flag == "--keep":
                name, text = value.split("=", 1)
                env[name] = text
            else:
                raise ValueError(f"unknown option {flag}")
        os.execvpe(command[0], command, env)
    except (OSError, ValueError, KeyError) as e:
        print(f"pxq sandbox: cannot enter the sandbox: {e}", file=sys.stderr)
        return 125


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
