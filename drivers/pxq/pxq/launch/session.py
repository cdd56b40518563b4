"""One launch session, the way every launch of pxq starts its ranks (a run, a declaration, a lab's
run): the run's own folder where its ranks see it (`plan.run_folder_base`), the launch plan and
command line made in it, the environment staged there, and the variables the ranks need passed the
way the launcher passes them. The folder, and the run's shared-memory folder, go when it ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from pxq.core import procs
from pxq.launch.plan import SHARED_RUNS, LaunchPlan, plan_launch, run_folder_base, stage
from pxq.launch.request import LaunchRequest


@dataclass
class Session:
    folder: Path  # the run's own folder
    plan: LaunchPlan
    argv: list[str]  # the launcher's command line (and whatever the maker put after it)
    env: dict[str, str]  # the staged environment of the run

    def pass_on(self, extra: dict[str, str]) -> None:
        """These variables reach every rank: in the environment where the launcher passes it on,
        else as the launcher's -x flags (the command line must still begin with the plan's)."""
        if not extra:
            return
        if self.plan.passes_environment:
            self.env.update(extra)
            return
        if self.argv[: len(self.plan.argv)] != list(self.plan.argv):
            raise ValueError("pass_on: the session's command line no longer begins with its launcher's")
        flags = [flag for key, value in extra.items() for flag in ("-x", f"{key}={value}")]
        self.argv = self.plan.with_flags(flags) + self.argv[len(self.plan.argv) :]


Maker = Callable[[Path], tuple[LaunchPlan, list[str]]]


def request_plan(req: LaunchRequest) -> Maker:
    """A maker for a bare launch: the request's plan and its launcher's command line."""

    def make(folder: Path) -> tuple[LaunchPlan, list[str]]:
        plan = plan_launch(req, None, folder)
        return plan, list(plan.argv)

    return make


@contextmanager
def session(
    make: Maker, launcher: str | None, hostfile: str | None, beside: Path, prefix: str, shm: bool = True
) -> Iterator[Session]:
    """A session whose folder goes where a run of this launcher and hostfile keeps it (beside
    `beside`, a file of the run, when its ranks span hosts); `make` plans the launch in it. With
    `shm`, the MPI library's shared-memory segments go to a folder of the run's own (a sandboxed
    run, whose /dev/shm is its own, keeps the library's default)."""
    base = run_folder_base(launcher, hostfile, beside)
    tidy = base is not None and Path(base).name == SHARED_RUNS
    with procs.workdir(prefix, base=base, tidy_base=tidy) as folder:
        with procs.shm_workdir() if shm else nullcontext() as shm_folder:
            plan, argv = make(folder)
            yield Session(folder, plan, argv, stage(plan, folder, shm_folder))
