"""`pxq sweep --submit | --collect`: a sweep as Slurm batch jobs, one per layout.

--submit writes RESULTS.jobs/ beside the results file: one sbatch script per layout (its
allocation: p nodes, q tasks per node, T cpus per task, the largest T the sweep asks of that
layout), each running `pxq sweep` for its layout inside the allocation (the srun launcher)
into RESULTS.jobs/LAYOUT.jsonl with --resume, so a requeued job goes on where it stopped; then
submits them and keeps the job ids in RESULTS.jobs/manifest.json. --dry-run prints the scripts.
--collect waits for those jobs to leave the queue and appends their records to RESULTS (each
record once, however often it is collected), then reports the sweep as `pxq sweep` does.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from pxq.core import door, escape, outputs, procs, records
from pxq.core.errors import InputError
from pxq.core.layout import Layout
from pxq.core.paths import PACKAGE, build_dir
from pxq.experiments.runner import RunSpec

# The sweep options a job passes on (dest, flag); the layouts and results are each job's own.
FORWARDED = (
    ("modes", "--modes"),
    ("tiles", "--tiles"),
    ("backends", "--backends"),
    ("repeat", "--repeat"),
    ("fuse", "--fuse"),
    ("alloc", "--alloc"),
    ("placement", "--placement"),
    ("placement_cores", "--cores"),
    ("timeout", "--timeout"),
    ("problem_class", "--class"),
    ("counters", "--counters"),
)


@dataclass
class Job:
    layout: str
    script: Path
    results: Path
    runs: int
    job_id: str = ""


def jobs_dir(results: Path) -> Path:
    return results.with_name(results.name.removesuffix(".jsonl") + ".jobs")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise InputError(f"{name} not found: --submit and --collect need Slurm's commands (load your site's module)")
    return found


def _sweep_argv(args: argparse.Namespace, app_args: list[str], layout: str, results: Path) -> list[str]:
    argv = [sys.executable, "-m", "pxq", "sweep", args.app, "--layouts", layout]
    for dest, flag in FORWARDED:
        value = getattr(args, dest, None)
        if value is not None and value is not False:
            argv += [flag, str(value)]
    if args.oversubscribe:
        argv.append("--oversubscribe")
    argv += ["--results", str(results), "--resume"]
    if getattr(args, "experiment", None):  # the experiment file's identity, for every record of the job
        argv += ["--experiment-identity", json.dumps(args.experiment, sort_keys=True)]
    return argv + (["--", *app_args] if app_args else [])


# What a path on an #SBATCH line may hold: Slurm reads those lines itself, with no shell
# quoting, so a space ends the option and a newline would start a line of the script.
_SBATCH_SAFE = re.compile(r"[A-Za-z0-9_./+@%:,=-]+")


def check_script_path(path: Path) -> None:
    """A path that goes into a job script: refused (exit 2) when an #SBATCH line cannot carry it."""
    if not _SBATCH_SAFE.fullmatch(str(path)):
        raise InputError(
            f"--results {shlex.quote(escape.plain(str(path)))}: --submit writes it into #SBATCH lines, which "
            "cannot carry white space, quotes, $, ` or control characters: use a path of letters, digits "
            "and ._-/ only"
        )


def add_site_options(p: argparse.ArgumentParser) -> None:
    """What every site asks of a batch job, and a pass-through for the rest (with --submit)."""
    g = p.add_argument_group("batch jobs (--submit)")
    g.add_argument("--time", help="each job's time limit, as Slurm takes it: MINUTES, HH:MM:SS or D-HH:MM:SS")
    g.add_argument("--account", help="the account the jobs are charged to")
    g.add_argument("--partition", help="the partition (queue) the jobs go to")
    g.add_argument("--exclusive", action="store_true", help="the jobs' nodes for them alone (no other jobs)")
    g.add_argument(
        "--sbatch",
        action="append",
        default=[],
        metavar="OPTION",
        help="any other sbatch option, one word each, e.g. --sbatch=--qos=debug (repeatable)",
    )


_TIME = re.compile(r"\d{1,6}|\d{1,4}:\d{2}(:\d{2})?|\d{1,3}-\d{1,2}(:\d{2}(:\d{2})?)?")


def site_lines(args: argparse.Namespace) -> list[str]:
    """The #SBATCH lines of the site options, each checked: a line Slurm reads must not carry
    white space, quotes or shell characters, and a time must be one Slurm reads."""
    used = any(getattr(args, k, None) for k in ("time", "account", "partition", "exclusive", "sbatch"))
    if used and not args.submit:
        raise InputError("--time, --account, --partition, --exclusive and --sbatch go with --submit (batch jobs)")
    lines = []
    if args.time is not None:
        if not _TIME.fullmatch(args.time):
            raise InputError(
                f"--time {shlex.quote(args.time)}: give MINUTES, HH:MM:SS or D-HH:MM:SS, e.g. 30 or 1:30:00"
            )
        lines.append(f"#SBATCH --time={args.time}")
    for flag in ("account", "partition"):
        value = getattr(args, flag)
        if value is not None:
            if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,128}", value):
                raise InputError(f"--{flag} {shlex.quote(escape.plain(value))}: use letters, digits and ._+- only")
            lines.append(f"#SBATCH --{flag}={value}")
    if args.exclusive:
        lines.append("#SBATCH --exclusive")
    for option in args.sbatch:
        if not option.startswith("--") or not _SBATCH_SAFE.fullmatch(option):
            raise InputError(
                f"--sbatch {shlex.quote(escape.plain(option))}: give one sbatch option as one word, such as "
                "--sbatch=--qos=debug (no white space, quotes or shell characters)"
            )
        lines.append(f"#SBATCH {option}")
    return lines


def script_text(args: argparse.Namespace, app_args: list[str], job: Job, layout: Layout) -> str:
    folder = job.script.parent
    check_script_path(folder)
    collect = job.results.parent.parent / (folder.stem + ".jsonl")
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name=pxq-{args.app}-{job.layout}",
        f"#SBATCH --nodes={layout.nodes}",
        f"#SBATCH --ntasks-per-node={layout.ranks_per_node}",
        f"#SBATCH --cpus-per-task={layout.threads}",
        f"#SBATCH --output={folder / job.layout}-%j.out",
        *site_lines(args),
        f"# pxq sweep {args.app} on layout {job.layout} ({job.runs} runs), written by pxq sweep --submit;",
        f"# pxq sweep {args.app} --collect --results {shlex.quote(str(collect))} gathers its records.",
        "set -euo pipefail",
        f"export PYTHONPATH={shlex.quote(str(PACKAGE.parent))}${{PYTHONPATH:+:$PYTHONPATH}}",
        f"export PXQ_BUILD_DIR={shlex.quote(str(build_dir().resolve()))}",
        f"exec {shlex.join(_sweep_argv(args, app_args, job.layout, job.results))}",
    ]
    return "\n".join(lines) + "\n"


def plan_jobs(
    args: argparse.Namespace, app_args: list[str], configs: list[RunSpec], results: Path
) -> tuple[list[Job], list[str]]:
    """The scripts, one per layout, with the allocation each needs; returns their texts."""
    folder = jobs_dir(results.resolve())
    by_layout: dict[str, list[RunSpec]] = {}
    for spec in configs:
        by_layout.setdefault(str(spec.layout), []).append(spec)
    jobs, texts = [], []
    for name, specs in by_layout.items():
        threads = max(spec.resolved()[1] for spec in specs)
        layout = specs[0].layout.with_threads(threads)
        job = Job(name, folder / f"{name}.sbatch", folder / f"{name}.jsonl", len(specs) * args.repeat)
        jobs.append(job)
        texts.append(script_text(args, app_args, job, layout))
    return jobs, texts


def submit(
    args: argparse.Namespace, app_args: list[str], configs: list[RunSpec], results: Path, console: Console
) -> int:
    jobs, texts = plan_jobs(args, app_args, configs, results)
    if args.dry_run:
        for job, text in zip(jobs, texts):
            console.print(f"# {job.script}", markup=False)
            print(text)
        return records.EXIT_OK
    sbatch = _tool("sbatch")
    folder = jobs[0].script.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            f"cannot create {folder} for the job scripts ({e.strerror}): use --results elsewhere"
        ) from None
    manifest = folder / "manifest.json"
    if manifest.exists():
        raise InputError(
            f"{manifest} holds a sweep already submitted: collect it (pxq sweep {args.app} --collect "
            f"--results {results}) or give another --results"
        )
    for job, text in zip(jobs, texts):
        outputs.write(job.script, text, "script", "a job script")
        out = subprocess.run([sbatch, "--parsable", str(job.script)], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            _write_manifest(manifest, args.app, results, [j for j in jobs if j.job_id])
            raise InputError(f"sbatch {job.script} failed: {out.stderr.strip() or out.stdout.strip()}")
        job.job_id = out.stdout.strip().split(";")[0]
        console.print(f"submitted job {job.job_id}: layout {job.layout}, {job.runs} runs ({job.script})")
    _write_manifest(manifest, args.app, results, jobs)
    console.print(f"collect with: pxq sweep {args.app} --collect --results {results}")
    return records.EXIT_OK


def _write_manifest(path: Path, app: str, results: Path, jobs: list[Job]) -> None:
    body = {
        "app": app,
        "results": str(results.resolve()),
        "submitted": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "jobs": [
            {"layout": j.layout, "script": str(j.script), "results": str(j.results), "runs": j.runs, "job_id": j.job_id}
            for j in jobs
        ],
    }
    outputs.write(path, outputs.dumps(body, indent=2) + "\n", "json", "the jobs' manifest")


def _read_manifest(results: Path, app: str) -> list[Job]:
    path = jobs_dir(results.resolve()) / "manifest.json"
    try:
        body = door.json_doc(path, "the jobs' manifest", "it is written by pxq sweep --submit")
        jobs = [
            Job(j["layout"], Path(j["script"]), Path(j["results"]), int(j["runs"]), str(j["job_id"]))
            for j in body["jobs"]
        ]
    except FileNotFoundError:
        raise InputError(
            f"no submitted sweep for {results} ({path} is missing): run pxq sweep {app} ... --submit "
            "first, with the same --results"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path} is damaged ({e}): resubmit with pxq sweep {app} ... --submit") from None
    if body.get("app") != app:
        raise InputError(f"{path} is a sweep of {body.get('app')}, not {app}: pxq sweep {body.get('app')} --collect")
    return jobs


def _queued(job_ids: list[str]) -> dict[str, str]:
    """The jobs still in the queue, with their state."""
    out = subprocess.run(
        [_tool("squeue"), "-h", "-o", "%i %T", "-j", ",".join(job_ids)], capture_output=True, text=True, timeout=60
    )
    if out.returncode != 0 and "Invalid job id" not in out.stderr:
        raise InputError(f"squeue failed: {out.stderr.strip()}")
    return dict(line.split(maxsplit=1) for line in out.stdout.splitlines() if line.strip())


def wait(jobs: list[Job], console: Console, poll: float = 2.0) -> None:
    ids = [j.job_id for j in jobs]
    try:
        _poll(ids, console, poll)
    except (KeyboardInterrupt, procs.Interrupted):
        # The driver's stop message follows; what is stopped here is only the waiting.
        console.print(f"[yellow]stopped waiting: jobs {', '.join(ids)} run on in Slurm; collect again later[/yellow]")
        raise


def _poll(ids: list[str], console: Console, poll: float) -> None:
    with console.status("waiting for the jobs") as status:
        while True:
            queued = _queued(ids)
            if not queued:
                return
            states = ", ".join(f"{i} {s.lower()}" for i, s in sorted(queued.items()))
            status.update(f"waiting for {len(queued)} of {len(ids)} job(s): {states}")
            time.sleep(poll)


def collect(app: str, results: Path, console: Console) -> tuple[list[dict], list[str]]:
    """Waits for the jobs, appends their records not yet in RESULTS, and returns every record of
    the sweep and the problems (a job with fewer records than runs)."""
    jobs = _read_manifest(results, app)
    wait(jobs, console)
    records.check_writable(results)
    same = lambda rec: json.dumps(rec, sort_keys=True)  # noqa: E731 (a record is collected once)
    have = {same(r) for r in records.read(results)}
    collected, problems = [], []
    for job in jobs:
        recs = records.read(job.results)
        for rec in recs:
            if same(rec) not in have:
                records.append(results, rec)
                have.add(same(rec))
        done = records.final(recs)
        collected += done
        if len(done) < job.runs:
            outs = sorted(job.script.parent.glob(f"{job.layout}-{job.job_id}.out"))
            problems.append(
                f"job {job.job_id} (layout {job.layout}) left {len(done)} of {job.runs} runs: see "
                f"{outs[0] if outs else job.script.parent}"
            )
    return collected, problems
