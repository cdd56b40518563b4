"""A private Slurm cluster on this machine for the tests: slurmctld and one slurmd per node name
(n0, n1, ...: several slurmd on one host, each with its own port and spool), all in one folder,
with their own configuration (SLURM_CONF), ports and logs, stopped and removed afterwards.

Authentication is auth/none (there is one host and one user; munge is left out), so nothing
outside the folder is touched. `Cluster.start()` raises Unavailable with the reason when Slurm
cannot run here (no packages, no multiple-slurmd support, daemons that do not come up).

On a cluster of this machine (`pxq cluster up`; pass it as `emulated`) each slurmd runs inside
its own node (that node's network, host name, /tmp and /dev/shm) and answers at the node's
address, slurmctld runs on the cluster's head, and so do the clients (`client` gives the
prefix that puts a command there): steps reach their nodes over the emulated links."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from pxq.cluster.emulator import HEAD_ADDRESS, enter_head, enter_node

DAEMONS = ("slurmctld", "slurmd")
CLIENTS = ("srun", "sbatch", "salloc", "squeue", "sinfo", "scontrol")


class Unavailable(Exception):
    """Slurm cannot run here; the message says why."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _find(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/local/sbin") / name) if p.exists()), None
    )


class Cluster:
    def __init__(self, folder: Path, nodes: int = 2, cpus: int | None = None, emulated=None):
        self.folder = folder.resolve()
        self.emulated = emulated  # a pxq.cluster.emulator.Cluster whose nodes host the slurmd
        if emulated is not None:
            nodes = emulated.nodes
        self.nodes = [f"n{i}" for i in range(nodes)]
        self.cpus = cpus or os.cpu_count() or 1
        self.conf = self.folder / "slurm.conf"
        self.procs: list[subprocess.Popen] = []

    @property
    def env(self) -> dict[str, str]:
        """The environment of a client of this cluster (srun, sbatch, ./pxq inside salloc)."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    @property
    def client(self) -> list[str]:
        """The prefix that runs a client where it reaches the daemons (the emulated head)."""
        return [] if self.emulated is None else enter_head(self.emulated)

    def _node_line(self, k: int, name: str, host: str) -> str:
        cpus, spec = self.cpus, ""
        if self.emulated is None:
            where = f"NodeHostname={host} NodeAddr=127.0.0.1"
        else:
            where = f"NodeHostname={self.emulated.host(k)} NodeAddr={self.emulated.addresses[k]}"
            # slurmd numbers a node's cores as the machine's, whatever its cpuset: the cores
            # outside the node's cpuset are reserved (CpuSpecList), so jobs get only the node's.
            other = sorted(set(range(cpus)) - set(self.emulated.node_cpus[k])) if self.emulated.cpuset else []
            spec = f" CpuSpecList={','.join(map(str, other))}" if other else ""
        return (
            f"NodeName={name} {where} Port={_free_port()} CPUs={cpus} Sockets=1 "
            f"CoresPerSocket={cpus} ThreadsPerCore=1 RealMemory=1000{spec} State=UNKNOWN"
        )

    def _write_conf(self) -> None:
        host = socket.gethostname()
        ctld_port = _free_port()
        # On an emulated cluster slurmctld listens on the head, which keeps the machine's host name.
        ctld = host if self.emulated is None else f"{host}({HEAD_ADDRESS})"
        lines = [
            "ClusterName=pxqtest",
            f"SlurmctldHost={ctld}",
            f"SlurmctldPort={ctld_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/none",
            "CredType=cred/none",
            "MpiDefault=none",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            "JobCompType=jobcomp/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "MaxJobCount=1000",
            "InactiveLimit=0",
            "KillWait=5",
            "MinJobAge=300",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "MessageTimeout=20",
            f"StateSaveLocation={self.folder}/state",
            f"SlurmdSpoolDir={self.folder}/spool/%n",
            # Each node's own temporary folder: PMIx's per-step folders live in it, and two
            # nodes on one host would otherwise make the same one.
            f"TmpFS={self.folder}/tmp/%n",
            f"SlurmctldPidFile={self.folder}/slurmctld.pid",
            f"SlurmdPidFile={self.folder}/slurmd-%n.pid",
            f"SlurmctldLogFile={self.folder}/slurmctld.log",
            f"SlurmdLogFile={self.folder}/slurmd-%n.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
        ]
        lines += [self._node_line(k, name, host) for k, name in enumerate(self.nodes)]
        lines.append(f"PartitionName=pxq Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")

    def start(self, timeout: float = 60) -> Cluster:
        missing = [n for n in (*DAEMONS, *CLIENTS) if _find(n) is None]
        if missing:
            raise Unavailable(
                f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurmctld slurmd"
            )
        out = subprocess.run([_find("slurmd"), "-h"], capture_output=True, text=True)
        help_text = out.stdout + out.stderr
        if len(self.nodes) > 1 and "-N node" not in help_text:
            raise Unavailable("this slurmd cannot run several nodes on one host (built without multiple-slurmd)")
        shutil.rmtree(self.folder, ignore_errors=True)
        for sub in ("state", *(f"spool/{n}" for n in self.nodes), *(f"tmp/{n}" for n in self.nodes)):
            (self.folder / sub).mkdir(parents=True)
        self._write_conf()
        self._spawn([*self.client, _find("slurmctld"), "-D", "-i", "-f", str(self.conf)], "slurmctld.out")
        for k, name in enumerate(self.nodes):
            inside = [] if self.emulated is None else enter_node(self.emulated, k)
            self._spawn([*inside, _find("slurmd"), "-D", "-N", name, "-f", str(self.conf)], f"slurmd-{name}.out")
        try:
            self._wait_idle(timeout)
        except Unavailable:
            self.stop()
            raise
        return self

    def _spawn(self, argv: list, out: str) -> None:
        log = open(self.folder / out, "w")  # noqa: SIM115 (kept open for the daemon's life)
        self.procs.append(
            subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        )

    def _wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            dead = [next(a for a in p.args if "slurm" in a) for p in self.procs if p.poll() is not None]
            if dead:
                raise Unavailable(f"{', '.join(dead)} exited at start: {self.log_tail()}")
            out = subprocess.run(
                [*self.client, "sinfo", "-h", "-N", "-o", "%N %t"],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=20,
            )
            state = out.stdout.strip()
            if out.returncode == 0 and state and all(ln.split()[1] == "idle" for ln in state.splitlines()):
                if len(state.splitlines()) == len(self.nodes):
                    return
            time.sleep(0.5)
        raise Unavailable(f"the nodes did not come up in {timeout:.0f} s (sinfo: {state!r}): {self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        out = []
        for log in sorted(self.folder.glob("*.log")) + sorted(self.folder.glob("*.out")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(text))
        return "\n".join(out)

    def stop(self) -> None:
        """Cancels what is still queued or running, waits for its steps to end, then stops every
        daemon (and what it started: its session)."""
        if any(p.poll() is None for p in self.procs):
            try:
                self._drain()
            except (OSError, subprocess.SubprocessError):
                pass  # the daemons are stopped below whatever the queue says
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def _drain(self, timeout: float = 30) -> None:
        ids = subprocess.run(
            [*self.client, "squeue", "-h", "-o", "%i"], env=self.env, capture_output=True, text=True, timeout=20
        )
        if ids.stdout.split():
            subprocess.run(
                [*self.client, "scancel", *ids.stdout.split()], env=self.env, capture_output=True, timeout=20
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            left = subprocess.run(
                [*self.client, "squeue", "-h"], env=self.env, capture_output=True, text=True, timeout=20
            )
            steps = subprocess.run(["pgrep", "-x", "slurmstepd"], capture_output=True, text=True).stdout
            if not left.stdout.strip() and not steps.strip():
                return
            time.sleep(0.5)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
