"""pxq's proxies and probes as ReFrame tests: the library (in the style of ReFrame's hpctestlib).

The classes here are not registered tests: a site derives one per system and marks it with
``@rfm.simple_test`` (``checks/pxq_local.py`` does so for this machine). Each runs one pxq
program under the system's own launcher (``mpirun``, ``srun``, ...):

- sanity is pxq's own verification: the banner's ``Verification = SUCCESSFUL`` line, a zero
  exit code and the run record (``--json``) marked ok and passed;
- the performance variables come from that record, the same two for every proxy and variant
  (one column each in ReFrame's performance log): ``time_total`` and ``rate``, the app's
  headline rate (Mop/s for the NAS proxies, GB/s for the ring; its unit says which); the
  OSU-style probe's latency or bandwidth;
- references per system come from a JSON file (``PXQ_REFRAME_REFERENCES``, default
  ``references.json`` beside this file) keyed by ``system:partition``, then the test's
  display name (``pxq_proxy_local %app=cg %mode=flat``), then the variable:
  ``[value, lower, upper, unit]`` as ReFrame's references are (no file: no references).

pxq's programs are found in ``PXQ_BUILD_DIR`` (default: the checkout's ``build/``), or
wherever the ``pxq_build`` variable points (``-S pxq_build=/opt/pxq``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

ROOT = Path(__file__).resolve().parents[2]
RECORD = "record.jsonl"
# The headline rate in a proxy's record ("metrics") and its unit, per app. Every variant of
# every app reports the same variables (time_total and rate), so that ReFrame's performance log
# of the check class has one column per variable on every line, as its header says.
RATES = {
    "ring": ("effective_gbs", "GB/s"),
    "cg": ("mops_total", "Mop/s"),
    "mg": ("mops_total", "Mop/s"),
    "ft": ("mops_total", "Mop/s"),
    "is": ("mops_total", "Mop/s"),
}


def default_build() -> str:
    return os.environ.get("PXQ_BUILD_DIR") or str(ROOT / "build")


def references() -> dict:
    """The site's references: {system:partition: {test name: {variable: [v, lo, hi, unit]}}}."""
    path = Path(os.environ.get("PXQ_REFRAME_REFERENCES") or Path(__file__).with_name("references.json"))
    if not path.exists():
        return {}
    return json.loads(path.read_text())


@sn.deferrable
def last_record(path: str) -> dict:
    """The last record the program appended; {} when it wrote none (sanity then fails)."""
    p = Path(path)
    lines = [ln for ln in p.read_text().splitlines() if ln.strip()] if p.exists() else []
    return json.loads(lines[-1]) if lines else {}


@sn.deferrable
def record_verified(path: str) -> bool:
    rec = last_record(path).evaluate()
    return rec.get("status") == "ok" and bool(rec.get("verification", {}).get("passed"))


@sn.deferrable
def record_value(path: str, section: str, key: str) -> float:
    return float(last_record(path).evaluate()[section][key])


class pxq_check(rfm.RunOnlyRegressionTest):
    """What every pxq check shares: where the programs are, the record, the references."""

    #: The build (or install) folder whose bin/ holds pxq's programs.
    pxq_build = variable(str, value=default_build())
    #: Extra options for the program.
    pxq_options = variable(typ.List[str], value=[])
    #: Ranks and ranks per node: the layout (p nodes x q ranks per node).
    num_tasks = 2
    num_tasks_per_node = 2
    sourcesdir = None
    #: pxq's record is kept with the outputs ReFrame keeps.
    keep_files = [RECORD]
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    maintainers = ["pxq"]
    tags = {"pxq"}

    def program(self, name: str) -> str:
        return str(Path(self.pxq_build) / "bin" / f"pxq-{name}")

    @run_after("setup")
    def set_references(self):
        key = f"{self.current_system.name}:{self.current_partition.name}"
        refs = references().get(key, {}).get(self.display_name)
        if refs:
            self.reference = {key: {var: tuple(ref) for var, ref in refs.items()}}

    @sanity_function
    def verified(self):
        return sn.all(
            [
                sn.assert_eq(self.job.exitcode, 0, msg="the program exited {0}, not 0"),
                sn.assert_found(r"Verification\s+=\s+(SUCCESSFUL|PASSED)", self.stdout),
                sn.assert_true(record_verified(self.record_path()), msg="the record is not ok and verified"),
            ]
        )

    def record_path(self) -> str:
        return os.path.join(self.stagedir, RECORD)


class pxq_proxy_check(pxq_check):
    """One proxy (ring, CG, MG, FT, IS) in one variant; parameterise app and mode."""

    app = parameter(["ring", "cg", "mg", "ft", "is"])
    mode = parameter(["flat", "tiled", "hybrid"])
    #: NAS problem class (the ring has none): A, whose runs take 0.2-1 s on two cores, long
    #: enough that launch and timer noise do not set them (pxq's report flags runs under 0.1 s;
    #: class S's take 1-30 ms).
    nas_class = variable(str, value="A")
    #: OpenMP threads per rank in the hybrid variant.
    threads = variable(int, value=2)

    @run_before("run")
    def set_command(self):
        self.executable = self.program(self.app)
        opts = ["--mode", self.mode, "--json", RECORD]
        if self.app != "ring":
            opts += ["--class", self.nas_class, "--quiet"]
        threads = self.threads if self.mode == "hybrid" else 1
        opts += ["--threads", str(threads)]
        self.num_cpus_per_task = threads
        self.env_vars["OMP_NUM_THREADS"] = str(threads)
        self.executable_opts = opts + list(self.pxq_options)

    @run_before("performance")
    def set_perf_variables(self):
        path = self.record_path()
        perf = sn.make_performance_function
        key, unit = RATES[self.app]
        self.perf_variables = {
            "time_total": perf(record_value(path, "time", "total"), "s"),
            "rate": perf(record_value(path, "metrics", key), unit),
        }


class pxq_osu_check(pxq_check):
    """The OSU-style probe (latency or bw) with OSU's flags, its data validated (-c)."""

    benchmark = parameter(["latency", "bw"])
    #: The message size whose figure is the performance variable (bytes).
    message_size = variable(int, value=8)

    @run_before("run")
    def set_command(self):
        self.executable = self.program("probe-osu")
        size = self.message_size
        self.executable_opts = [self.benchmark, "-m", f"{size}:{size}", "-c", "--json", RECORD, *self.pxq_options]

    @run_before("performance")
    def set_perf_variables(self):
        unit = "us" if self.benchmark == "latency" else "MB/s"
        pattern = rf"^{self.message_size}\s+(\S+)"
        figure = sn.extractsingle(pattern, self.stdout, 1, float)
        self.perf_variables = {self.benchmark: sn.make_performance_function(figure, unit)}

    @sanity_function
    def verified(self):
        return sn.all(
            [
                sn.assert_eq(self.job.exitcode, 0, msg="the probe exited {0}, not 0"),
                sn.assert_found(r"Validation\s+=\s+PASSED", self.stdout),
            ]
        )
