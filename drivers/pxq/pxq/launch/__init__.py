"""Launching a run: the launchers as registered classes (`launchers`), one module each (`local`,
`vnodes`: virtual nodes, `emulated`: a cluster of this machine, entered through `netns`,
`hostfile`, `slurm`), the starters that start an MPI's ranks on a launcher's nodes, registered
alike (`mpirun`: Open MPI's, `hydra`: MPICH's Hydra), the request they share (`request`), the
plan (`plan`) and the session every launch runs in (`session`: the run's folder, plan and staged
environment)."""

# Every launcher and starter module registers its class (pxq.launch.launchers.REGISTRY, STARTERS)
# as it is imported.
from pxq.launch import emulated, hostfile, hydra, local, mpirun, slurm, vnodes  # noqa: E402, F401
