"""The registries are the one place a backend or an app's choice is declared, checked in a
scratch copy of the checkout.

A new host backend costs the files its folder holds: in a scratch copy of the checkout, a
backend `dummy` is added as kernels/dummy/ (OpenMP's executors under another name) and nothing
else is edited; the copy's build must then list it in the registry for every kernel family,
run its kernel tests and a verified CG on it, and give it CTests. Then the backend drops its MG
file: MG on it is refused as bad input (exit 2, naming the backends that run MG) and CTest
stops listing MG runs on it, while CG still runs.

A new proxy costs at most 12 files: IS's files are copied under another name (`sx`: its folder,
its kernel family's header and executors, its unit test), and three files are edited (its
apps.def line, its tile kernel in the tile bench, the driver's copy of the registry); the
copy's build must then list the app and its family, run its unit tests, verify it through
mpirun and through the driver (`pxq run`, the record passing the schema), and give it the
CTests every NAS proxy gets.

An app's own choice is one line of miniapps/apps.def: a value added there reaches the app's
--help and checks, pxq-envinfo's registry, and (once the driver's copy of the registry is
rewritten from the binaries) the schema the records' door checks.

The driver's registries, each added to in the copy touching only the files docs/ARCHITECTURE.md's
checklist names: a launcher `solo` (Local's module under another name, its import in
launch/__init__.py, its name in launchers.ORDER: 3 files) runs a verified ring whose record says
so; a probe `osuclone` (one module of pxq/probes/ declaring its PLUGIN; its program is an
existing one) is listed by `pxq probe --help` and records a run; a report format `count` (one
writer and its entry in reports/writers.py's WRITERS: 1 file) is offered and writes.

An access kind of the roofline's ceilings is one line of drivers/probes/kinds.cpp's table (its
kernel class beside it; here an existing kernel under a second name, `gather2`): the copy's
`pxq-envinfo registry` exports it, the unit test over every registered kind runs its kernel,
and (once the driver's copy of the registry is rewritten) the driver's ceilings list it and the
record schema takes it as a phase's kind.

usage: check_registries.py SOURCE WORKDIR MPIRUN"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

MAX_FILES = 8  # docs/ARCHITECTURE.md: a host backend in at most 8 files
MAX_APP_FILES = 12  # docs/ARCHITECTURE.md: a NAS proxy in at most 12 files
IS_FILES = (
    "miniapps/is/CMakeLists.txt",
    "miniapps/is/README.md",
    "miniapps/is/is.cpp",
    "miniapps/is/is_problem.hpp",
    "miniapps/is/is_problem.cpp",
    "kernels/include/pxq/kernels/is_ops.hpp",
    "kernels/openmp/is_ops.cpp",
    "kernels/kokkos/is_ops.cpp",
    "tests/unit/test_is.cpp",
)


def fail(msg: str) -> None:
    print(f"check_registries: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(argv: list, cwd: Path, ok: tuple[int, ...] = (0,), timeout: float = 1500) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if out.returncode not in ok:
        fail(f"{' '.join(map(str, argv))} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def copy_checkout(source: Path, dest: Path) -> None:
    files = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], source).stdout.split("\0")
    for name in filter(None, files):
        src = source / name
        if src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
        elif src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(src), dest / name)


def add_dummy(src: Path) -> list[Path]:
    """kernels/dummy/ from kernels/openmp/, renamed; the files added."""
    added = []
    for f in sorted((src / "kernels" / "openmp").iterdir()):
        text = (
            f.read_text().replace('"openmp"', '"dummy"').replace("_openmp(", "_dummy(").replace("_openmp,", "_dummy,")
        )
        text = text.replace("_openmp)", "_dummy)").replace("pxq_add_backend(openmp", "pxq_add_backend(dummy")
        text = text.replace('RUNTIME "OpenMP (libgomp)"', 'RUNTIME "a dummy (OpenMP underneath)"')
        out = src / "kernels" / "dummy" / f.name
        out.parent.mkdir(exist_ok=True)
        out.write_text(text)
        added.append(out)
    return added


def as_sx(text: str) -> str:
    """IS's names as the app sx's: files, namespaces, types, functions, the app and its family; the
    standard library's names (std::is_sorted, std::is_same_v, ...) stay."""
    for old, new in ((r"\bpxq::is\b", "pxq::sx"), (r"\bnamespace is\b", "namespace sx"), (r"\bIs(?=[A-Z])", "Sx")):
        text = re.sub(old, new, text)
    for old, new in (
        (r"\bkIs", "kSx"),
        (r"(?<!std::)\bis_", "sx_"),
        (r"_is_", "_sx_"),
        (r"_is\b", "_sx"),
        (r"\bis\.cpp", "sx.cpp"),
    ):
        text = re.sub(old, new, text)
    for old, new in (('"is"', '"sx"'), ("pxq-is", "pxq-sx"), ('"IS"', '"SX"'), ("(is ", "(sx "), ("(is,", "(sx,")):
        text = text.replace(old, new)
    return text


def add_app(src: Path) -> list[Path]:
    """The app sx: IS's files under sx's names, and the three edits; the files touched."""
    touched = []
    for name in IS_FILES:
        out = src / as_sx(name).replace("/is/", "/sx/")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(as_sx((src / name).read_text()))
        touched.append(out)
    apps_def = src / "miniapps/apps.def"
    line = next(x for x in apps_def.read_text().splitlines() if x.startswith("PXQ_APP(is,"))
    apps_def.write_text(apps_def.read_text() + as_sx(line).replace("NAS IS", "a copy of IS") + "\n")
    bench = src / "drivers/probes/bench_tiling.cpp"
    text = bench.read_text()
    body = text[text.index("// ---- IS:") : text.index("}  // namespace\n\nint main")]
    text = text.replace(
        '#include "pxq/kernels/is_ops.hpp"', '#include "pxq/kernels/is_ops.hpp"\n#include "pxq/kernels/sx_ops.hpp"'
    )
    text = text.replace("}  // namespace\n\nint main", as_sx(body) + "}  // namespace\n\nint main")
    bench.write_text(text)  # the copied section registers sx_rank itself (PXQ_TILE_BENCH)
    return [*touched, apps_def, bench, src / "drivers/pxq/pxq/data/registry.json"]


def check_app(src: Path, build: Path, work: Path, mpirun: str) -> None:
    """The app sx builds, is listed, passes its unit tests, verifies, and has its CTests."""
    env = dict(os.environ, PYTHONPATH=str(src / "drivers/pxq"), PXQ_BUILD_DIR=str(build))
    reg = run([build / "bin/pxq-envinfo", "registry"], work).stdout
    if '"name": "sx"' not in reg or '"name": "SX"' not in reg:
        fail("the registry does not list the app sx and its kernel family")
    tests = run([build / "bin/pxq-unit-tests", "--gtest_filter=Sx*", "--gtest_brief=1"], work).stdout
    ran = re.search(r"(\d+) tests? from", tests)
    if not ran or int(ran.group(1)) < 5:
        fail(f"the unit tests did not run sx's tests:\n{tests[-2000:]}")
    sx = run([mpirun, "-np", "2", "--oversubscribe", build / "bin/pxq-sx", "--class", "S", "--mode", "tiled"], work)
    if "Verification    = SUCCESSFUL" not in sx.stdout:
        fail(f"sx did not verify:\n{sx.stdout[-2000:]}")
    bench = [build / "bin/pxq-bench-tiling", "--benchmark_filter=^sx_rank/tile:4096/threads:1/"]
    if "sx_rank/tile:4096/threads:1" not in run([*bench, "--benchmark_min_time=0.01"], work).stdout:
        fail("the tile bench does not run sx's tile kernel")
    subprocess.run([sys.executable, "-m", "pxq.core.registry"], cwd=work, env=env, check=True, capture_output=True)
    results = work / "sx.jsonl"
    argv = ["run", "sx", "--class", "S", "--layout", "1x2", "--oversubscribe", "--results", str(results)]
    code = f"import sys; from pxq.cli import main; sys.exit(main({argv!r}))"
    if subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True).returncode != 0:
        fail("pxq run sx did not verify through the driver")
    check = (
        "import sys; from pathlib import Path; from pxq.core import records; "
        f"recs = records.read(Path({str(results)!r}), must_exist=True); "
        "sys.exit(not (len(recs) == 1 and recs[0]['app'] == 'sx' and recs[0]['verification']['passed']))"
    )
    if subprocess.run([sys.executable, "-c", check], cwd=work, env=env).returncode != 0:
        fail("pxq run sx did not leave one valid record")
    listed = run(["ctest", "-N", "-R", r"sx\."], build).stdout
    for name in ("mpi.sx.S.flat.np1", "mpi.sx.S.tiled4K.np4", "sx.bad_input", "mpi.sx.virtual2.flat.openmp"):
        if name not in listed:
            fail(f"CTest has no {name}:\n{listed[-2000:]}")


def check_choice(src: Path, build: Path, work: Path) -> None:
    """The value added to apps.def reaches the app, the registry and the driver's schema."""
    if "{p2p,shm,mirror}" not in run([build / "bin/pxq-ring", "--help"], work).stdout:
        fail("pxq-ring --help does not offer the exchange apps.def declares")
    if '"mirror"' not in run([build / "bin/pxq-envinfo", "registry"], work).stdout:
        fail("pxq-envinfo registry does not export the exchange apps.def declares")
    env = dict(os.environ, PYTHONPATH=str(src / "drivers/pxq"), PXQ_BUILD_DIR=str(build))
    driver = [sys.executable, "-c"]
    code = (
        "import json, sys; from pxq.core import schemas; "
        f"rec = json.load(open({str(src / 'tests/python/data/run-record.json')!r})); "
        "rec['variant']['exchange'] = 'mirror'; sys.exit(1 if schemas.problems(rec, 'x') else 0)"
    )
    if subprocess.run([*driver, code], cwd=work, env=env).returncode == 0:
        fail("the driver's schema took exchange 'mirror' before its registry copy was rewritten")
    subprocess.run([sys.executable, "-m", "pxq.core.registry"], cwd=work, env=env, check=True, capture_output=True)
    if subprocess.run([*driver, code], cwd=work, env=env).returncode != 0:
        fail("the driver's schema refuses exchange 'mirror' after its registry copy was rewritten")


def add_kind(src: Path) -> list[Path]:
    """An access kind: a line of kinds.cpp's table (an existing kernel under another name)."""
    kinds = src / "drivers/probes/kinds.cpp"
    text = kinds.read_text()
    line = re.search(r'\n(\s*)\{"gather", [^\n]*, (make[\w<>]*)\},', text)
    if line is None:
        fail("drivers/probes/kinds.cpp has no table line for gather")
    added = f'\n{line.group(1)}{{"gather2", "gbs", "footprint", "a second gather", {line.group(2)}}},'
    kinds.write_text(text.replace(line.group(0), line.group(0) + added))
    return [kinds]


def check_kind(src: Path, build: Path, work: Path, res: Path) -> None:
    """The kind added is exported, tested, known to the driver's ceilings and to the schema (the
    driver's registry copy was rewritten by check_choice)."""
    if '"gather2"' not in run([build / "bin/pxq-envinfo", "registry"], work).stdout:
        fail("pxq-envinfo registry does not export the access kind kinds.cpp's table declares")
    every = "--gtest_filter=ProbeKinds.EveryRegisteredKindIsWholeAndRuns"
    run([build / "bin/pxq-unit-tests", every, "--gtest_brief=1"], work)
    env = dict(os.environ, PYTHONPATH=str(src / "drivers/pxq"), PXQ_BUILD_DIR=str(build))
    code = (
        "import json, sys; from pxq.core import schemas; from pxq.machine import ceilings; "
        f"rec = json.loads(open({str(res)!r}).readline()); phase = next(iter(rec['work'].values())); "
        "phase['kind'] = 'gather2'; ok = not schemas.problems(rec, 'x'); "
        "phase['kind'] = 'gather3'; refused = bool(schemas.problems(rec, 'x')); "
        "sys.exit(0 if ok and refused and ceilings.kinds()['gather2']['unit'] == 'gbs' else 1)"
    )
    if subprocess.run([sys.executable, "-c", code], cwd=work, env=env).returncode != 0:
        fail("the driver does not take the access kind gather2 (ceilings, or the schema of a phase's kind)")


def pxq_in(src: Path, build: Path, work: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """The copy's driver, as `./pxq ARGV` runs it there."""
    env = dict(os.environ, PYTHONPATH=str(src / "drivers/pxq"), PXQ_BUILD_DIR=str(build), PXQ_NO_INSTALL="1")
    code = f"import sys; from pxq.cli import main; sys.exit(main({argv!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True)


def add_driver_plugins(src: Path) -> list[Path]:
    """A launcher, a probe and a report format, each where its checklist says; the files touched."""
    pkg = src / "drivers/pxq/pxq"
    local = (pkg / "launch/local.py").read_text()
    (pkg / "launch/solo.py").write_text(
        local.replace('class Local(Launcher, name="local"', 'class Solo(Launcher, name="solo"')
    )
    init = pkg / "launch/__init__.py"
    text = init.read_text()
    if " local, " not in text:
        fail("launch/__init__.py no longer imports the launcher modules as `..., local, ...`: update this check")
    init.write_text(text.replace(" local, ", " local, solo, ", 1))
    order = pkg / "launch/launchers.py"
    text = order.read_text()
    if 'ORDER = ("local",' not in text:
        fail('launch/launchers.py no longer has `ORDER = ("local", ...`: update this check')
    order.write_text(text.replace('ORDER = ("local",', 'ORDER = ("local", "solo",'))
    osu = (pkg / "probes/osuprobe.py").read_text()
    (pkg / "probes/osucloneprobe.py").write_text(
        osu.replace('"osu",', '"osuclone",').replace('("osu",)', '("osuclone",)')
    )
    writers = pkg / "reports/writers.py"
    text = writers.read_text().replace(
        "WRITERS: dict[str, Callable[[argparse.Namespace, Console], int]] = {",
        "def _count(args: argparse.Namespace, console: Console) -> int:\n"
        "    _, runs, _, _ = _gather(args)\n"
        '    console.print(f"{len(runs)} run(s)")\n'
        "    return records.exit_code(runs)\n\n\n"
        'WRITERS: dict[str, Callable[[argparse.Namespace, Console], int]] = {\n    "count": _count,',
    )
    writers.write_text(text)
    return [pkg / "launch/solo.py", init, order, pkg / "probes/osucloneprobe.py", writers]


def check_driver_plugins(src: Path, build: Path, work: Path) -> None:
    """The launcher runs and is recorded, the probe is listed and runs, the format writes."""
    res = work / "solo.jsonl"
    ran = pxq_in(
        src,
        build,
        work,
        [
            "run",
            "ring",
            "--launcher",
            "solo",
            "--layout",
            "1x2",
            "--results",
            str(res),
            "--",
            "--block",
            "256K",
            "--iterations",
            "2",
        ],
    )
    if ran.returncode != 0:
        fail(f"pxq run --launcher solo exited {ran.returncode}:\n{ran.stdout[-2000:]}{ran.stderr[-2000:]}")
    recs = [json.loads(x) for x in res.read_text().splitlines() if x.strip()]
    if len(recs) != 1 or recs[0]["layout"]["launcher"] != "solo" or recs[0]["verification"]["passed"] is not True:
        fail(f"the run on launcher solo: {[(r['layout'].get('launcher'), r['status']) for r in recs]}")
    valid = pxq_in(src, build, work, ["validate", str(res)])
    if valid.returncode != 0 or " 0 invalid" not in valid.stdout:
        fail(f"the record of the run on launcher solo does not validate:\n{valid.stdout[-2000:]}")
    if "osuclone" not in pxq_in(src, build, work, ["probe", "--help"]).stdout:
        fail("pxq probe --help does not list the probe module osuclone added")
    probe = work / "osuclone.jsonl"
    ran = pxq_in(
        src,
        build,
        work,
        [
            "probe",
            "osuclone",
            "latency",
            "-m",
            "1:64",
            "-i",
            "20",
            "-x",
            "2",
            "--results",
            str(probe),
            "--plot",
            str(work / "osuclone.png"),
        ],
    )
    if ran.returncode != 0 or not probe.is_file():
        fail(f"pxq probe osuclone exited {ran.returncode}:\n{ran.stdout[-2000:]}{ran.stderr[-2000:]}")
    if "count" not in pxq_in(src, build, work, ["report", "--help"]).stdout:
        fail("pxq report --help does not offer the format count")
    counted = pxq_in(src, build, work, ["report", "--format", "count", str(res)])
    if counted.returncode != 0 or "1 run(s)" not in counted.stdout:
        fail(f"pxq report --format count:\n{counted.stdout[-2000:]}{counted.stderr[-2000:]}")


def main() -> None:
    """The checks in a scratch copy under WORK, removed however they end (a copy left behind is
    a tree of the build folder's that other checks would read: its test data, its records)."""
    source, work, mpirun = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    try:
        check_all(source, work, mpirun)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_all(source: Path, work: Path, mpirun: str) -> None:
    shutil.rmtree(work, ignore_errors=True)
    src, build = work / "src", work / "build"
    src.mkdir(parents=True)
    copy_checkout(source, src)
    added = add_dummy(src)
    if len(added) > MAX_FILES:
        fail(f"a backend took {len(added)} files: {[str(a.relative_to(src)) for a in added]}")
    apps_def = src / "miniapps/apps.def"
    apps_def.write_text(
        apps_def.read_text().replace(
            'PXQ_APP_CHOICE(ring, exchange, "p2p shm"', 'PXQ_APP_CHOICE(ring, exchange, "p2p shm mirror"'
        )
    )
    print(f"check_registries: the backend is {len(added)} files: {', '.join(a.name for a in added)}")
    plugins = add_driver_plugins(src)
    print(
        f"check_registries: a launcher, a probe and a report format touch {len(plugins)} files: "
        f"{', '.join(str(p.relative_to(src)) for p in plugins)}"
    )
    kind = add_kind(src)
    print(f"check_registries: an access kind is {len(kind)} file: {kind[0].relative_to(src)}")
    app = add_app(src)
    if len(set(app)) > MAX_APP_FILES:
        fail(f"a proxy took {len(set(app))} files: {[str(a.relative_to(src)) for a in app]}")
    print(f"check_registries: the proxy is {len(set(app))} files: {', '.join(str(a.relative_to(src)) for a in app)}")

    run(
        [
            "cmake",
            "-S",
            src,
            "-B",
            build,
            "-G",
            "Ninja",
            # The registries' plumbing is checked, not speed: unoptimized code compiles in
            # about half the time.
            "-DCMAKE_BUILD_TYPE=Debug",
            "-DPXQ_ENABLE_KOKKOS=OFF",
        ],
        work,
    )
    targets = [
        "pxq-envinfo",
        "pxq-unit-tests",
        "pxq-cg",
        "pxq-mg",
        "pxq-ring",
        "pxq-sx",
        "pxq-bench-tiling",
        "pxq-probe-osu",
    ]
    run(["cmake", "--build", build, "--target", *targets], work)
    check_choice(src, build, work)
    check_driver_plugins(src, build, work)
    check_kind(src, build, work, work / "solo.jsonl")
    check_app(src, build, work, mpirun)
    reg = run([build / "bin/pxq-envinfo", "registry"], work).stdout
    if not re.search(r'"available": true,\s*"enable": "",\s*"name": "dummy"', reg):
        fail(f"the registry does not list dummy as available:\n{reg}")
    families = re.findall(r'\{\s*"backends": \[([^\]]*)\],\s*"name": "(\w+)"', reg)
    missing = [name for who, name in families if '"dummy"' not in who and name != "SX"]  # sx came after dummy
    if len(families) < 5 or missing:
        fail(f"dummy does not run every kernel family: {missing or families}")

    tests = run([build / "bin/pxq-unit-tests", "--gtest_filter=*dummy*", "--gtest_brief=1"], work).stdout
    ran = re.search(r"(\d+) tests? from", tests)
    if not ran or int(ran.group(1)) < 3:
        fail(f"the kernel tests did not run the new backend:\n{tests[-2000:]}")
    cg = run(
        [mpirun, "-np", "1", build / "bin/pxq-cg", "--class", "S", "--backend", "dummy", "--mode", "tiled", "--quiet"],
        work,
    ).stdout
    if "Verification    = SUCCESSFUL" not in cg:
        fail(f"CG on dummy did not verify:\n{cg[-2000:]}")
    listed = run(["ctest", "-N", "-R", r"\.dummy"], build).stdout
    if "mpi.cg.S.dummy.np1" not in listed or "mpi.mg.S.dummy.np1" not in listed:
        fail(f"CTest has no runs on dummy:\n{listed[-2000:]}")

    # A backend may cover a subset: without its MG file, MG on it is bad input.
    (src / "kernels/dummy/mg_ops.cpp").unlink()  # the folder's executors are found, not listed
    run(["cmake", "--build", build, "--target", "pxq-envinfo", "pxq-cg", "pxq-mg"], work)
    mg = run([mpirun, "-np", "1", build / "bin/pxq-mg", "--class", "S", "--backend", "dummy"], work, ok=(2,))
    if "does not run MG kernels" not in mg.stdout + mg.stderr or "--backend openmp" not in mg.stdout + mg.stderr:
        fail(f"MG on a backend without MG kernels: not the bad-input message:\n{mg.stdout[-1500:]}{mg.stderr[-1500:]}")
    run([mpirun, "-np", "1", build / "bin/pxq-cg", "--class", "S", "--backend", "dummy", "--quiet"], work)
    listed = run(["ctest", "-N", "-R", r"\.dummy"], build).stdout
    if "mpi.mg.S.dummy" in listed or "mpi.cg.S.dummy.np1" not in listed:
        fail(f"CTest's runs on dummy do not follow its files:\n{listed[-2000:]}")
    print("check_registries: PASS (added in", len(added), "files; a subset refused as bad input)")


if __name__ == "__main__":
    main()
