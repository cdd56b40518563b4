"""ReFrame's configuration for pxq's checks on this machine: one system, its programs started
with mpirun (Open MPI's, or MPICH's where that is the default), one job at a time (the checks
measure; they must not share the cores). A site adds its own systems beside it, with their
scheduler and launcher (Slurm and srun, ...): the checks need nothing else.
"""

import copy
import os

from reframe.core.settings import site_configuration as _builtin

# ReFrame's own performance log, kept whole: its result, completion time and every loggable
# field of the check (job id, references and thresholds, and pxq's variables: app, mode, class,
# layout), one line per run in ReFrame's header format; pxq replaces none of it.
_perflog = copy.deepcopy(next(lg["handlers_perflog"] for lg in _builtin["logging"] if "handlers_perflog" in lg))

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
    # ReFrame's log in the folder it runs from (not a temporary file), and its default
    # performance log per system and partition under the prefix's perflogs/.
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
            "handlers_perflog": _perflog,
        }
    ],
}
