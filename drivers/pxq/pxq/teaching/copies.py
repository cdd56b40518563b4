"""What a student's copy may hold, read before anything of it is built: the files the student
edits and nothing that could stand in for the harness's (check_copy), and none of what forging
the harness's result would take (reaches): its result line, its settings, the environment,
exits behind its back, assembly, code run before main. The grade's real defence is outside the
student's process (pxq recomputes every answer); this names the attempt, line by line. And
whether the copy's build folder, pxq's own, was configured for another lab folder or generator
(stale_build: remade, never blamed on the student's code)."""

from __future__ import annotations

import re
from pathlib import Path

from pxq.core import door, escape
from pxq.core.errors import InputError

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inc", ".inl", ".ipp", ".tcc")


def check_copy(copy: Path, student_files: list[str]) -> None:
    """A student's copy holds the files the student edits, and no header, folder, link or
    special file that could stand in for the harness's or the system's (refused, exit 2,
    naming the file)."""
    keep = {"build", *student_files}
    for item in sorted(copy.iterdir()):
        if item.is_symlink() or (item.exists() and not (item.is_file() or item.is_dir())):
            raise InputError(
                f"{item}: a copy holds plain files only, and this is a link or a special file: replace it "
                "with the file itself, or move it out of the copy"
            )
        if item.name in keep or item.name.startswith(".pxq"):
            continue
        if item.is_dir() or item.suffix.lower() in HEADER_SUFFIXES:
            raise InputError(
                f"{item}: a copy holds only the files you edit ({', '.join(student_files)}); a header or folder "
                "beside them could stand in for the lab's own: move it out of the copy"
            )


# What forging the harness's result takes, and no lab's exercise needs: printing its line,
# reading its settings or secrets (pxq's, the environment, another process's memory), ending or
# diverting the program behind its back (so that the harness's own line never comes), running
# or placing code it does not call, standing in for MPI's or the C library's functions. Each with
# what it does, as the student is told. (Starting processes is the sandbox's to contain.)
REACHES = (
    (r"LAB-RESULT|LAB_RESULT", "prints the harness's result line"),
    (r"\bPXQ_", "reads pxq's own settings (PXQ_...)"),
    (
        r"\b(nonce|take_nonce|emitted)\b|\blab\s*::\s*(detail|emit|finish|run|main_of)\b",
        "calls the harness's result machinery",
    ),
    (
        r"\b(getenv|secure_getenv|environ|__environ|setenv|putenv|unsetenv|clearenv)\b",
        "reads or changes the environment",
    ),
    (r"/proc/|/dev/(mem|kmem|tty)", "reads the system's process tables or devices"),
    # (an empty compiler barrier, asm volatile("" ::: "memory"), is a benchmark's idiom: not read)
    (r'\b(asm|__asm__|__asm)\b(?!\s*(volatile|__volatile__)?\s*\(\s*""\s*:)', "holds assembly"),
    (
        r"__attribute__\s*\(\(\s*(constructor|destructor|ifunc|section|alias|weak|visibility)",
        "runs or places code the harness does not call",
    ),
    (
        r"\b(dlopen|dlsym|dlvsym|syscall|ptrace|process_vm_readv|process_vm_writev|mprotect)\b",
        "reaches past the language into the process",
    ),
    (
        r"\b(_exit|_Exit|quick_exit|abort|exit|atexit|at_quick_exit|longjmp|siglongjmp|raise|kill|signal|sigaction|"
        r"terminate)\s*\(",
        "ends or diverts the program behind the harness's back",
    ),
    (r"\b(dup|dup2|dup3|freopen)\s*\(|\bclose\s*\(\s*[0-2]\s*\)", "redirects the program's output"),
    (
        r'extern\s*"C"|\bPMPI_\w+|\bMPI_(Init|Init_thread|Finalize|Abort)\b',
        "stands in for MPI or the C library, or starts or ends MPI",
    ),
)
SOURCE_BYTES = 1 << 20  # a student's file larger than this is not a lab's answer
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def reaches(copy: Path, student_files: list[str]) -> list[str]:
    """Where a student's files reach past the exercise, each as "FILE:LINE: `TEXT` WHAT" (comments
    are not read): what no lab needs and what forging a result would take. A file too large or
    not text is one such finding."""
    found = []
    for name in student_files:
        path = copy / name
        try:
            with open(path, "rb") as f:
                raw = f.read(SOURCE_BYTES + 1)
        except OSError as e:
            found.append(f"{name}: cannot be read ({e.strerror})")
            continue
        if len(raw) > SOURCE_BYTES:
            found.append(f"{name}: over {SOURCE_BYTES >> 20} MiB, which no lab's answer is")
            continue
        text = raw.decode("utf-8", errors="replace")
        code = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for pattern, what in REACHES:
            for m in re.finditer(pattern, code):
                line = code.count("\n", 0, m.start()) + 1
                found.append(f"{name}:{line}: `{escape.plain(m.group(0))}` {what}")
    return found


def stale_build(copy: Path, lab_folder: Path, generator: str | None) -> str | None:
    """Why the copy's build folder cannot be configured again for LAB_FOLDER with GENERATOR (None:
    it can, or there is none). CMake refuses a cache made from another source folder (the copy
    built by another pxq checkout) or with another generator; that is pxq's folder, not the
    student's code, so it is remade rather than graded "does not build"."""
    cache = copy / "build" / "CMakeCache.txt"
    if cache.is_symlink() or not cache.is_file():
        return None
    try:
        text = door.text(cache, "the copy's CMake cache", "pxq lab check remakes the copy's build folder")
    except InputError:
        return "its CMake cache cannot be read"
    entries = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    home = entries.get("CMAKE_HOME_DIRECTORY:INTERNAL")
    if home is not None and Path(home).resolve() != lab_folder.resolve():
        return f"it was configured for the lab folder {escape.plain(home)}, not {lab_folder} (another pxq checkout)"
    made_with = entries.get("CMAKE_GENERATOR:INTERNAL")
    if generator and made_with is not None and made_with != generator:
        return f"it was configured with the {escape.plain(made_with)} generator, and pxq builds with {generator}"
    return None
