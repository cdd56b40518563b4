"""The teaching labs (labs/NN-name in the checkout): `pxq lab list | start NN | check NN`.

A lab folder holds the harness (files beside its CMakeLists.txt), `begin/` (the starter, with
`// LAB:` markers where the student works) and `solution/`; `cmake -DLAB_SOURCE=` picks which
student files to build. A lab's checker (pxq.labs) declares a plugins.Lab: number, folder, title,
minutes, program (the executable), kokkos (True when the build needs Kokkos), timeout (seconds a
run may take before it is called a hang) with hang_hint (the likely cause, named), and
`measure(ctx) -> Outcome`: it
runs the built program through `ctx.run`, checks correctness (exact, as the proxies do, from
what the harness computes: the student's code never prints the result line), tells whether the
exercise is done from what the code does (tiles, threads, round trips: never from a speed), and
says whether the effect the lab teaches shows, timed with interleaved repeats or counted.

The grade has three outcomes, each its own exit code (GRADES): not correct (a wrong result, a
crash, a hang, a compile error), not done (correct, but the starter's behaviour), done. A
missing effect never fails a student: "no clear effect" or "too noisy to read here".

Over 400 lines: a lab's whole path (copy, build, confined run, result line, grade, the overview)
is one protocol with the labs' checkers; the sandbox and the class's grading are apart."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq.analysis.messages.msgdist import preload_env
from pxq.analysis.verdicts import findings, settle
from pxq.core import bounds, door, escape, outputs, plugins, procs, records, schemas
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.core.paths import AGENT, BIND_WRAPPER, ROOT, build_dir
from pxq.launch import netns
from pxq.launch.hostfile import hostfile_hosts
from pxq.launch.request import LaunchRequest
from pxq.launch.session import request_plan, session
from pxq.machine import envinfo
from pxq.teaching import copies, prediction, sandbox, sealing

LABS = ROOT / "labs"
MARKER = ".pxq-lab.json"  # written by `start` into the student's copy
EXIT_BUILD = 4  # the lab's code does not build (its compiler errors are shown)
EXIT_NOT_DONE = 5  # correct, but the exercise is not done: the code still behaves as the starter
# Exit code -> (grade, meaning), as `pxq lab check --help` and the teacher's guide list them.
GRADES = {
    0: ("done", "correct, and the exercise is done"),
    1: ("not correct", "a wrong result"),
    2: ("bad input", "the command or the copy's folder is wrong: nothing was graded"),
    3: ("not correct", "a crash or a hang"),
    EXIT_BUILD: ("not correct", "the code does not build"),
    EXIT_NOT_DONE: ("not done", "correct, but the code still does what the starter does"),
}
RESULT = re.compile(r"^LAB-RESULT (\S+) (\{.*\})\s*$", re.M)
EFFECT = {
    "reproduced": "the effect shows",
    "not reproduced": "no clear effect",
    "inconclusive": "too noisy to read here",
    "not judged": "not judged: your code does not do what the lab teaches yet",
}
TIMEOUT = 120.0  # seconds a lab run may take unless the lab says otherwise
RUN_OUTPUT = 64 << 20  # bytes one of pxq's own lab runs may print (a student's: its sandbox's limit)


class LabFailure(Exception):
    """The student's program failed: a wrong result (exit 1), a crash or a hang (exit 3)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Effect:
    sentence: str  # "tiled is 2.3x faster than untiled"
    ratio: float
    noise: float  # the spread of the repeats, (max - min) / median
    verdict: str  # reproduced (shows), not reproduced (no clear effect), inconclusive (too noisy)
    why: str = ""  # why no clear effect can happen here (shown when it does not show)
    published: str = ""  # the published figure, with its source
    counted: bool = False  # a count (exact, no noise), not a timing
    repeats: int = 1
    settle: str = ""  # when too noisy: the repeats that would settle it
    paired: str = ""  # judged on paired rounds: the settled comparison's words ("1.52x faster [1.41-1.63] ...")


@dataclass
class Outcome:
    table: Table | None
    code_note: str  # what the student's code does, from its own run (the tests check it)
    starter_like: bool  # the code still behaves as the starter does: "not done"
    effect: Effect | None  # the effect the lab teaches
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    more: list[Effect] = field(default_factory=list)  # further effects (a count beside a time)
    checks: list[dict[str, Any]] = field(default_factory=list)  # what was checked: name, passed, detail
    prediction: dict[str, Any] | None = None  # the prediction's grade (pxq.teaching.prediction.graded)

    @property
    def effects(self) -> list[Effect]:
        return [e for e in (self.effect, *self.more) if e is not None]


def registry() -> tuple[plugins.Lab, ...]:
    """The labs by number."""
    return plugins.labs()


def get(key: str) -> plugins.Lab:
    """A lab by number ("4", "04") or folder name ("04-tile-ring", "tile-ring")."""
    text = key.strip().lower()
    for mod in registry():
        if text in (str(mod.number), f"{mod.number:02d}", mod.folder, mod.folder[3:]):
            return mod
    names = ", ".join(f"{m.number} ({m.folder})" for m in registry())
    raise InputError(f"unknown lab '{key}': use one of {names}; ./pxq lab list shows them")


def folder(mod: plugins.Lab) -> Path:
    return LABS / mod.folder


def student_files(mod: plugins.Lab) -> list[str]:
    """The files a student edits: those of begin/."""
    return sorted(p.name for p in (folder(mod) / "begin").iterdir() if p.is_file())


def default_copy(mod: plugins.Lab) -> Path:
    return Path("labs-work") / mod.folder


def start(mod: plugins.Lab, dest: Path, console: Console) -> int:
    """Copies the starter into dest (refusing to overwrite a copy with work in it)."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(
            f"{dest} already exists and is not empty: your work may be there. Check it with "
            f"./pxq lab check {mod.number} --dir {dest}, or start in another folder with --dir"
        )
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for name in student_files(mod):
            shutil.copy2(folder(mod) / "begin" / name, dest / name)
        (dest / MARKER).write_text(json.dumps({"lab": mod.folder}) + "\n", encoding="utf-8")
    except OSError as e:
        shutil.rmtree(dest, ignore_errors=True)
        raise InputError(f"cannot make {dest} ({e.strerror}): choose a writable folder with --dir") from None
    console.print(f"lab {mod.number}: {mod.title} (about {mod.minutes} minutes)")
    console.print(f"your copy: {dest}  (the harness stays in {folder(mod)})")
    for name in student_files(mod):
        lines = (dest / name).read_text().splitlines()
        marks = [i for i, ln in enumerate(lines, 1) if "// LAB" in ln or ln.lstrip().startswith("# LAB")]
        console.print(f"  edit {dest / name}: LAB markers on line(s) {', '.join(map(str, marks))}")
    console.print(f"read {folder(mod) / 'README.md'}, then: ./pxq lab check {mod.number}" + _dir_flag(mod, dest))
    return records.EXIT_OK


def _dir_flag(mod: plugins.Lab, dest: Path) -> str:
    return "" if Path(dest) == default_copy(mod) else f" --dir {dest}"


def source_of(mod: plugins.Lab, which: str, copy: Path | None) -> tuple[str, Path]:
    """What to build: ("begin" | "solution", the lab's folder) or ("copy", the student's)."""
    if which in ("begin", "solution"):
        return which, folder(mod) / which
    copy = Path(copy) if copy is not None else default_copy(mod)
    if not copy.is_dir():
        raise InputError(
            f"{copy}: no such folder. Start the lab with ./pxq lab start {mod.number}"
            + ("" if copy == default_copy(mod) else f" --dir {copy}")
            + f", or check the solution with ./pxq lab check {mod.number} --solution"
        )
    marker = copy / MARKER
    if marker.exists() or marker.is_symlink():
        fix = f"it is written by pxq lab start; delete {MARKER} if the copy is of lab {mod.number}"
        found = door.json_doc(marker, "the copy's marker", fix, 1 << 16)
        lab = found.get("lab") if isinstance(found, dict) else None
        if not isinstance(lab, str) or lab not in {m.folder for m in registry()}:
            raise InputError(f"{marker}: names no lab: {fix}")
        if lab != mod.folder:
            raise InputError(f"{copy} is a copy of lab {lab}, not of {mod.folder}: check it with that lab's number")
    # A copy started before its lab asked for a prediction has none: graded "none", not refused.
    missing = [n for n in student_files(mod) if not (copy / n).is_file() and n != prediction.FILE]
    if missing:
        raise InputError(f"{copy} lacks {', '.join(missing)}: copy it from {folder(mod) / 'begin'} or start again")
    # Absolute: the copy builds and runs from a scratch folder inside its sandbox, where a
    # folder named relative to where the student stands (labs-work/NN-name) is not there.
    return "copy", copy.resolve()


def _cmake_cache(key: str) -> str | None:
    cache = build_dir() / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith(key + ":"):
            return line.split("=", 1)[1] or None
    return None


def _generator() -> str | None:
    """The CMake generator pxq's own build uses (Ninja where there is one)."""
    return _cmake_cache("CMAKE_GENERATOR") or ("Ninja" if shutil.which("ninja") else None)


def configure_args(mod: plugins.Lab) -> list[str]:
    """pxq's own compiler, generator and (for Kokkos) Kokkos, so a lab builds as pxq does."""
    args = []
    generator = _generator()
    if generator:
        args += ["-G", generator]
    compiler = _cmake_cache("CMAKE_CXX_COMPILER")
    if compiler:
        args.append(f"-DCMAKE_CXX_COMPILER={compiler}")
    if mod.kokkos:
        kokkos = _cmake_cache("Kokkos_DIR")
        if not kokkos:
            raise InputError(
                "lab 6 needs Kokkos and pxq's build has none: run ./pxq build (it builds Kokkos into .deps/kokkos)"
            )
        args.append(f"-DKokkos_DIR={kokkos}")
    return args


BUILD_SECONDS = 1800.0  # a configure or compile step longer than this is stopped
BUILD_OUTPUT = 16 << 20  # bytes of compiler messages a build step may print


def _build_step(argv: list[str], confine: sandbox.Sandbox | None) -> procs.Finished:
    """One configure or compile step; a student's copy builds inside its sandbox."""
    if confine is None:
        return procs.run(argv, dict(os.environ), uuid.uuid4().hex, BUILD_SECONDS, max_output=BUILD_OUTPUT)
    with procs.workdir("pxq-lab-build-") as scratch:
        wrapped = confine.wrap(argv, scratch, cpu_seconds=BUILD_SECONDS)
        return procs.run(wrapped, dict(os.environ), uuid.uuid4().hex, BUILD_SECONDS, max_output=BUILD_OUTPUT)


def build(mod: plugins.Lab, which: str, source: Path, console: Console, confine: sandbox.Sandbox | None = None) -> Path:
    """Configures and builds the lab with LAB_SOURCE; returns the program. A copy builds in
    its own build/ folder, the starter and solution under pxq's build folder."""
    if shutil.which("cmake") is None:
        raise InputError("cmake not found: run ./pxq build once (it installs what is missing)")
    out = source / "build" if which == "copy" else build_dir() / "labs" / mod.folder / which
    lab_source = str(source.resolve()) if which == "copy" else which
    console.print(f"building lab {mod.number} ({which}: {source}) in {out} ...")
    # A copy links the harness's objects from pxq's own build of the solution (built first).
    harness = [f"-DLAB_HARNESS_OBJECTS={harness_objects(mod)}"] if which == "copy" else []
    steps = [
        ["cmake", "-S", str(folder(mod)), "-B", str(out), f"-DLAB_SOURCE={lab_source}", *configure_args(mod), *harness],
        ["cmake", "--build", str(out)],
    ]
    if confine is not None:
        copies.check_copy(source, student_files(mod))
    if which == "copy":
        stale = copies.stale_build(source, folder(mod), _generator())
        if stale and out.is_dir() and not out.is_symlink():
            console.print(f"{out}: {stale}: configured afresh")
            shutil.rmtree(out)
        found = copies.reaches(source, [n for n in student_files(mod) if n != prediction.FILE])
        if found:
            raise LabFailure(
                "your code reaches past the exercise, which no lab needs and which could forge the harness's "
                "result: remove it (printing for yourself with printf is fine)\n  " + "\n  ".join(found[:12]),
                records.EXIT_VERIFICATION,
            )
    # A copy builds in its own folder, holding the solution's lock shared: no rebuild of the
    # solution rewrites the harness's objects while the copy links them.
    with _one_builder(harness_objects(mod).parent if which == "copy" else out, shared=which == "copy"):
        configure = steps[0]
        if which != "copy" and _configured_as(out, configure):
            steps = steps[1:]  # configured with these arguments: the build step re-runs CMake if its files changed
        elif which != "copy":
            (out / CONFIGURED).unlink(missing_ok=True)  # written again once configured and built
        _build_steps(steps, confine, console)
        if which != "copy" and len(steps) == 2:
            (out / CONFIGURED).write_text(json.dumps(configure))
    return out / mod.program


CONFIGURED = ".pxq-configured.json"  # in pxq's own build of a lab: the configure step it last ran


def _configured(out: Path) -> list[str] | None:
    """The configure step pxq's own build of a lab last ran (None: never, or unreadable)."""
    if not (out / CONFIGURED).is_file():
        return None
    try:
        step = door.json_doc(out / CONFIGURED, "pxq's note of a lab build's configure step", "it is configured afresh")
    except InputError:
        return None
    return step if isinstance(step, list) and all(isinstance(a, str) for a in step) else None


def _configured_as(out: Path, step: list[str]) -> bool:
    """Whether pxq's own build of a lab was configured with STEP and CMake's cache is still there:
    every check of a student's copy builds pxq's solution first, and configuring it afresh each
    time cost 1.4 s of a check's 6-12 s here."""
    return (out / "CMakeCache.txt").is_file() and _configured(out) == step


def harness_objects(mod: plugins.Lab) -> Path:
    """The folder of the lab harness's objects that pxq's build of the solution leaves (the
    harness's source compiled once; a student's copy compiles only its own files)."""
    return build_dir() / "labs" / mod.folder / "solution" / "harness-objects"


@contextlib.contextmanager
def _one_builder(out: Path, shared: bool = False) -> Iterator[None]:
    """One build at a time of pxq's own starter or solution folder: students checking at the
    same moment share it; copies linking the solution's harness objects hold its lock shared."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out.parent / f".{out.name}.build-lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _build_steps(steps: list[list[str]], confine: sandbox.Sandbox | None, console: Console) -> None:
    for argv in steps:
        done = _build_step(argv, confine)
        what = "configure" if "-S" in argv else "compile"
        if done.returncode == 127 and not done.output.strip().count("\n"):
            raise InputError(escape.plain(done.output.strip()))
        if done.returncode != 0:
            console.print(escape.plain(done.output[-6000:]), markup=False, highlight=False)
            if done.timed_out or done.overflowed:
                why = f"took over {BUILD_SECONDS:.0f} s" if done.timed_out else f"printed over {BUILD_OUTPUT >> 20} MiB"
                raise LabFailure(f"the lab's {what} step {why} and was stopped", EXIT_BUILD)
            raise LabFailure(f"the lab does not {what}: the messages above say where", EXIT_BUILD)


@dataclass
class Context:
    console: Console
    program: Path
    repeat: int
    cores: int
    machine: dict[str, Any]  # pxq env's description: caches, packages
    timeout: float = TIMEOUT  # a run longer than this is a hang
    hang_hint: str = ""  # the likely cause of a hang in this lab
    hostfile: str | None = None  # run on these hosts (else this machine, or the Slurm allocation)
    confine: sandbox.Sandbox | None = None  # a student's copy runs inside this sandbox
    # pxq's own build of the lab (its solution), which recomputes every answer a confined copy
    # reports from the same seed and options; None when the program is pxq's own.
    trusted: Path | None = None
    answer_ignores: tuple[str, ...] = ()  # options that do not change the answer ("--tile=" takes a value)
    seed: int = field(default_factory=lambda: secrets.randbelow(1 << 62))  # this check's, for every run
    budget: float = 0.0  # seconds of further paired rounds a timed effect may take to settle (--budget)
    predicted: dict[str, Any] | None = None  # the copy's prediction (pxq.teaching.prediction), when it has one
    first: sealing.First | None = None  # the first prediction a check graded, sealed in the copy
    _answers: dict[tuple, str | None] = field(default_factory=dict)
    _spent: float = 0.0  # of the budget
    _round_seconds: float = 0.0  # the last round's

    def run(
        self,
        layout: str,
        args: list[str] | None = None,
        placement: str | None = None,
        profile: Path | None = None,
        program: Path | None = None,
        timeout: float | None = None,
        lab_result: bool = True,
    ) -> dict[str, Any]:
        """One run of the lab's program (or another: lab_result=False for one of pxq's, which
        must exit 0) at a layout; its LAB-RESULT line. A wrong result, a crash or a hang raises
        LabFailure with the program's last words. The lab's program gets this check's seed; a
        confined copy's answer must be the one pxq's own build computes from the same input."""
        own = program is None or Path(program) == Path(self.program)
        args = [*(args or []), *(["--seed", str(self.seed)] if own else [])]
        result = self._launch(layout, args, placement, profile, program, timeout, lab_result, self.confine)
        if own and lab_result and self.trusted is not None:
            want = self._answer(layout, args, placement, timeout)
            if want is not None and result.get("answer") != want:
                raise LabFailure(
                    f"the run at {layout} reports an answer pxq's own build of the lab does not compute from the "
                    f"same input (seed {self.seed}): a result line can only pass by carrying what the computation "
                    "computed, so the code must compute it",
                    records.EXIT_VERIFICATION,
                )
        return result

    def _answer(self, layout: str, args: list[str], placement: str | None, timeout: float | None) -> str | None:
        """The answer pxq's own build computes for this input (cached per layout and options);
        None for a lab whose results are measurements only (no answer to recompute)."""
        kept, skip = [], False
        for a in args:
            if skip:
                skip = False
            elif a in self.answer_ignores or f"{a}=" in self.answer_ignores:
                skip = f"{a}=" in self.answer_ignores  # an option that takes a value: skip that too
            else:
                kept.append(a)
        key = (layout, tuple(kept))
        if key not in self._answers:
            assert self.trusted is not None
            self.console.print(f"  recomputing the answer at {layout} with pxq's own build", highlight=False)
            done = self._launch(layout, kept, placement, None, self.trusted, timeout, True, None)
            self._answers[key] = done.get("answer")
        return self._answers[key]

    def _launch(
        self,
        layout: str,
        args: list[str],
        placement: str | None,
        profile: Path | None,
        program: Path | None,
        timeout: float | None,
        lab_result: bool,
        confine: sandbox.Sandbox | None,
    ) -> dict[str, Any]:
        lay = parse_layout(layout)
        req = LaunchRequest(
            lay,
            cores=self.cores,
            oversubscribe=lay.cores > self.cores and not self.hostfile,
            placement=placement,
            mpi=envinfo.mpi_flavour(),
            hostfile=self.hostfile,
        )
        run_id, nonce = uuid.uuid4().hex, uuid.uuid4().hex
        limit = timeout or self.timeout
        # The run's folder where its ranks see it (launch.session): beside the cluster's state on a
        # cluster of this machine, beside the program across hosts.
        program = Path(program or self.program)
        with session(request_plan(req), None, self.hostfile, program, "pxq-lab-", shm=False) as s:
            tmp, env = s.folder, s.env
            s.pass_on({"PXQ_LAB_NONCE": nonce, **(preload_env(profile) if profile is not None else {})})
            argv = s.argv
            command = [*argv, str(program), *args]
            output = RUN_OUTPUT
            if confine is not None:  # each rank under its reaper: nothing it leaves outlives it
                command = [*argv, sandbox.python(), str(sandbox.REAPER), str(program), *args]
                more = [profile.parent] if profile is not None else []
                command = confine.wrap(command, tmp, more, cpu_seconds=limit * max(1, lay.cores) + 60)
                output = confine.limits.output_bytes
            done = procs.run(command, env, run_id, limit, max_output=output)
        if done.overflowed:
            raise LabFailure(
                f"the run at {layout} printed over {output >> 20} MiB and was stopped: print less (a line per "
                "iteration, not per element)",
                3,
            )
        lines = RESULT.findall(done.output)
        found = [body for tag, body in lines if tag == nonce]
        if len(found) != len(lines) or len(found) > 1:
            raise LabFailure(
                f"the run at {layout} printed a result line the harness did not print: only the lab's harness "
                "reports a result; remove the LAB-RESULT printing from your code",
                records.EXIT_VERIFICATION,
            )
        tail = escape.plain("\n".join(done.output.strip().splitlines()[-15:]))
        if done.timed_out:
            hint = f" {self.hang_hint}" if self.hang_hint else ""
            raise LabFailure(
                f"the run at {layout} did not finish in {limit:.0f} s: a deadlock or an endless loop.{hint}\n{tail}", 3
            )
        if not lab_result and done.returncode == 0:
            return {}
        if not found:
            raise _no_result(done.output, done.returncode, layout, tail)
        result, why = records.parse_line(found[-1].encode())
        if why is not None or not isinstance(result, dict):
            raise LabFailure(f"the run at {layout} printed a result line that is not the harness's: {why}", 1)
        if result.get("verified") is not True or done.returncode != 0:
            # The harness's own verdict line first: with many ranks, the launcher's lines after it
            # can push it out of the tail.
            said = [ln.strip() for ln in done.output.splitlines() if ln.startswith("Verification FAILED")][:1]
            head = escape.plain(said[0]) + "\n" if said and said[0] not in tail else ""
            raise LabFailure(f"wrong result at {layout}:\n{head}{tail}", records.EXIT_VERIFICATION)
        return result

    def interleaved(
        self,
        configs: list[tuple[str, dict[str, Any]]],
        repeat: int | None = None,
        settle_on: Callable[[dict[str, list]], list[tuple[float, float]]] | None = None,
    ) -> dict[str, list]:
        """Every configuration (name, run() keywords) once per round, the order reversed
        every other round, for `repeat` rounds: name -> its results in order. With SETTLE_ON
        (the results so far -> the timed effect's (BASE, other) times, one pair a round) and a
        budget (--budget), further rounds follow while that paired comparison is unsettled and
        the budget lasts."""
        out: dict[str, list] = {name: [] for name, _ in configs}
        rounds = repeat or self.repeat
        r, fixed = 0, rounds
        extra_start = None
        while True:
            if r >= fixed:
                if settle_on is None or self.budget <= 0 or r >= MAX_ROUNDS:
                    break
                v = paired_verdict(settle_on(out))
                if v is not None and v.settled:
                    break
                now = time.monotonic()
                extra_start = extra_start or now
                per_round = self._round_seconds
                if self._spent + (now - extra_start) + per_round > self.budget:
                    self.console.print(
                        f"  the budget ({self.budget:.0f} s) would not hold another round: the effect stays unsettled",
                        highlight=False,
                    )
                    break
                said = v.text() if v is not None else f"{r} round(s)"
                self.console.print(f"  unsettled ({said}): one more round", highlight=False)
                rounds = r + 1
            order = configs if r % 2 == 0 else list(reversed(configs))
            t0 = time.monotonic()
            for name, kw in order:
                self.console.print(f"  round {r + 1}/{rounds}: {name}", highlight=False)
                out[name].append(self.run(**kw))
            self._round_seconds = time.monotonic() - t0
            r += 1
        if extra_start is not None:
            self._spent += time.monotonic() - extra_start
        return out


MAX_ROUNDS = 60  # paired rounds a timed effect may take under a budget


def pairs_of(base: str, other: str, value: str) -> Callable[[dict[str, list]], list[tuple[float, float]]]:
    """SETTLE_ON for two configurations of interleaved(): their VALUE, round by round."""
    return lambda out: [(float(a[value]), float(b[value])) for a, b in zip(out[base], out[other])]


def paired_verdict(pairs: list[tuple[float, float]]) -> settle.Verdict | None:
    """The settled comparison of (BASE, OTHER) timed pairs, one a round (OTHER/BASE: faster is
    below 1); None with fewer than settle.MIN_BLOCKS rounds."""
    ratios = [o / b for b, o in pairs if b > 0 and o > 0]
    if len(ratios) < settle.MIN_BLOCKS:
        return None
    return settle.judge(ratios, settle.Rule(precision=0.05, max_blocks=MAX_ROUNDS))


def _no_result(output: str, returncode: int, layout: str, tail: str) -> LabFailure:
    """A run that ended without its result line. Exit 2 is the harness refusing its command line
    (bad input); an exception the lab's code threw ("error (rank N): ...", then MPI_Abort with 2)
    is the program failing: not correct, as any other exit."""
    threw = "error (rank " in output
    code = records.EXIT_BAD_INPUT if returncode == 2 and not threw else records.EXIT_RUN_FAILED
    how = "an exception ended it" if threw else f"exit {returncode}"
    return LabFailure(f"the run at {layout} ended ({how}) without a result:\n{tail}", code)


def effect_of(
    sentence: str,
    ratio: float,
    noise: float,
    threshold: float,
    why: str,
    published: str = "",
    counted: bool = False,
    repeats: int = 1,
    pairs: list[tuple[float, float]] | None = None,
) -> Effect:
    """An effect the lab expects above 1 by `threshold`: shown, not clearly shown, or (timed,
    within the spread of its repeats, or from one run) too noisy to read, with the repeats that
    would settle it. Never a failure. A count has no noise: it shows or it does not.

    With PAIRS, the (BASE, faster-expected) times of each interleaved round: judged as a settled
    comparison (pxq.analysis.verdicts.settle) of OTHER/BASE over the rounds: shown when it is settled
    faster by at least the threshold, not shown when settled otherwise, too noisy to read when
    unsettled, with the rounds that would settle it."""
    if counted:
        verdict = "reproduced" if ratio - 1 >= threshold else "not reproduced"
        return Effect(sentence, ratio, 0.0, verdict, why, published, True, repeats)
    v = paired_verdict(pairs) if pairs else None
    if v is not None:
        words = f"paired round by round (a block is a round): {v.text()}"
        speed = v.speedup()
        if not v.settled:
            more = f"about {v.needed} rounds would settle it; " if v.needed else ""
            settle_text = f"{more}check again with --budget 5m (paired rounds until the effect is settled)"
            return Effect(sentence, ratio, noise, "inconclusive", why, published, False, v.blocks, settle_text, words)
        shown = v.kind == "faster" and speed is not None and speed[0] - 1 >= threshold
        verdict = "reproduced" if shown else "not reproduced"
        return Effect(sentence, ratio, noise, verdict, why, published, False, v.blocks, "", words)
    if repeats < 2:
        settle_text = (
            f"one run each: no spread to read a ratio against; check again with --repeat {max(3, repeats + 2)}"
        )
        return Effect(sentence, ratio, noise, "inconclusive", why, published, False, repeats, settle_text)
    verdict, settle_text = findings.judge(ratio, noise, repeats, True, threshold)
    if verdict == "inconclusive":
        n = findings.repeats_needed(noise, repeats, max(threshold, abs(ratio - 1)))
        settle_text = (
            f"within the spread of {100 * noise:.0f}% over {repeats} repeats; try --repeat {n}, or --budget 5m "
            "(paired rounds until the effect is settled)"
        )
    return Effect(sentence, ratio, noise, verdict, why, published, False, repeats, settle_text)


def cache_of(nbytes: int, caches: dict[str, Any]) -> str:
    """The smallest cache (pxq env's description) that holds nbytes, else "memory"."""
    for level in ("l1d", "l2", "l3"):
        size = caches.get(level, {}).get("bytes") or 0
        if size and nbytes <= size:
            return level.upper()
    return "memory"


def ratio_of(base: list[float], new: list[float]) -> tuple[float, float]:
    """median(base) / median(new) and the larger spread of the two."""
    import statistics

    ratio = statistics.median(base) / statistics.median(new)
    return ratio, max(findings.spread(base), findings.spread(new))


def check(*args: Any, **options: Any) -> tuple[int, Outcome | None]:
    """grade() without its record: the exit code (GRADES) and the outcome."""
    code, out, _ = grade(*args, **options)
    return code, out


def confinement(
    which: str, source: Path, hostfile: str | None, unconfined: bool, mod: plugins.Lab | None = None
) -> sandbox.Sandbox | None:
    """The sandbox a student's copy builds and runs in (None for pxq's own starter and solution,
    or when the teacher asked for --unconfined). Runs on other hosts cannot be confined from
    here: they need --unconfined, said out loud."""
    if which != "copy" or unconfined:
        return None
    if hostfile or os.environ.get("SLURM_JOB_ID"):
        raise InputError(
            "a student's copy runs confined, and its runs on other hosts (--hostfile, Slurm) cannot be: check it on "
            "this machine, or add --unconfined to run it there with your rights"
        )
    up = netns.current()
    if up is not None:
        raise InputError(
            f"a student's copy runs confined, and its runs on cluster '{up.name}' of this machine enter "
            "the nodes' namespaces, which a sandbox cannot: add --unconfined to run it there with your rights, or "
            "pxq cluster down"
        )
    sandbox.check()
    if mod is None:
        return sandbox.Sandbox([source])
    return sandbox.Sandbox([source], readable=sandbox_reads(mod), hidden=[folder(mod) / "solution"])


def sandbox_reads(mod: plugins.Lab) -> list[Path]:
    """What a student's copy reads besides itself: the lab's harness, pxq's programs and
    libraries (another program a lab runs, the message profiler), the launch scripts, Kokkos,
    and the compiler, CMake and mpirun where they live outside /usr. Nothing else of pxq's
    checkout or build (other students' copies, the solution's build) is there."""
    reads = [LABS / "common", folder(mod), AGENT, BIND_WRAPPER, sandbox.REAPER, harness_objects(mod)]
    reads += [build_dir() / "bin", build_dir() / "lib"]
    kokkos = _cmake_cache("Kokkos_DIR")
    if kokkos:  # lab 6 builds with it; pxq's programs (CG for lab 2) link it
        k = Path(kokkos).resolve()
        reads.append(k.parents[2] if len(k.parents) > 3 and k.parent.name == "cmake" else k)
    tools = [_cmake_cache("CMAKE_CXX_COMPILER"), shutil.which("cmake"), shutil.which("mpirun")]
    for tool in filter(None, tools):
        real = Path(tool).resolve()
        if not real.is_relative_to("/usr") and len(real.parents) > 2:
            reads.append(real.parents[1])  # PREFIX of PREFIX/bin/tool
    return reads


def grade(
    mod: plugins.Lab,
    which: str,
    copy: Path | None,
    repeat: int,
    console: Console,
    hostfile: str | None = None,
    unconfined: bool = False,
    budget: float = 0.0,
    seal: bool = True,
) -> tuple[int, Outcome | None, dict[str, Any]]:
    """check() with the grade as a record: lab, source, outcome, exit code, the checks made,
    the effects measured (with their spread) and the reason of a failure. SEAL: a student's
    copy's prediction, once graded, is sealed in it (`lab check`; a teacher's `lab grade` reads
    the seal and writes none)."""
    bounds.repeat(repeat)
    if hostfile is not None:
        hostfile_hosts(Path(hostfile))  # read as every launch reads it: strictly, before anything runs
    which, source = source_of(mod, which, copy)
    predicted = prediction.read(source / prediction.FILE, mod.predict) if mod.predict is not None else None
    forecast = Forecast(predicted, None, False)
    if mod.predict is not None and which == "copy":
        forecast = Forecast(predicted, sealing.first(source, prediction.schema(mod.predict)), seal)
    confine = confinement(which, source, hostfile, unconfined, mod)
    if not (hostfile or os.environ.get("SLURM_JOB_ID")):
        netns.check_visible(source, "work in a folder outside /tmp, such as labs-work/ in pxq's checkout")
    record: dict[str, Any] = {"kind": "lab-grade", "schema": schemas.VERSION, "lab": mod.folder, "number": mod.number}
    record["source"] = str(source)
    record["confined"] = confine is not None
    try:
        with confine if confine is not None else contextlib.nullcontext():
            return _graded(mod, which, source, repeat, console, hostfile, confine, record, budget, forecast)
    except LabFailure as e:
        console.print("[red]not correct[/red]: ", end="")
        console.print(str(e), highlight=False, markup=False)
        console.print(f"grade: not correct (exit {e.code}: {GRADES[e.code][1]})", highlight=False)
        return e.code, None, {**record, "outcome": "not correct", "exit": e.code, "reason": str(e)[:4000]}


def _graded(
    mod: plugins.Lab,
    which: str,
    source: Path,
    repeat: int,
    console: Console,
    hostfile: str | None,
    confine: sandbox.Sandbox | None,
    record: dict[str, Any],
    budget: float = 0.0,
    forecast: Forecast | None = None,
) -> tuple[int, Outcome | None, dict[str, Any]]:
    """The build, the runs and the grade, inside the sandbox when there is one."""
    forecast = forecast or Forecast(None, None, False)
    if confine is not None:
        record["sandbox"] = confine.describe()
    # A student's answers are recomputed by pxq's own build of the lab, outside the sandbox;
    # built first, it leaves the harness's objects that the copy links.
    trusted = build(mod, "solution", folder(mod) / "solution", console) if which == "copy" else None
    program = build(mod, which, source, console, confine)
    ctx = Context(
        console,
        program,
        repeat,
        envinfo.cores(),
        envinfo.machine(),
        float(mod.timeout or TIMEOUT),
        mod.hang_hint,
        hostfile,
        confine,
        trusted,
        mod.answer_ignores,
        budget=budget,
        predicted=forecast.predicted,
        first=forecast.first,
    )
    more = f", and paired rounds until its timed effect settles, for up to {budget:.0f} s" if budget else ""
    console.print(f"checking lab {mod.number} ({mod.title}): {repeat} interleaved repeat(s){more}")
    out = unjudged_if_starter(mod.measure(ctx))
    if out.prediction is not None and forecast.predicted is not None and forecast.first is not None:
        sealed(out.prediction, forecast, source)
    code = EXIT_NOT_DONE if out.starter_like else records.EXIT_OK
    say(console, mod, out)
    console.print(f"grade: {GRADES[code][0]} (exit {code}: {GRADES[code][1]})", highlight=False)
    return code, out, {**record, **as_record(out), "outcome": GRADES[code][0], "exit": code}


@dataclass(frozen=True)
class Forecast:
    """A copy's prediction (prediction.toml as read), the first one sealed in it (None: pxq's own
    lab, or a lab that asks for none) and whether a graded one is sealed now (`lab check`)."""

    predicted: dict[str, Any] | None
    first: sealing.First | None
    seal: bool


def sealed(block: dict[str, Any], forecast: Forecast, source: Path) -> None:
    """A graded prediction with no seal yet: sealed in the copy when this check may write one
    (`lab check`), else said (`lab grade`: graded as it stands). Adds to BLOCK."""
    first = forecast.first
    if block.get("state") != "graded" or first is None or first.answers is not None or first.problem:
        return
    if not forecast.seal:
        block["seal"] = "none: no check graded this prediction before, so it is graded as it stands"
        return
    assert forecast.predicted is not None
    when, why = sealing.seal(source, forecast.predicted)
    if when is None:
        block["seal"] = why
        return
    block["sealed"], block["sealed_now"] = when, True


def unjudged_if_starter(out: Outcome) -> Outcome:
    """A copy that still behaves as the starter does never "shows the effect": an effect is
    judged on what the code did, and this code has not done the lesson yet (its numbers stay in
    the table; the effects read "not judged")."""
    if not out.starter_like:
        return out
    why = f"your code: {out.code_note}"
    effect = replace(out.effect, verdict="not judged", settle=why) if out.effect is not None else None
    return replace(out, effect=effect, more=[replace(e, verdict="not judged", settle=why) for e in out.more])


def as_record(out: Outcome) -> dict[str, Any]:
    return {
        "code": out.code_note,
        "starter_like": out.starter_like,
        "checks": out.checks,
        "effects": [
            {
                "sentence": e.sentence,
                "ratio": e.ratio,
                "spread": e.noise,
                "repeats": e.repeats,
                "counted": e.counted,
                "verdict": EFFECT[e.verdict],
                "settle": e.settle,
                "paired": e.paired,
            }
            for e in out.effects
        ],
        "notes": out.notes,
    } | ({"prediction": out.prediction} if out.prediction is not None else {})


def check_writable_json(path: Path) -> None:
    """Refuses a --json path whose folder is missing or not writable, or that holds something
    other than JSON (a device, a FIFO, a user's file), before anything runs."""
    parent = Path(path).parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(f"--json {path}: its folder is missing or not writable: give a writable --json path")
    outputs.check(path, "json", "--json")


def write_json(path: Path, record: dict[str, Any]) -> None:
    """The grade as one JSON document, written whole (a temporary file, then renamed)."""
    try:
        outputs.write(path, outputs.dumps(record, indent=1) + "\n", "json", "--json")
    except OSError as e:
        raise InputError(f"cannot write {path} ({e.strerror}): give a writable --json path") from None


def say(console: Console, mod: plugins.Lab, out: Outcome) -> None:
    if out.table is not None:
        console.print(out.table)
    console.print("[green]correct[/green]: every run verified exactly")
    console.print(f"your code: {out.code_note}", highlight=False, markup=False)
    for note in out.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    for e in out.effects:
        _say_effect(console, e)
    if out.prediction is not None:
        for line in prediction.lines(out.prediction):
            console.print(line, highlight=False, markup=False)


def _say_effect(console: Console, e: Effect) -> None:
    if e.counted:
        spread = "(counted, not timed)"
    else:
        spread = f"(repeats spread {100 * e.noise:.0f}%)" if e.repeats > 1 else "(one run each: no spread measured)"
    colour = {"reproduced": "green", "not reproduced": "yellow", "inconclusive": "yellow"}.get(e.verdict, "dim")
    console.print(f"effect: {e.sentence} {spread}: [{colour}]{EFFECT[e.verdict]}[/{colour}]", highlight=False)
    if e.paired:
        console.print(f"  {e.paired}", highlight=False, markup=False)
    if e.settle:
        console.print(f"  {e.settle}", highlight=False, markup=False)
    if e.verdict in ("not reproduced", "inconclusive") and e.why:
        console.print(f"why that can happen here: {e.why}", highlight=False, markup=False)
    if e.published:
        console.print(f"published: {e.published}", highlight=False, markup=False)


def overview(console: Console) -> int:
    t = Table(title="pxq labs (labs/README.md)")
    for col in ("lab", "title", "minutes", "you edit", "folder"):
        t.add_column(col)
    for mod in registry():
        t.add_row(str(mod.number), mod.title, str(mod.minutes), ", ".join(student_files(mod)), f"labs/{mod.folder}")
    console.print(t)
    console.print("start one: ./pxq lab start N; check your work: ./pxq lab check N (--solution: the solution)")
    return records.EXIT_OK
