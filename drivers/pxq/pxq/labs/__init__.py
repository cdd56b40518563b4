"""The teaching labs (labs/NN-name in the checkout): `pxq lab list | start NN | check NN`.

A lab folder holds the harness (files beside its CMakeLists.txt), `begin/` (the starter, with
`// LAB:` markers where the student works) and `solution/`; `cmake -DLAB_SOURCE=` picks which
student files to build. A lab module here has NUMBER, FOLDER, TITLE, MINUTES, PROGRAM (the
executable), KOKKOS (True when the build needs Kokkos) and `measure(ctx) -> Outcome`: it runs
the built program through `ctx.run`, checks correctness (exact, as the proxies do) and says
whether the effect the lab teaches shows, as a ratio with interleaved repeats. A missing effect
is never a failure: it is "no clear effect", with the spread and the reasons it can happen."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console
from rich.table import Table

from pxq import findings, records
from pxq.errors import InputError
from pxq.paths import ROOT, build_dir

LABS = ROOT / "labs"
MARKER = ".pxq-lab.json"  # written by `start` into the student's copy
EXIT_BUILD = 4  # the lab's code does not build (its compiler errors are shown)
RESULT = re.compile(r"^LAB-RESULT (\{.*\})\s*$", re.M)
EFFECT = {"reproduced": "the effect shows", "not reproduced": "no clear effect", "inconclusive": "no clear effect"}


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
    verdict: str  # one of findings.VERDICTS
    why: str = ""  # why no clear effect can happen here (shown when it does not show)
    published: str = ""  # the published figure, with its source
    counted: bool = False  # a count (exact, no noise), not a timing


@dataclass
class Outcome:
    table: Table | None
    code_note: str  # what the student's code does, from its own run (the tests check it)
    starter_like: bool  # the code still behaves as the starter does
    effect: Effect | None
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def registry() -> list[ModuleType]:
    from pxq.labs import channels, contention, hybrid, kokkos, msgshare, tiling

    return [channels, msgshare, contention, tiling, hybrid, kokkos]


def get(key: str) -> ModuleType:
    """A lab by number ("4", "04") or folder name ("04-tile-ring", "tile-ring")."""
    text = key.strip().lower()
    for mod in registry():
        if text in (str(mod.NUMBER), f"{mod.NUMBER:02d}", mod.FOLDER, mod.FOLDER[3:]):
            return mod
    names = ", ".join(f"{m.NUMBER} ({m.FOLDER})" for m in registry())
    raise InputError(f"unknown lab '{key}': use one of {names}; ./pxq lab list shows them")


def folder(mod: ModuleType) -> Path:
    return LABS / mod.FOLDER


def student_files(mod: ModuleType) -> list[str]:
    """The files a student edits: those of begin/."""
    return sorted(p.name for p in (folder(mod) / "begin").iterdir() if p.is_file())


def default_copy(mod: ModuleType) -> Path:
    return Path("labs-work") / mod.FOLDER


def start(mod: ModuleType, dest: Path, console: Console) -> int:
    """Copies the starter into dest (refusing to overwrite a copy with work in it)."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(
            f"{dest} already exists and is not empty: your work may be there. Check it with "
            f"./pxq lab check {mod.NUMBER} --dir {dest}, or start in another folder with --dir"
        )
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for name in student_files(mod):
            shutil.copy2(folder(mod) / "begin" / name, dest / name)
        (dest / MARKER).write_text(json.dumps({"lab": mod.FOLDER}) + "\n", encoding="utf-8")
    except OSError as e:
        shutil.rmtree(dest, ignore_errors=True)
        raise InputError(f"cannot make {dest} ({e.strerror}): choose a writable folder with --dir") from None
    console.print(f"lab {mod.NUMBER}: {mod.TITLE} (about {mod.MINUTES} minutes)")
    console.print(f"your copy: {dest}  (the harness stays in {folder(mod)})")
    for name in student_files(mod):
        marks = [i for i, ln in enumerate((dest / name).read_text().splitlines(), 1) if "// LAB" in ln]
        console.print(f"  edit {dest / name}: LAB markers on line(s) {', '.join(map(str, marks))}")
    console.print(f"read {folder(mod) / 'README.md'}, then: ./pxq lab check {mod.NUMBER}" + _dir_flag(mod, dest))
    return records.EXIT_OK


def _dir_flag(mod: ModuleType, dest: Path) -> str:
    return "" if Path(dest) == default_copy(mod) else f" --dir {dest}"


def source_of(mod: ModuleType, which: str, copy: Path | None) -> tuple[str, Path]:
    """What to build: ("begin" | "solution", the lab's folder) or ("copy", the student's)."""
    if which in ("begin", "solution"):
        return which, folder(mod) / which
    copy = Path(copy) if copy is not None else default_copy(mod)
    if not copy.is_dir():
        raise InputError(
            f"{copy}: no such folder. Start the lab with ./pxq lab start {mod.NUMBER}"
            + ("" if copy == default_copy(mod) else f" --dir {copy}")
            + f", or check the solution with ./pxq lab check {mod.NUMBER} --solution"
        )
    marker = copy / MARKER
    if marker.is_file():
        try:
            lab = json.loads(marker.read_text(encoding="utf-8")).get("lab")
        except (json.JSONDecodeError, AttributeError):
            lab = None
        if lab not in (None, mod.FOLDER):
            raise InputError(f"{copy} is a copy of lab {lab}, not of {mod.FOLDER}: check it with that lab's number")
    missing = [n for n in student_files(mod) if not (copy / n).is_file()]
    if missing:
        raise InputError(f"{copy} lacks {', '.join(missing)}: copy it from {folder(mod) / 'begin'} or start again")
    return "copy", copy


def _cmake_cache(key: str) -> str | None:
    cache = build_dir() / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith(key + ":"):
            return line.split("=", 1)[1] or None
    return None


def configure_args(mod: ModuleType) -> list[str]:
    """pxq's own compiler, generator and (for Kokkos) Kokkos, so a lab builds as pxq does."""
    args = []
    generator = _cmake_cache("CMAKE_GENERATOR") or ("Ninja" if shutil.which("ninja") else None)
    if generator:
        args += ["-G", generator]
    compiler = _cmake_cache("CMAKE_CXX_COMPILER")
    if compiler:
        args.append(f"-DCMAKE_CXX_COMPILER={compiler}")
    if mod.KOKKOS:
        kokkos = _cmake_cache("Kokkos_DIR")
        if not kokkos:
            raise InputError(
                "lab 6 needs Kokkos and pxq's build has none: run ./pxq build (it builds Kokkos into .deps/kokkos)"
            )
        args.append(f"-DKokkos_DIR={kokkos}")
    return args


def build(mod: ModuleType, which: str, source: Path, console: Console) -> Path:
    """Configures and builds the lab with LAB_SOURCE; returns the program. A copy builds in
    its own build/ folder, the starter and solution under pxq's build folder."""
    if shutil.which("cmake") is None:
        raise InputError("cmake not found: run ./pxq build once (it installs what is missing)")
    out = source / "build" if which == "copy" else build_dir() / "labs" / mod.FOLDER / which
    lab_source = str(source.resolve()) if which == "copy" else which
    console.print(f"building lab {mod.NUMBER} ({which}: {source}) in {out} ...")
    steps = [
        ["cmake", "-S", str(folder(mod)), "-B", str(out), f"-DLAB_SOURCE={lab_source}", *configure_args(mod)],
        ["cmake", "--build", str(out)],
    ]
    for argv in steps:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=1800)
        except OSError as e:
            raise InputError(f"cannot run {argv[0]}: {e.strerror}") from None
        if done.returncode != 0:
            console.print((done.stdout + done.stderr)[-6000:], markup=False, highlight=False)
            what = "configure" if "-S" in argv else "compile"
            raise LabFailure(f"the lab does not {what}: the messages above say where", EXIT_BUILD)
    return out / mod.PROGRAM


@dataclass
class Context:
    console: Console
    program: Path
    repeat: int
    cores: int
    machine: dict[str, Any]  # pxq env's description: caches, packages

    def run(
        self,
        layout: str,
        args: list[str] | None = None,
        placement: str | None = None,
        profile: Path | None = None,
        program: Path | None = None,
        timeout: float = 600.0,
        lab_result: bool = True,
    ) -> dict[str, Any]:
        """One run of the lab's program (or another: lab_result=False for one of pxq's, which
        must exit 0) at a layout; its LAB-RESULT line. A wrong result, a crash or a hang raises
        LabFailure with the program's last words."""
        from pxq import launch, procs
        from pxq.layout import parse_layout

        lay = parse_layout(layout)
        req = launch.LaunchRequest(
            lay, cores=self.cores, oversubscribe=lay.cores > self.cores, placement=placement, mpi=launch.mpi_flavour()
        )
        run_id = uuid.uuid4().hex
        with procs.workdir("pxq-lab-") as tmp:
            plan = launch.plan_launch(req, launch.find_mpirun(req.mpi), tmp)
            env = launch.stage(plan, tmp)
            argv = list(plan.argv)
            if profile is not None:
                from pxq.msgdist import preload_env, preload_flags

                if plan.passes_environment:
                    env.update(preload_env(profile))
                else:
                    argv[1:1] = preload_flags(profile)
            done = procs.run([*argv, str(program or self.program), *(args or [])], env, run_id, timeout)
        found = RESULT.findall(done.output)
        tail = "\n".join(done.output.strip().splitlines()[-15:])
        if done.timed_out:
            raise LabFailure(f"the run at {layout} did not finish in {timeout:.0f} s (a deadlock?):\n{tail}", 3)
        if not lab_result and done.returncode == 0:
            return {}
        if not found:
            code = records.EXIT_BAD_INPUT if done.returncode == 2 else records.EXIT_RUN_FAILED
            raise LabFailure(f"the run at {layout} ended (exit {done.returncode}) without a result:\n{tail}", code)
        result = json.loads(found[-1])
        if not result.get("verified") or done.returncode != 0:
            raise LabFailure(f"wrong result at {layout}:\n{tail}", records.EXIT_VERIFICATION)
        return result

    def interleaved(self, configs: list[tuple[str, dict[str, Any]]], repeat: int | None = None) -> dict[str, list]:
        """Every configuration (name, run() keywords) once per round, the order reversed
        every other round, for `repeat` rounds: name -> its results in order."""
        out: dict[str, list] = {name: [] for name, _ in configs}
        rounds = repeat or self.repeat
        for r in range(rounds):
            order = configs if r % 2 == 0 else list(reversed(configs))
            for name, kw in order:
                self.console.print(f"  round {r + 1}/{rounds}: {name}", highlight=False)
                out[name].append(self.run(**kw))
        return out


def effect_of(
    sentence: str, ratio: float, noise: float, threshold: float, why: str, published: str = "", counted: bool = False
) -> Effect:
    """An effect the lab expects above 1 by `threshold`: shown, or not clearly (never a failure)."""
    return Effect(sentence, ratio, noise, findings.effect(ratio, noise, True, threshold), why, published, counted)


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


def check(mod: ModuleType, which: str, copy: Path | None, repeat: int, console: Console) -> tuple[int, Outcome | None]:
    """Builds, runs and judges one lab; returns the exit code and the outcome."""
    from pxq import envinfo

    if repeat < 1:
        raise InputError(f"--repeat {repeat}: use at least 1")
    which, source = source_of(mod, which, copy)
    try:
        program = build(mod, which, source, console)
        ctx = Context(console, program, repeat, envinfo.cores(), envinfo.machine())
        console.print(f"checking lab {mod.NUMBER} ({mod.TITLE}): {repeat} interleaved repeat(s)")
        out = mod.measure(ctx)
    except LabFailure as e:
        console.print(f"[red]not correct[/red]: {e}", highlight=False)
        return e.code, None
    say(console, mod, out)
    return records.EXIT_OK, out


def say(console: Console, mod: ModuleType, out: Outcome) -> None:
    if out.table is not None:
        console.print(out.table)
    console.print("[green]correct[/green]: every run verified exactly")
    console.print(f"your code: {out.code_note}", highlight=False)
    for note in out.notes:
        console.print(f"note: {note}", highlight=False)
    e = out.effect
    if e is None:
        return
    if e.counted:
        spread = "(counted, not timed)"
    else:
        spread = f"(repeats spread {100 * e.noise:.0f}%)" if e.noise > 0 else "(one run each: no spread measured)"
    if e.verdict == "reproduced":
        console.print(f"effect: {e.sentence} {spread}: [green]the effect shows[/green]", highlight=False)
    else:
        console.print(f"effect: {e.sentence} {spread}: [yellow]no clear effect[/yellow]", highlight=False)
        console.print(f"why that can happen here: {e.why}", highlight=False)
    if e.published:
        console.print(f"published: {e.published}", highlight=False)


def overview(console: Console) -> int:
    t = Table(title="pxq labs (labs/README.md)")
    for col in ("lab", "title", "minutes", "you edit", "folder"):
        t.add_column(col)
    for mod in registry():
        t.add_row(str(mod.NUMBER), mod.TITLE, str(mod.MINUTES), ", ".join(student_files(mod)), f"labs/{mod.FOLDER}")
    console.print(t)
    console.print("start one: ./pxq lab start N; check your work: ./pxq lab check N (--solution: the solution)")
    return records.EXIT_OK
