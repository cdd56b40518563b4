"""Open MPI's mpirun as a starter: the launcher's own command line (`Launcher.open_mpi`), each
rank on the cores pxq chose where the launcher plans them; also the starter of a launcher that
starts the ranks itself (srun), whichever MPI pxq uses."""

from __future__ import annotations

from pathlib import Path

from pxq.launch.launchers import Launcher, Staging, Starter
from pxq.launch.request import LaunchPlan, choose_cores, placement_record


class Mpirun(Starter, mpi="open-mpi"):
    def plan(
        self, launcher: Launcher, mpirun: str, workdir: Path, oversubscribed: bool, env: dict[str, str]
    ) -> LaunchPlan:
        req = launcher.req
        chosen = None
        if req.placement and launcher.plans_cores:
            chosen = choose_cores(req, virtual=launcher.through_agent)
        st = Staging(req, mpirun, workdir, oversubscribed, chosen, env)
        argv = launcher.finish(st, launcher.open_mpi(st))
        placement = placement_record(req, chosen) if chosen is not None else None
        return LaunchPlan(launcher.name, argv, env, st.files, st.links, oversubscribed, placement)
