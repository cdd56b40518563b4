import random
from pathlib import Path

import pytest

from pxq.cluster.emulator import HEAD_ADDRESS, Cluster
from pxq.core import paths
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.launch import netns, request, slurm
from pxq.launch import plan as launch_plan
from pxq.launch import session as launch_session
from pxq.launch.plan import plan_launch
from pxq.launch.request import LaunchRequest, rank_cores
from pxq.machine import envinfo, mpi
from pxq.machine.mpi import find_mpirun


def plan(layout, tmp_path, **kw):
    kw.setdefault("cores", 2)
    return plan_launch(LaunchRequest(layout, **kw), "/usr/bin/mpirun", tmp_path)


def test_local_binds_each_rank_to_its_cores(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    p = plan(Layout(1, 2), tmp_path)
    assert p.launcher == "local"
    assert p.argv[:3] == ["/usr/bin/mpirun", "-np", "2"]
    assert "slot:PE=1" in p.argv and "core" in p.argv
    assert p.env["OMP_NUM_THREADS"] == "1"
    assert not p.oversubscribed


def test_hybrid_local_maps_threads_to_cores(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    p = plan(Layout(1, 1, 2), tmp_path)
    assert "slot:PE=2" in p.argv and p.env["OMP_NUM_THREADS"] == "2"
    assert p.env["OMP_PROC_BIND"] == "close"


def test_virtual_nodes_use_the_agent_and_disjoint_cores(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    p = plan(Layout(2, 1), tmp_path)
    assert p.launcher == "virtual"
    assert p.argv[p.argv.index("--host") + 1] == "n0:1,n1:1"
    agent = Path(p.argv[p.argv.index("plm_rsh_agent") + 1])
    assert agent.name == "vnode_agent.sh" and agent.exists()
    rankfile = p.files[str(tmp_path / "rankfile")]
    assert rankfile.splitlines() == ["rank 0=n0 slot=0", "rank 1=n1 slot=1"]


def test_the_agent_gives_each_virtual_node_its_own_session_folder(tmp_path):
    # mpirun hands every daemon its own "-mca orte_tmpdir_base DIR"; daemons of two virtual
    # nodes sharing DIR race to create one job-family folder, so the agent replaces it.
    import subprocess

    env = {"PATH": "/usr/bin:/bin", "PXQ_VNODE_DIR": str(tmp_path / "vn")}
    words = ["-mca", "orte_tmpdir_base", '"/shared/session"', "-mca", "ess_base_vpid", "1"]
    out = subprocess.run(
        [str(paths.AGENT), "-x", "n3", "/usr/bin/printf", "%s\\n", *words],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == ["-mca", "orte_tmpdir_base", str(tmp_path / "vn" / "n3" / "session"), "-mca", "ess_base_vpid", "1"]
    assert (tmp_path / "vn" / "n3" / "session").is_dir() and (tmp_path / "vn" / "n3" / "shm").is_dir()


def test_the_agent_puts_each_virtual_node_s_segments_in_the_run_s_shm_folder(tmp_path):
    import subprocess

    env = {"PATH": "/usr/bin:/bin", "PXQ_VNODE_DIR": str(tmp_path / "vn"), "PXQ_VNODE_SHM": str(tmp_path / "shm")}
    out = subprocess.run(
        [str(paths.AGENT), "n1", "/usr/bin/env"], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    shm = str(tmp_path / "shm" / "n1")
    assert f"OMPI_MCA_btl_vader_backing_directory={shm}" in out
    assert f"OMPI_MCA_osc_sm_backing_directory={shm}" in out
    assert Path(shm).is_dir() and not (tmp_path / "vn" / "n1" / "shm").exists()


def test_staging_puts_open_mpi_s_segments_in_the_run_s_shm_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    for key in launch_plan.SHM_DIRS:
        monkeypatch.delenv(key, raising=False)
    shm = tmp_path / "shm"
    local = launch_plan.stage(plan(Layout(1, 2), tmp_path), tmp_path, shm)
    assert all(local[key] == str(shm) for key in launch_plan.SHM_DIRS)
    virtual = launch_plan.stage(plan(Layout(2, 1), tmp_path), tmp_path, shm)
    assert virtual["PXQ_VNODE_SHM"] == str(shm)
    hostfile = tmp_path / "hosts"
    hostfile.write_text("a slots=2\nb slots=2\n")
    real = launch_plan.stage(plan(Layout(2, 2), tmp_path, hostfile=str(hostfile)), tmp_path, shm)
    assert not any(key in real for key in (*launch_plan.SHM_DIRS, "PXQ_VNODE_SHM"))  # no such folder there
    monkeypatch.setenv(launch_plan.SHM_DIRS[0], "/scratch/mine")
    assert launch_plan.stage(plan(Layout(1, 2), tmp_path), tmp_path, shm)[launch_plan.SHM_DIRS[0]] == "/scratch/mine"


def test_block_and_cyclic_allocation(tmp_path):
    lay = Layout(2, 2)
    assert [n for n, _ in rank_cores(lay, "block", 4)] == [0, 0, 1, 1]
    assert [n for n, _ in rank_cores(lay, "cyclic", 4)] == [0, 1, 0, 1]
    cores = [c for _, cs in rank_cores(Layout(2, 1, 2), "block", 4) for c in cs]
    assert sorted(cores) == [0, 1, 2, 3]  # disjoint per virtual node


def test_hostfile_and_slurm_use_the_real_nodes(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    hostfile = tmp_path / "hosts"
    hostfile.write_text("a slots=4\nb slots=4\n")
    p = plan(Layout(2, 4, 2), tmp_path, hostfile=str(hostfile), alloc="cyclic")
    assert p.launcher == "hostfile"
    assert p.argv[p.argv.index("--hostfile") + 1] == str(hostfile)
    assert "ppr:4:node:PE=2" in p.argv
    assert p.argv[p.argv.index("--rank-by") + 1] == "node"


def test_a_run_across_hosts_keeps_its_folder_where_every_node_sees_it(tmp_path, monkeypatch):
    """A node's /tmp is its own: across hosts (a hostfile, Slurm) the record rank 0 writes goes to
    a folder beside the results; on one machine to the temporary folder."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("PXQ_CLUSTER", "off")
    results = tmp_path / "out" / "ring.jsonl"
    shared = tmp_path / "out" / launch_plan.SHARED_RUNS
    for launcher, hostfile in (("slurm", None), ("hostfile", None), (None, "hosts")):
        assert launch_plan.run_folder_base(launcher, hostfile, results) == str(shared)
    assert shared.is_dir()
    for launcher in ("local", "virtual", None):
        assert launch_plan.run_folder_base(launcher, None, results) is None
    monkeypatch.setenv("SLURM_JOB_ID", "42")  # inside an allocation, the default launcher is srun
    assert launch_plan.run_folder_base(None, None, results) == str(shared)
    assert launch_plan.run_folder_base("local", None, results) is None
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / launch_plan.SHARED_RUNS).write_text("a file where the folder goes")
    with pytest.raises(InputError, match="every node must see"):
        launch_plan.run_folder_base("slurm", None, tmp_path / "ro" / "ring.jsonl")


@pytest.fixture
def allocation(monkeypatch):
    """Inside a Slurm job on nodes a..d (scontrol's expansion stood in for), built with Open MPI."""
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "a,b,c,d")
    monkeypatch.delenv("SLURM_MPI_TYPE", raising=False)
    monkeypatch.setattr(slurm, "slurm_nodes", lambda: ["a", "b", "c", "d"])
    monkeypatch.setattr(envinfo, "mpi_flavour", lambda: "open-mpi")
    monkeypatch.setattr(slurm.shutil, "which", lambda name: f"/usr/bin/{name}")


def test_inside_slurm_srun_starts_the_layout_on_the_allocation(tmp_path, allocation):
    s = plan(Layout(2, 2, 2), tmp_path)
    assert s.launcher == "slurm" and s.argv[0] == "/usr/bin/srun"
    for flag in ("--nodes=2", "--ntasks=4", "--ntasks-per-node=2", "--cpus-per-task=2", "--cpu-bind=cores"):
        assert flag in s.argv
    assert "--distribution=block:block" in s.argv and "--mpi=pmix" in s.argv and "--kill-on-bad-exit=1" in s.argv
    assert "-x" not in s.argv and "mpirun" not in " ".join(s.argv)  # srun passes the environment on
    assert s.env["OMP_NUM_THREADS"] == "2" and s.env["OMP_PLACES"] == "cores"
    spread = plan(Layout(2, 2), tmp_path, alloc="cyclic", placement="spread")
    assert "--distribution=cyclic:cyclic" in spread.argv
    custom = plan(Layout(1, 2), tmp_path, placement="custom", placement_cpus=[0, 6])
    assert "--cpu-bind=map_cpu:0,6" in custom.argv
    over = plan(Layout(1, 8), tmp_path, oversubscribe=True)
    assert "--overcommit" in over.argv


def test_inside_slurm_the_site_s_mpi_type_and_mpich_are_honoured(tmp_path, allocation, monkeypatch):
    monkeypatch.setattr(envinfo, "mpi_flavour", lambda: "mpich")
    assert "--mpi=pmi2" in plan(Layout(1, 2), tmp_path).argv
    monkeypatch.setenv("SLURM_MPI_TYPE", "pmix_v4")
    assert not any(a.startswith("--mpi") for a in plan(Layout(1, 2), tmp_path).argv)


def test_inside_slurm_a_layout_larger_than_the_allocation_is_refused(tmp_path, allocation):
    with pytest.raises(InputError, match="allocation has 4 .*salloc -N 5"):
        plan(Layout(5, 1), tmp_path)


def test_inside_slurm_a_rank_order_goes_through_slurm_hostfile(tmp_path, allocation):
    s = plan(Layout(2, 2), tmp_path, rank_order=[3, 1, 0, 2])
    hosts = tmp_path / "slurm-hosts"
    assert s.env["SLURM_HOSTFILE"] == str(hosts) and "--distribution=arbitrary" in s.argv
    # slot s on node s // 2; rank r sits in the slot where the order lists it
    assert s.files[str(hosts)].splitlines() == ["b", "a", "b", "a"]


def test_a_12000_node_allocation_and_a_16384_rank_order_launch_from_files_not_arguments(tmp_path, monkeypatch):
    """At a site's scale the launch grows files, never the command line: srun on a 12,000-node
    allocation takes counts; a 16,384-rank order goes through SLURM_HOSTFILE, or a rankfile on a
    hostfile's 512 hosts, one line a rank, each rank on the node of its place in the order."""
    nodes = [f"nid{i:05d}" for i in range(12000)]
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "nid[00000-11999]")
    monkeypatch.delenv("SLURM_MPI_TYPE", raising=False)
    monkeypatch.setattr(slurm, "slurm_nodes", lambda: nodes)
    monkeypatch.setattr(envinfo, "mpi_flavour", lambda: "open-mpi")
    monkeypatch.setattr(slurm.shutil, "which", lambda name: f"/usr/bin/{name}")
    wide = plan(Layout(12000, 1), tmp_path)
    assert "--nodes=12000" in wide.argv and "--ntasks=12000" in wide.argv
    assert len(" ".join(wide.argv)) < 1024 and not wide.files  # the same line at 2 nodes or 12,000
    order = list(range(16384))
    random.Random(7).shuffle(order)
    place = {rank: slot for slot, rank in enumerate(order)}
    deep = plan(Layout(512, 32), tmp_path, cores=32, rank_order=order)
    (hosts,) = deep.files.values()
    assert deep.env["SLURM_HOSTFILE"] == str(tmp_path / "slurm-hosts") and len(" ".join(deep.argv)) < 1024
    lines = hosts.splitlines()
    assert len(lines) == 16384 and all(lines[r] == nodes[place[r] // 32] for r in range(16384))
    monkeypatch.delenv("SLURM_JOB_ID")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"h{i:03d} slots=32\n" for i in range(512)))
    mpirun = plan(Layout(512, 32), tmp_path, cores=32, rank_order=order, hostfile=str(hostfile))
    assert mpirun.launcher == "hostfile" and "--rankfile" in mpirun.argv and len(" ".join(mpirun.argv)) < 4096
    ranks = [line.split("=")[0] for line in mpirun.files[str(tmp_path / "rankfile")].splitlines()]
    hosts_of = [line.split("=")[1].split()[0] for line in mpirun.files[str(tmp_path / "rankfile")].splitlines()]
    assert ranks == [f"rank {r}" for r in range(16384)]
    assert all(hosts_of[r] == f"h{place[r] // 32:03d}" for r in range(16384))


def test_missing_hostfile_is_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(InputError, match="not found"):
        plan(Layout(2, 1), tmp_path, hostfile=str(tmp_path / "nope"))


def test_more_ranks_than_cores_needs_oversubscribe(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(InputError, match="--oversubscribe"):
        plan(Layout(1, 4), tmp_path)
    with pytest.raises(InputError, match="needs 4 cores"):
        plan(Layout(2, 1, 2), tmp_path)
    p = plan(Layout(1, 4), tmp_path, oversubscribe=True)
    assert p.oversubscribed and "--oversubscribe" in p.argv


def test_oversubscribed_ranks_yield_their_core(tmp_path, monkeypatch):
    """Virtual nodes get as many slots as ranks, so Open MPI cannot tell they oversubscribe the
    cores: pxq tells it, or the ranks busy-poll (85 s instead of 1 s for CG class S on 4x4)."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    for layout in (Layout(4, 4), Layout(1, 4)):
        p = plan(layout, tmp_path, oversubscribe=True)
        i = p.argv.index("mpi_yield_when_idle")
        assert p.argv[i - 1] == "--mca" and p.argv[i + 1] == "1"
    assert "mpi_yield_when_idle" not in plan(Layout(2, 1), tmp_path).argv


def test_mpirun_missing_or_wrong(monkeypatch):
    monkeypatch.delenv("PXQ_MPIRUN", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InputError, match="PXQ_MPIRUN"):
        find_mpirun()
    monkeypatch.setenv("PXQ_MPIRUN", "/nonexistent/mpirun")
    with pytest.raises(InputError, match="not an executable"):
        find_mpirun()


def test_root_gets_the_allow_run_as_root_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(launch_plan.os, "geteuid", lambda: 0)
    assert plan(Layout(1, 1), tmp_path).env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    monkeypatch.setattr(launch_plan.os, "geteuid", lambda: 1000)
    assert "OMPI_ALLOW_RUN_AS_ROOT" not in plan(Layout(1, 1), tmp_path).env


def test_the_user_s_omp_placement_is_kept_and_recorded(tmp_path, monkeypatch):
    from pxq.launch.request import omp_record

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("OMP_PLACES", "threads")
    monkeypatch.setenv("OMP_PROC_BIND", "spread")
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    p = plan(Layout(1, 1, 2), tmp_path)
    assert p.env["OMP_PLACES"] == "threads" and p.env["OMP_PROC_BIND"] == "spread"
    assert p.env["OMP_NUM_THREADS"] == "2"  # the layout's T
    rec = omp_record(p.env)
    assert rec["from_environment"] == ["OMP_PLACES", "OMP_PROC_BIND"]
    assert rec["replaced"] == {"OMP_NUM_THREADS": "8"}
    assert "OMP_WAIT_POLICY" not in p.env and "OMP_WAIT_POLICY" not in rec  # cores enough: libgomp's own


def test_oversubscribed_threads_wait_passively_unless_the_user_chose(tmp_path, monkeypatch):
    from pxq.launch.request import omp_record

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    over = plan(Layout(1, 2, 2), tmp_path, oversubscribe=True)
    assert over.oversubscribed and over.env["OMP_WAIT_POLICY"] == "passive"
    assert over.argv[over.argv.index("OMP_WAIT_POLICY") - 1] == "-x"  # passed to every rank
    assert omp_record(over.env)["OMP_WAIT_POLICY"] == "passive"
    assert omp_record(over.env)["from_environment"] == []
    assert "OMP_WAIT_POLICY" not in plan(Layout(1, 4), tmp_path, oversubscribe=True).env  # one thread each
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    mine = plan(Layout(1, 2, 2), tmp_path, oversubscribe=True)
    assert "OMP_WAIT_POLICY" not in mine.env  # the user's own reaches the ranks as it is
    rec = omp_record(mine.env)
    assert rec["OMP_WAIT_POLICY"] == "active" and "OMP_WAIT_POLICY" in rec["from_environment"]


# MPICH: Hydra's mpiexec with pxq's agent for virtual nodes and bind_rank.sh for planned cores.


def hydra(layout, tmp_path, **kw):
    kw.setdefault("cores", 2)
    return plan_launch(LaunchRequest(layout, mpi="mpich", **kw), "/usr/bin/mpiexec.hydra", tmp_path)


def test_mpich_local_runs_bind_through_hydra(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    p = hydra(Layout(1, 1, 2), tmp_path)
    assert p.mpi == "mpich" and p.launcher == "local"
    assert p.argv == ["/usr/bin/mpiexec.hydra", "-np", "1", "-bind-to", "core:2"]
    assert p.env["OMP_NUM_THREADS"] == "2" and "-x" not in p.argv  # Hydra passes the environment on
    over = hydra(Layout(1, 4), tmp_path, oversubscribe=True)
    assert over.argv[-2:] == ["-bind-to", "none"] and over.oversubscribed


def test_mpich_virtual_nodes_get_the_agent_and_disjoint_cores(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("UCX_TLS", raising=False)
    p = hydra(Layout(2, 1), tmp_path)
    assert p.launcher == "virtual"
    assert p.argv[p.argv.index("-hosts") + 1 :][:3] == ["n0,n1", "-ppn", "1"]
    assert Path(p.argv[p.argv.index("-launcher-exec") + 1]) == paths.AGENT
    # Hydra would bind rank 0 of both nodes to the first core: bind_rank.sh binds instead.
    assert p.argv[-3:] == ["-bind-to", "none", str(paths.BIND_WRAPPER)]
    assert p.env["PXQ_BIND_CPUS"] == "0;1"
    assert "UCX_TLS" not in p.env  # UCX's choice (or the user's): its tcp can hang in MPI_Finalize


def test_mpich_block_and_cyclic_deal_hosts(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# cluster\nnodeA slots=4\nnodeB:4\nnodeC\n")
    block = hydra(Layout(2, 2), tmp_path, hostfile=str(hostfile))
    assert block.launcher == "hostfile" and block.argv[block.argv.index("-hosts") + 1 :][:3] == [
        "nodeA,nodeB",
        "-ppn",
        "2",
    ]
    assert block.argv[-2:] == ["-bind-to", "core:1"]
    cyclic = hydra(Layout(2, 2), tmp_path, hostfile=str(hostfile), alloc="cyclic")
    assert cyclic.argv[cyclic.argv.index("-ppn") + 1] == "1"  # Hydra deals the ranks round the nodes
    custom = hydra(Layout(2, 2), tmp_path, hostfile=str(hostfile), placement="custom", placement_cpus=[3, 1])
    assert custom.argv[-2:] == ["-bind-to", "user:3,1"]
    assert "MPICH's binding" in custom.placement["warnings"][0]
    with pytest.raises(InputError, match="names 3 host"):
        hydra(Layout(4, 1), tmp_path, hostfile=str(hostfile))


def test_mpich_rank_order_binds_on_one_node_and_is_refused_across_nodes(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    p = hydra(Layout(1, 2), tmp_path, rank_order=[1, 0])
    assert p.env["PXQ_BIND_CPUS"] == "1;0"  # rank 0 sits in slot 1
    with pytest.raises(InputError, match="Open MPI's rankfile"):
        hydra(Layout(2, 1), tmp_path, rank_order=[1, 0])
    hostfile = tmp_path / "hosts"
    hostfile.write_text("nodeA\n")
    with pytest.raises(InputError, match="Open MPI's rankfile"):  # real nodes: Hydra would ignore the order
        hydra(Layout(1, 2), tmp_path, rank_order=[1, 0], hostfile=str(hostfile))


def test_bind_rank_binds_the_rank_to_its_cores(tmp_path):
    import os
    import subprocess
    import sys

    mine = sorted(os.sched_getaffinity(0))
    show = [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]
    env = {"PATH": os.environ["PATH"], "PXQ_BIND_CPUS": f"{mine[0]};{mine[-1]}", "PMI_RANK": "1"}
    out = subprocess.run([str(paths.BIND_WRAPPER), *show], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == str([mine[-1]])
    env["PMI_RANK"] = "5"
    out = subprocess.run([str(paths.BIND_WRAPPER), *show], env=env, capture_output=True, text=True)
    assert out.returncode == 2 and "no cores planned for rank 5" in out.stderr


def test_the_launcher_must_belong_to_the_build_s_mpi(tmp_path, monkeypatch):
    fake = {}
    for name, version in (("mpirun", "mpirun (Open MPI) 4.1.4"), ("mpiexec.hydra", "HYDRA build details:")):
        exe = tmp_path / name
        exe.write_text(f"#!/bin/sh\necho '{version}'\n")
        exe.chmod(0o755)
        fake[name] = str(exe)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("PXQ_MPIRUN", raising=False)
    mpi.launcher_flavour.cache_clear()
    assert find_mpirun("mpich") == fake["mpiexec.hydra"]  # not the alternatives' mpirun (Open MPI's here)
    assert find_mpirun("open-mpi") == fake["mpirun"]
    monkeypatch.setenv("PXQ_MPIRUN", fake["mpirun"])
    with pytest.raises(InputError, match="is Open MPI's launcher but pxq .* was built with MPICH"):
        find_mpirun("mpich")
    monkeypatch.delenv("PXQ_MPIRUN")
    (tmp_path / "mpiexec.hydra").unlink()
    with pytest.raises(InputError, match="apt-get install mpich"):
        find_mpirun("mpich")
    mpi.launcher_flavour.cache_clear()


def test_the_output_shown_leaves_out_launcher_noise_and_the_runs_private_paths(tmp_path):
    from pxq.experiments import runner

    private = tmp_path / "pxq-run-abc"
    out = (
        "[vm:31819] plm:rsh: Warning: setpgid(31824,31824) failed in parent with errno=Permission denied(13)\n"
        " Verification    = SUCCESSFUL\n"
        f"pxq-msgprof: record appended to {private}/msgprof.jsonl\n"
        "pxq-msgprof: record appended to results/msgprof.jsonl\n"
    )
    assert runner.shown(out, private) == (
        " Verification    = SUCCESSFUL\npxq-msgprof: record appended to results/msgprof.jsonl\n"
    )


def test_launcher_flags_go_after_the_launcher_even_behind_a_cluster_s_prefix():
    """Flags for mpirun (a lab's -x, a profile's preload) follow mpirun itself, which on a cluster
    of this machine comes after the prefix that enters the head."""
    from pxq.launch.request import LaunchPlan

    head = ["nsenter", "--net=/run/netns/pxqc-pxq-head", "--", "/usr/bin/mpirun", "-np", "2"]
    got = LaunchPlan("cluster", head).with_flags(["-x", "A=1"])
    assert got == [*head[:4], "-x", "A=1", "-np", "2"]
    assert LaunchPlan("local", ["mpirun", "-np", "2"]).with_flags(["-x", "A=1"]) == ["mpirun", "-x", "A=1", "-np", "2"]


def test_mpich_on_a_cluster_of_this_machine_starts_on_the_head_and_enters_each_node(tmp_path, monkeypatch):
    """Hydra's mpiexec on the head, its proxies calling back at the head's address; the agent
    enters node K for host nK; each rank bound to the cores pxq planned; more ranks than cores
    refused (UCX's TCP hangs in MPI_Finalize then), as is a layout with more nodes than the cluster's."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    c = Cluster("lab", 2, {"name": "1gbit"}, 9000, [101, 102], 2, 0.1, False)
    monkeypatch.setattr(netns, "current", lambda: c)
    p = hydra(Layout(2, 1), tmp_path, launcher="cluster")
    assert p.launcher == "cluster" and p.mpi == "mpich"
    assert p.argv[:4] == ["nsenter", "--net=/run/netns/pxqc-lab-head", "--", "/usr/bin/mpiexec.hydra"]
    assert p.argv[p.argv.index("-localhost") + 1] == HEAD_ADDRESS
    assert p.argv[p.argv.index("-hosts") + 1 :][:3] == ["n0,n1", "-ppn", "1"]
    assert Path(p.argv[p.argv.index("-launcher-exec") + 1]) == paths.AGENT
    assert p.env["PXQ_CLUSTER_HOLDERS"] == "101,102" and p.env["PXQ_BIND_CPUS"] == "0;1"
    with pytest.raises(InputError, match="hangs in MPI_Finalize"):
        hydra(Layout(2, 2), tmp_path, launcher="cluster", oversubscribe=True)
    with pytest.raises(InputError, match="cluster 'lab' has 2"):
        hydra(Layout(3, 1), tmp_path, launcher="cluster", oversubscribe=True)


def _cluster(per_node: list[list[int]]) -> Cluster:
    n = len(per_node)
    procs = [f"/cg/n{k}" for k in range(n)]
    holders = [101, 102, 103, 104][:n]
    return Cluster(
        "lab", n, {"name": "1gbit"}, 9000, holders, 2, 0.1, False, node_cpus=per_node, cpuset="v1", cpuset_procs=procs
    )


def test_ranks_on_a_cluster_run_on_their_node_s_cores_and_the_agent_joins_its_cpuset(tmp_path, monkeypatch):
    """Each node's ranks take the node's own cores in order: with nodes sharing this machine's two
    cores (n0 0,1; n1 1,0) a 2x1 still gives each rank a core of its own, and 1x2 both of node 0's.
    Ranks reach their nodes line by line of a hostfile, bind_rank.sh binds them (the program
    follows it), and the agent is told each node's cpuset."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(netns, "current", lambda: _cluster([[0, 1], [1, 0]]))
    p = plan(Layout(2, 1), tmp_path)
    assert p.launcher == "cluster" and p.files[str(tmp_path / "hostfile")] == "n0\nn1\n"
    assert p.argv[p.argv.index("rmaps") + 1] == "seq" and p.argv[-1] == str(paths.BIND_WRAPPER)
    assert p.env["PXQ_BIND_CPUS"] == "0;1" and not p.oversubscribed
    assert p.env["PXQ_CLUSTER_CPUSETS"] == "/cg/n0,/cg/n1" and "PXQ_BIND_CPUS" in p.argv  # exported with -x
    assert plan(Layout(1, 2), tmp_path).env["PXQ_BIND_CPUS"] == "0;1"
    cyclic = plan(Layout(2, 2), tmp_path, oversubscribe=True, alloc="cyclic")
    assert cyclic.files[str(tmp_path / "hostfile")] == "n0\nn1\nn0\nn1\n" and cyclic.oversubscribed
    assert cyclic.env["PXQ_BIND_CPUS"] == "0;1;1;0"  # rank 2 is node 0's second: core 1
    with pytest.raises(InputError, match="needs 4 cores but this machine has 2"):
        plan(Layout(2, 2), tmp_path)  # each node holds 2 workers, the machine does not hold 4


def test_a_layout_needing_more_cores_than_a_cluster_node_has_is_refused_with_the_fix(tmp_path, monkeypatch):
    """Nodes of one core each (disjoint): 2x1 fits, 1x2 is refused naming --cores-per-node 2,
    and with --oversubscribe both ranks share node 0's core; MPICH refuses that outright."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(netns, "current", lambda: _cluster([[0], [1]]))
    assert plan(Layout(2, 1), tmp_path).env["PXQ_BIND_CPUS"] == "0;1"
    with pytest.raises(InputError, match="have 1 core each: pxq cluster up --nodes 2 --cores-per-node 2"):
        plan(Layout(1, 2), tmp_path)
    with pytest.raises(InputError, match="--cores-per-node 2"):
        plan(Layout(1, 1, 2), tmp_path)  # two threads of one rank are two workers of the node
    over = plan(Layout(1, 2), tmp_path, oversubscribe=True)
    assert over.oversubscribed and over.env["PXQ_BIND_CPUS"] == "0;0"
    with pytest.raises(InputError, match="hangs in MPI_Finalize"):
        hydra(Layout(1, 2), tmp_path, launcher="cluster", oversubscribe=True)
    assert hydra(Layout(2, 1), tmp_path, launcher="cluster").env["PXQ_BIND_CPUS"] == "0;1"


def test_a_large_driver_record_goes_in_a_file_rank_0_reads_and_the_run_records_it(tmp_path, monkeypatch):
    """What the driver hands the app never meets the kernel's limit on one argument: past
    INLINE_DRIVER_INFO it is a file in the run's own folder (a node list of thousands of hosts,
    a rank order of thousands of ranks), and a real run records it whole."""
    import json
    from dataclasses import replace

    from pxq import cli
    from pxq.experiments import runner

    spec = runner.RunSpec(app="ring", layout=Layout(1, 2), results=tmp_path / "r.jsonl")
    hosts = [f"node{i:05d}" for i in range(8000)]
    (tmp_path / "w").mkdir()
    _, argv = runner.build(replace(spec, driver_extra={"nodelist": hosts}), tmp_path / "w", "big")
    assert max(len(a) for a in argv) < request.INLINE_DRIVER_INFO and "--driver-info" not in argv
    given = json.loads((tmp_path / "w" / "driver-info.json").read_text())
    assert argv[argv.index("--driver-info-file") + 1] == str(tmp_path / "w" / "driver-info.json")
    assert given["nodelist"] == hosts and given["run_id"] == "big"
    _, small = runner.build(spec, tmp_path / "w", "small")
    assert "--driver-info" in small and "--driver-info-file" not in small
    # A real run through the file: the record's driver is the driver's JSON, read by rank 0.
    monkeypatch.setattr(request, "INLINE_DRIVER_INFO", 0)
    results = tmp_path / "ring.jsonl"
    assert cli.main(["run", "ring", "--layout", "1x2", "--results", str(results), "--", "--block", "1M"]) == 0
    (rec,) = [json.loads(ln) for ln in results.read_text().splitlines()]
    assert rec["status"] == "ok" and rec["driver"]["layout"] == "1x2" and len(rec["driver"]["run_id"]) == 32


# ---- the launchers as registered classes, resolved once per run ----


def test_every_launcher_is_registered_by_its_module_with_what_pxq_asks_of_it():
    from pxq.launch import launchers

    assert set(launchers.REGISTRY) == {"local", "virtual", "cluster", "hostfile", "slurm"} == set(launchers.ORDER)
    from pxq.experiments import expfile

    assert expfile.SCHEMA["properties"]["launch"]["properties"]["launcher"]["enum"] == list(launchers.ORDER)
    assert {n for n, c in launchers.REGISTRY.items() if c.plans_cores} == {"local", "virtual", "cluster"}
    assert {n for n, c in launchers.REGISTRY.items() if c.real_nodes} == {"hostfile", "slurm"}
    assert launchers.needs_hostfile("hostfile") and not launchers.needs_hostfile(None)
    assert launchers.emulated("cluster") and not launchers.emulated("virtual")
    with pytest.raises(InputError, match="no such launcher; the launchers are cluster, hostfile, local"):
        launchers.get("ssh")
    with pytest.raises(TypeError, match="a name of its own"):
        type("Again", (launchers.Launcher,), {}, name="local")
    with pytest.raises(TypeError, match="no trait fast"):
        type("Odd", (launchers.Launcher,), {}, name="ssh", fast=True)
    assert launchers.REGISTRY["local"].__name__ == "Local"


def test_every_mpi_has_its_starter_registered_and_each_launcher_names_its_nodes(tmp_path, monkeypatch):
    """Starters register by their class line like launchers; a launch takes its MPI's starter,
    or the launcher's own command line where the launcher starts the ranks itself (srun)."""
    from pxq.launch import hydra, launchers, mpirun
    from pxq.machine.mpi import MPI_NAMES

    assert launchers.STARTERS == {"open-mpi": mpirun.Mpirun, "mpich": hydra.Hydra} and set(MPI_NAMES) == set(
        launchers.STARTERS
    )
    with pytest.raises(TypeError, match="an MPI of its own"):
        type("Again", (launchers.Starter,), {}, mpi="mpich")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    req = LaunchRequest(Layout(2, 1), mpi="mpich", cores=2)
    assert isinstance(launchers.starter(launchers.get("virtual")(req)), hydra.Hydra)
    assert isinstance(launchers.starter(launchers.get("slurm")(req)), mpirun.Mpirun)  # srun starts MPICH's too
    with pytest.raises(InputError, match="cannot start the ranks of MPI 'lam'"):
        launchers.starter(launchers.get("local")(LaunchRequest(Layout(1, 2), mpi="lam")))
    assert launchers.get("local")(req).hosts() == [] and launchers.get("virtual")(req).hosts() == ["n0", "n1"]
    hosts = tmp_path / "hosts"
    hosts.write_text("nodeA\nnodeB\nnodeC\n")
    real = LaunchRequest(Layout(2, 1), mpi="mpich", hostfile=str(hosts))
    assert launchers.get("hostfile")(real).hosts() == ["nodeA", "nodeB"]
    assert {n for n, c in launchers.REGISTRY.items() if c.through_agent} == {"virtual", "cluster"}


@pytest.mark.parametrize(
    ("kw", "env", "up", "expected"),
    [
        ({}, {}, False, "local"),
        ({"layout": Layout(2, 1)}, {}, False, "virtual"),
        ({}, {}, True, "cluster"),
        ({}, {"SLURM_JOB_ID": "7"}, True, "slurm"),
        ({"hostfile": "hosts"}, {"SLURM_JOB_ID": "7"}, True, "hostfile"),
        ({"launcher": "virtual"}, {"SLURM_JOB_ID": "7"}, True, "virtual"),
    ],
)
def test_the_launcher_is_resolved_in_order_and_the_cluster_looked_up_at_most_once(monkeypatch, kw, env, up, expected):
    from pxq.launch import launchers

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    looked: list[int] = []

    def current():
        looked.append(1)
        return _cluster([[0], [1]]) if up else None

    monkeypatch.setattr(netns, "current", current)
    kw = {"layout": Layout(1, 1), **kw}
    got = launchers.resolve(LaunchRequest(**kw))
    assert got.name == expected
    assert len(looked) <= 1
    if expected == "cluster":
        assert got.cluster is not None and got.cluster.name == "lab" and got.req.node_cpus == [[0], [1]]


def test_a_run_on_a_cluster_looks_the_cluster_up_once_and_records_it(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    looked: list[int] = []

    def current():
        looked.append(1)
        return _cluster([[0, 1], [1, 0]])

    monkeypatch.setattr(netns, "current", current)
    p = plan(Layout(2, 1), tmp_path)
    assert p.launcher == "cluster" and len(looked) == 1
    assert p.record()["cluster"]["name"] == "lab"
    looked.clear()
    monkeypatch.setattr(netns, "current", lambda: looked.append(1))
    local = plan(Layout(1, 2), tmp_path)
    assert local.launcher == "local" and local.record() == {} and len(looked) == 1


# ---- the launch session every launch runs in (pxq.launch.session) ----


def test_a_session_passes_variables_as_the_launcher_does_and_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(launch_session, "run_folder_base", lambda launcher, hostfile, beside: str(tmp_path))
    made = {}

    def make(mpi: str):
        def plan(folder):
            made["folder"] = folder
            p = request.LaunchPlan("local", ["mpirun", "-np", "2"], files={str(folder / "ranks"): "x"}, mpi=mpi)
            return p, [*p.argv, "prog", "--flag"]

        return plan

    with launch_session.session(make("open-mpi"), None, None, tmp_path / "r.jsonl", "pxq-run-") as s:
        assert s.folder == made["folder"] and (s.folder / "ranks").read_text() == "x"  # staged in it
        assert s.env["OMPI_MCA_orte_tmpdir_base"] == str(s.folder / "session")
        s.pass_on({"A": "1"})
        assert s.argv == ["mpirun", "-x", "A=1", "-np", "2", "prog", "--flag"] and "A" not in s.env
    assert not made["folder"].exists()
    with launch_session.session(make("mpich"), None, None, tmp_path / "r.jsonl", "pxq-run-", shm=False) as s:
        s.pass_on({"A": "1"})  # Hydra hands the environment on
        assert s.env["A"] == "1" and s.argv == ["mpirun", "-np", "2", "prog", "--flag"]
        s.argv = ["srun", "prog"]
        s.env.pop("A")
        s.plan.mpi = "open-mpi"
        with pytest.raises(ValueError, match="no longer begins"):
            s.pass_on({"B": "2"})
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("pxq-run-")] == []
