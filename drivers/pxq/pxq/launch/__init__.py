"""Launchers, one module each (one machine and virtual nodes, a hostfile, Slurm, MPICH's Hydra), the
request they share (request.py), the plan that picks one (plan.py), and the hang watchdog."""
