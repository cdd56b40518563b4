"""Launchers, one module each (one machine and virtual nodes, a hostfile, Slurm, MPICH's Hydra), the
request they share (request.py), the plan that picks one (plan.py), and the hang watchdog."""

# Every launcher module registers its launcher (pxq.launch.launchers.REGISTRY) as it is imported.
from pxq.launch import emulated, hostfile, local, slurm, vnodes  # noqa: E402, F401
