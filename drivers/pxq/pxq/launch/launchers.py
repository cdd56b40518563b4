"""The launchers: one class per way of starting a run's ranks (one machine, its virtual nodes, a
cluster of this machine, a hostfile's real nodes, a Slurm allocation), each in its own module and
registered by its class line (`class Local(Launcher, name="local", ...)`), as ReFrame registers its
launchers; importing pxq.launch imports every launcher module. `resolve` picks one for a request,
once per run: --launcher, else a hostfile's, else the Slurm allocation pxq runs in, else the
cluster of this machine that is up (looked up once, and kept), else one machine or its virtual
nodes.

A launcher builds Open MPI's command line for the request (`open_mpi`), names its nodes for a
starter given a host list (`hosts`) and says what the record keeps of where the run went
(`record`). The traits say what the rest of pxq asks of a launcher, so that nothing compares
launcher names.

A starter is what starts the ranks of pxq's MPI on a launcher's nodes, registered alike by its
class line (`class Hydra(Starter, mpi="mpich")`): Open MPI's mpirun with the launcher's own
command line (pxq.launch.mpirun), MPICH's Hydra (pxq.launch.hydra). `starter` picks one per run;
a launcher that starts the ranks itself (srun) takes its own command line whichever MPI."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pxq.cluster.emulator import Cluster
from pxq.core.errors import InputError
from pxq.launch import netns
from pxq.launch.request import LaunchPlan, LaunchRequest, export_flags
from pxq.machine.mpi import find_mpirun


@dataclass
class Staging:
    """What a launcher builds its command line from and adds its files, links and environment to."""

    req: LaunchRequest
    mpirun: str
    workdir: Path
    oversubscribed: bool
    chosen: dict | None  # the cores pxq chose for every worker (launchers that plan cores)
    env: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)

    def mpirun_np(self) -> list[str]:
        return [self.mpirun, "-np", str(self.req.layout.ranks)]


class Launcher:
    """One way to start a run's ranks. A subclass names itself and what it does in its class
    line, which registers it: `class Local(Launcher, name="local", plans_cores=True)`."""

    name: ClassVar[str] = ""
    plans_cores: ClassVar[bool] = False  # pxq picks every worker's cores (ranks on this machine)
    real_nodes: ClassVar[bool] = False  # the nodes are other machines (a hostfile's, Slurm's)
    needs_hostfile: ClassVar[bool] = False  # --launcher NAME needs --hostfile FILE
    own_starter: ClassVar[bool] = False  # starts the ranks itself (srun), whichever MPI pxq uses
    emulated: ClassVar[bool] = False  # the nodes of a cluster of this machine (pxq cluster up)
    through_agent: ClassVar[bool] = False  # pxq's agent stands in for ssh to the nodes (n0, n1, ...)

    def __init_subclass__(cls, name: str = "", **traits: bool) -> None:
        super().__init_subclass__()
        unknown = sorted(set(traits) - TRAITS)
        if unknown:
            raise TypeError(f"launcher {cls.__name__}: no trait {', '.join(unknown)} (traits: {', '.join(TRAITS)})")
        for trait, value in traits.items():
            setattr(cls, trait, value)
        if name:
            cls.name = name
            register(cls)

    def __init__(self, req: LaunchRequest, cluster: Cluster | None = None) -> None:
        self.req = req
        self.cluster = cluster

    def mpirun(self, mpi: str) -> str:
        """The launcher program the command line starts with."""
        return "" if self.own_starter else find_mpirun(mpi)

    def open_mpi(self, st: Staging) -> list[str]:
        """Open MPI's command line up to the program: mpirun and its options."""
        raise NotImplementedError

    def finish(self, st: Staging, argv: list[str]) -> list[str]:
        """The command line with the environment named for mpirun to pass on (-x)."""
        return argv + export_flags(st.env)

    def hosts(self) -> list[str]:
        """The layout's nodes by name, for a starter given a host list (Hydra's -hosts): none
        where the run stays on this one machine."""
        return []

    def record(self) -> dict[str, Any]:
        """What the run's record keeps (driver.*) of where the run went."""
        return {}


TRAITS = frozenset(("plans_cores", "real_nodes", "needs_hostfile", "own_starter", "emulated", "through_agent"))
REGISTRY: dict[str, type[Launcher]] = {}
# The order --launcher's help and the experiment file's schema list them in.
ORDER = ("local", "virtual", "cluster", "hostfile", "slurm")


def register(cls: type[Launcher]) -> type[Launcher]:
    """Adds a launcher to the registry (its class line does, when it gives a name)."""
    if not cls.name or cls.name in REGISTRY or cls.name not in ORDER:
        raise TypeError(
            f"launcher {cls.__name__}: a name of its own, listed in pxq.launch.launchers.ORDER "
            f"(have: {', '.join(REGISTRY)})"
        )
    REGISTRY[cls.name] = cls
    return cls


def get(name: str) -> type[Launcher]:
    if name not in REGISTRY:
        raise InputError(f"--launcher {name}: no such launcher; the launchers are {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def resolve(req: LaunchRequest) -> Launcher:
    """The launcher of a request, with the cluster of this machine it runs on (looked up once)."""
    if req.launcher:
        return get(req.launcher)(req)
    if req.hostfile:
        return get("hostfile")(req)
    if os.environ.get("SLURM_JOB_ID"):
        return get("slurm")(req)
    up = netns.current()
    if up is not None:
        return get("cluster")(req, up)
    return get("virtual" if req.layout.nodes > 1 else "local")(req)


class Starter:
    """What starts the ranks of one MPI on a launcher's nodes. A subclass names the MPI in its
    class line, which registers it: `class Hydra(Starter, mpi="mpich")`."""

    mpi: ClassVar[str] = ""

    def __init_subclass__(cls, mpi: str = "") -> None:
        super().__init_subclass__()
        if not mpi or mpi in STARTERS:
            raise TypeError(f"starter {cls.__name__}: an MPI of its own (have: {', '.join(STARTERS)})")
        cls.mpi = mpi
        STARTERS[mpi] = cls

    def plan(
        self, launcher: Launcher, mpirun: str, workdir: Path, oversubscribed: bool, env: dict[str, str]
    ) -> LaunchPlan:
        """The launch plan up to the program: the command line starting the launcher's request
        from `mpirun`, with `env` for the ranks."""
        raise NotImplementedError


STARTERS: dict[str, type[Starter]] = {}


def starter(launcher: Launcher) -> Starter:
    """The starter of a launch: the MPI's, or Open MPI's command line where the launcher starts
    the ranks itself (srun runs either MPI's ranks)."""
    mpi = "open-mpi" if launcher.own_starter else launcher.req.mpi
    if mpi not in STARTERS:
        raise InputError(f"pxq cannot start the ranks of MPI '{mpi}': it starts {', '.join(sorted(STARTERS))}")
    return STARTERS[mpi]()


def _trait(name: str | None, trait: str) -> bool:
    """A trait of the launcher of that name; False for none asked (pxq picks) or one this pxq
    does not have (a record written by another version)."""
    found = REGISTRY.get(name) if name else None
    return found is not None and bool(getattr(found, trait))


def real_nodes(name: str | None) -> bool:
    """Whether the launcher of that name runs on other machines."""
    return _trait(name, "real_nodes")


def plans_cores(name: str | None) -> bool:
    """Whether the launcher of that name runs the ranks on this machine, on cores pxq picks."""
    return _trait(name, "plans_cores")


def needs_hostfile(name: str | None) -> bool:
    return _trait(name, "needs_hostfile")


def emulated(name: str | None) -> bool:
    """Whether the launcher of that name runs on a cluster of this machine."""
    return _trait(name, "emulated")
