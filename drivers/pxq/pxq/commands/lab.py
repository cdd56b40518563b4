"""`pxq lab list | start N | check N | grade N DIR...`: the teaching labs (labs/, pxq.labs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from pxq.core import bounds, plugins
from pxq.teaching import grading, teach
from pxq.teaching import harness as labs

EXITS = "; ".join(f"{code} {grade} ({meaning})" for code, (grade, meaning) in sorted(labs.GRADES.items()))


def add(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    sub.add_parser("list", help="the six labs, their time and the files you edit")
    st = sub.add_parser("start", help="copy a lab's starter into a working folder")
    st.add_argument("lab", help="the lab's number (1-6) or folder name")
    st.add_argument("--dir", type=Path, help="your working folder (default labs-work/NN-name)")
    ck = sub.add_parser(
        "check",
        help="build your copy, verify it exactly, tell whether the exercise is done, measure the effect",
        description=f"Exit codes: {EXITS}. A missing effect never fails: noise is not a grade.",
    )
    ck.add_argument("lab", help="the lab's number (1-6) or folder name")
    which = ck.add_mutually_exclusive_group()
    which.add_argument("--solution", dest="which", action="store_const", const="solution", help="check the solution")
    which.add_argument("--begin", dest="which", action="store_const", const="begin", help="check the starter")
    ck.add_argument("--dir", type=Path, help="your working folder (default labs-work/NN-name)")
    _common(ck)
    ck.add_argument("--json", type=Path, help="also write the grade here as JSON (outcome, checks, effects)")
    ck.set_defaults(which="copy")
    te = sub.add_parser(
        "teach",
        help="the teacher's folder for a lab: its guide with the rubric for the written answers, and slides (HTML)",
    )
    te.add_argument("lab", help="the lab's number (1-6) or folder name")
    te.add_argument("--out", type=Path, help="the folder (default results/teacher/NN-name)")
    gr = sub.add_parser(
        "grade",
        help="grade many students' copies of one lab: one table (CSV and markdown)",
        description=f"Each copy is checked as `pxq lab check` does, one after the other. Grades: {EXITS}. "
        "Exit 0 when every copy was graded (whatever the grades), 2 when a folder could not be.",
    )
    gr.add_argument("lab", help="the lab's number (1-6) or folder name")
    gr.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="the students' copies")
    _common(gr)
    gr.add_argument(
        "--out", type=Path, default=Path("results/lab-grades"), help="table prefix: OUT.csv, OUT.md, OUT.json"
    )


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeat", type=int, default=3, help="interleaved repeats of each measurement (default 3)")
    p.add_argument(
        "--budget",
        help="time the timed effect may take in further paired rounds until it is settled, e.g. 90s, 5m "
        "(default none: --repeat rounds only)",
    )
    p.add_argument("--hostfile", help="run on the hosts of this MPI hostfile (inside Slurm: the allocation)")
    p.add_argument(
        "--network",
        metavar="PROFILE",
        help="run on a 2-node cluster of this machine brought up for this command, its links shaped to PROFILE "
        "(as `pxq cluster up --link`; root only): lab 1's other node is then across that link",
    )
    p.add_argument(
        "--unconfined",
        action="store_true",
        help="build and run a student's copy with your own rights, outside its sandbox (bubblewrap): only for "
        "code you trust, or on other hosts, which cannot be confined from here",
    )


def handle(args: argparse.Namespace, app_args: list[str], console: Console) -> int:
    if args.action == "list":
        return labs.overview(console)
    mod = labs.get(args.lab)
    budget = bounds.duration(args.budget) if getattr(args, "budget", None) is not None else 0.0
    if args.action == "start":
        return labs.start(mod, args.dir or labs.default_copy(mod), console)
    if args.action == "teach":
        for path in teach.write(mod, args.out):
            console.print(f"written: {path}")
        return 0
    if args.action == "grade":
        return grading.grade_class(
            mod, args.dirs, args.repeat, args.hostfile, args.out, console, args.unconfined, budget
        )
    if args.json is not None:
        labs.check_writable_json(args.json)
    code, _, record = labs.grade(
        mod, args.which, args.dir, args.repeat, console, args.hostfile, args.unconfined, budget
    )
    if args.json is not None:
        labs.write_json(args.json, record)
        console.print(f"grade: {args.json}")
    return code


PLUGIN = plugins.Command(
    help="the teaching labs: list them, start one, check your work, grade a class (labs/README.md)",
    order=9,
    hooks=plugins.CommandHooks(add, handle),
    example="./pxq lab start 4 && ./pxq lab check 4",
)
