"""Launching a run: the launchers as registered classes (`launchers`), one module each (`local`,
`vnodes`: virtual nodes, `emulated`: a cluster of this machine, entered through `netns`,
`hostfile`, `slurm`), MPICH's Hydra (`hydra`), the request they share (`request`), the plan
(`plan`) and the session every launch runs in (`session`: the run's folder, plan and staged
environment)."""

# Every launcher module registers its launcher (pxq.launch.launchers.REGISTRY) as it is imported.
from pxq.launch import emulated, hostfile, local, slurm, vnodes  # noqa: E402, F401
