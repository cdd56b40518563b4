"""ReFrame's configuration for pxq's checks on this machine: one system, its programs started
with mpirun (Open MPI's, or MPICH's where that is the default), one job at a time (the checks
measure; they must not share the cores). A site adds its own systems beside it, with their
scheduler and launcher (Slurm and srun, ...): the checks need nothing else.
"""

import os

# Open MPI refuses root unless told (a VM or a container run as root).
_root_env = [["OMPI_ALLOW_RUN_AS_ROOT", "1"], ["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"]] if os.geteuid() == 0 else []

site_configuration = {
    "systems": [
        {
            "name": "pxq-local",
            "descr": "this machine, its ranks started with mpirun",
            "hostnames": [".*"],
            "modules_system": "nomod",
            "partitions": [
                {
                    "name": "default",
                    "descr": "every core of this machine",
                    "scheduler": "local",
                    "launcher": "mpirun",
                    "environs": ["builtin"],
                    "max_jobs": 1,
                    "processor": {"num_cpus": os.cpu_count() or 1},
                    # Ranks with more threads than cores are still correct; --oversubscribe lets
                    # Open MPI start them (hybrid on 2 cores).
                    "env_vars": [*_root_env, ["OMPI_MCA_rmaps_base_oversubscribe", "1"]],
                }
            ],
        }
    ],
    "environments": [{"name": "builtin", "cc": "mpicc", "cxx": "mpicxx", "ftn": ""}],
    # ReFrame's log in the folder it runs from (not a temporary file), and its performance log
    # per system and partition under the prefix's perflogs/, one line per variable.
    "logging": [
        {
            "handlers": [
                {
                    "type": "file",
                    "name": "reframe.log",
                    "level": "debug",
                    "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s",
                    "append": False,
                }
            ],
            "handlers_perflog": [
                {
                    "type": "filelog",
                    "prefix": "%(check_system)s/%(check_partition)s",
                    "level": "info",
                    "format": "%(check_job_completion_time)s|%(check_info)s|%(check_perfvalues)s",
                    "format_perfvars": "%(check_perf_var)s=%(check_perf_value)s %(check_perf_unit)s "
                    "(ref %(check_perf_ref)s)|",
                    "append": True,
                }
            ],
        }
    ],
}
