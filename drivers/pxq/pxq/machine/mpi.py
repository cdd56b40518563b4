"""Which MPI launcher is here: Open MPI's mpirun or MPICH's Hydra mpiexec, found and told apart."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from pxq.core.errors import InputError
from pxq.core.paths import build_dir
from pxq.machine import envinfo

MPI_NAMES = {"open-mpi": "Open MPI", "mpich": "MPICH"}


# The launchers tried, in order, for the MPI pxq was built with: Debian names each MPI's own
# (mpirun.openmpi, mpiexec.mpich) beside the alternatives' mpirun, which may be the other MPI's.
MPIRUN_NAMES = {
    "open-mpi": ("mpirun", "mpirun.openmpi", "mpiexec.openmpi"),
    "mpich": ("mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich", "mpiexec", "mpirun"),
}


@functools.lru_cache(maxsize=8)
def launcher_flavour(path: str) -> str:
    """The MPI a launcher belongs to, from its --version: open-mpi, mpich (Hydra) or unknown."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = out.stdout + out.stderr
    if "Open MPI" in text or "OpenRTE" in text:
        return "open-mpi"
    return "mpich" if "HYDRA" in text else "unknown"


def find_mpirun(flavour: str | None = None) -> str:
    """PXQ_MPIRUN, else the launcher of the MPI pxq was built with (Open MPI's mpirun, MPICH's
    mpiexec); a clear error when there is none or PXQ_MPIRUN belongs to the other MPI."""
    flavour = flavour or envinfo.mpi_flavour()
    explicit = os.environ.get("PXQ_MPIRUN")
    if explicit:
        path = shutil.which(explicit)
        if path is None:
            raise InputError(f"PXQ_MPIRUN={explicit} is not an executable: point it at your MPI's mpirun")
        found = launcher_flavour(path)
        if found == "unknown":
            raise InputError(
                f"PXQ_MPIRUN={explicit}: `{explicit} --version` names no MPI launcher (Open MPI's mpirun or "
                "MPICH's mpiexec): point PXQ_MPIRUN at your MPI's launcher, or unset it"
            )
        if flavour in MPI_NAMES and found in MPI_NAMES and found != flavour:
            raise InputError(
                f"PXQ_MPIRUN={explicit} is {MPI_NAMES[found]}'s launcher but pxq in {build_dir()} was built with "
                f"{MPI_NAMES[flavour]}: point PXQ_MPIRUN at {MPI_NAMES[flavour]}'s, or PXQ_BUILD_DIR at a "
                f"build with {MPI_NAMES[found]}"
            )
        return explicit
    for name in MPIRUN_NAMES.get(flavour, ("mpirun",)):
        path = shutil.which(name)
        if path and (flavour not in MPI_NAMES or launcher_flavour(path) == flavour):
            return path
    if flavour == "mpich":
        raise InputError(
            f"pxq in {build_dir()} was built with MPICH but MPICH's mpiexec is not on PATH: install it "
            "(apt-get install mpich), `module load` it, or set PXQ_MPIRUN=/path/to/mpiexec"
        )
    raise InputError(
        "mpirun not found: install Open MPI (apt-get install openmpi-bin), "
        "`module load` your MPI, or set PXQ_MPIRUN=/path/to/mpirun"
    )
