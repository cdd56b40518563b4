"""Run records: JSON lines, each written whole or not at all, read safely.

- `append` writes one line in one write under an exclusive lock; a short write (a full disk)
  is truncated away and raised as RecordError, so a file never holds part of a record.
- `read` decodes every line on its own: a damaged last line (a write cut short by a crash)
  is skipped and reported; any other damaged line is an error that names the line and the
  fix (`pxq repair FILE`). Only regular files are read.
- `final` keeps one record per run: a later record of the same run (a sweep resumed or
  rerun, a driver verdict on a run that wrote its own record) supersedes the earlier one.
- `exit_code` is the one rule for every command's exit code (see EXIT_CODES).

Over 400 lines: the one door every reader passes (bounds, decoding, schema) and the one writer
(lock, whole lines, repair) stay together, so what is written and what is accepted cannot drift apart.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import hashlib
import itertools
import json
import os
import re
import stat
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pxq.core import door, escape, outputs, schemas
from pxq.core.errors import InputError

SCHEMA = 2  # the version of every record kind's schema (schemas/, docs/RESULTS.md)

# The exit codes of every pxq command (documented in the README and docs/USAGE.md).
EXIT_OK = 0  # everything ran and verified
EXIT_VERIFICATION = 1  # a run finished but did not reproduce its known answer
EXIT_BAD_INPUT = 2  # bad input or environment: nothing ran, no record written
EXIT_RUN_FAILED = 3  # a run crashed, was killed, hit its timeout, or its record could not be written
# Interrupted by SIGINT, SIGTERM or SIGHUP: 128 + the signal number (130, 143, 129).
# A run record's "time" keys that are not phases of its timed iterations: the total, the set-up,
# and the start-up (the slowest rank's MPI_Init_thread, rank 0's seconds from main to its
# record, and the launcher's share the driver adds: process start, finalize, teardown).
NOT_PHASES = frozenset({"total", "setup", "mpi_init", "app_wall", "launch"})
FAILED_STATUSES = ("error", "timeout")


class RecordError(RuntimeError):
    """A results file that cannot be read as run records (bad input: exit 2)."""


class RecordWriteError(RecordError):
    """A record that could not be written (a full disk, a vanished folder: exit 3)."""


def _is_regular_or_absent(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def check_plain(path: Path, option: str) -> None:
    """Raises InputError when a path holds a control character (a newline, an escape)."""
    if re.search(r"[\x00-\x1f\x7f-\x9f]", str(path)):
        raise InputError(
            f"{option} {escape.plain(str(path))!r}: the path holds a control character (a newline, an escape): "
            f"give {option} a plain path"
        )


def check_writable(path: Path, option: str = "--results", kind: str = "records") -> None:
    """Raises InputError naming the path and the fix; creates nothing. An existing file must
    hold KIND (pxq.core.outputs): pxq never appends to or replaces a file of another kind."""
    path = Path(path)
    check_plain(path, option)
    what = "results" if option == "--results" else f"{option}'s"
    if path.exists():
        if path.is_dir():
            raise InputError(f"{what} path '{path}' is a directory: give a file such as {path}/results.jsonl")
        if not _is_regular_or_absent(path):
            raise InputError(f"{what} path '{path}' is not a regular file: give a file such as results/run.jsonl")
        if not os.access(path, os.W_OK):
            raise InputError(f"{what} file '{path}' is not writable: fix its permissions or use {option}")
        outputs.check(path, kind, option)  # a user's file of another kind is never appended to or replaced
        return
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        # Creating our own default results folder is fine; a user path must exist.
        raise InputError(f"{what} directory '{parent}' does not exist: create it or use {option}")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{what} directory '{parent}' is not writable: use {option} PATH")
    probe = parent / f".pxq-write-test-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"{what} directory '{parent}' cannot hold files ({e.strerror}): use {option} PATH") from None


def _mend_tail(fd: int, path: Path, size: int) -> int:
    """An unterminated last line left by a write cut short (a crash, a kill): a whole record
    is kept (terminated later by the caller), a partial one is moved to PATH.damaged and
    truncated away. Returns the file's new size."""
    start = size
    while start > 0:
        chunk = os.pread(fd, min(65536, start), max(0, start - 65536))
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            start = start - len(chunk) + nl + 1
            break
        start -= len(chunk)
    tail = os.pread(fd, size - start, start)
    try:
        _decode(path, 0, tail + b"\n", last=False)
        return size
    except RecordError:
        pass
    damaged = path.with_name(path.name + ".damaged")
    try:
        _write_beside(damaged, (damaged.read_bytes() if damaged.is_file() else b"") + tail + b"\n")
    except OSError as e:
        raise RecordWriteError(
            f"cannot set aside the unfinished last line of '{path}' ({e.strerror}): the record was "
            f"not written; the file is as it was"
        ) from None
    os.ftruncate(fd, start)
    escape.warn(
        f"pxq: warning: {path}: the unfinished last line of an interrupted write was moved to {path.name}.damaged"
    )
    return start


def append(path: Path, record: dict[str, Any]) -> None:
    """One line, one write, under an exclusive lock: concurrent writers never interleave and a
    failed write leaves the file as it was."""
    path = Path(path)
    try:
        line = (outputs.dumps(record, sort_keys=True) + "\n").encode()
    except outputs.NotJSON as e:
        raise RecordWriteError(f"cannot write the record to '{path}': {e} (the record was not written)") from None
    if not _is_regular_or_absent(path):
        raise RecordWriteError(f"{path}: not a regular file; records go to regular files")
    try:
        outputs.check(path, "records", "the results file")
    except InputError as e:
        raise RecordWriteError(str(e)) from None
    try:
        fd = _open_locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    except OSError as e:
        raise RecordWriteError(f"cannot open results file '{path}': {e.strerror}") from None
    try:
        size = os.fstat(fd).st_size
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            size = _mend_tail(fd, path, size)
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
        try:
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            os.fsync(fd)
        except OSError as e:
            os.ftruncate(fd, size)
            raise RecordWriteError(
                f"cannot write to results file '{path}': {e.strerror} (the record was not "
                f"written; the file is as it was)"
            ) from None
    finally:
        os.close(fd)  # closing releases the lock


# Bounds on what a reader accepts: a record is one line of JSON of at most MAX_LINE bytes,
# nested at most MAX_DEPTH deep (pxq's own records are nested 6 deep; a deeper one is not
# pxq's and would exhaust the parser's stack). The door itself is pxq.core.door.
MAX_LINE = 64 << 20
MAX_DEPTH = door.MAX_DEPTH
nesting = door.nesting


def problem(rec: Any) -> str | None:
    """Why a decoded JSON value is not a pxq record pxq can use (None when it is one): not an
    object, no kind, or a field of the wrong type for its kind's schema."""
    found = schemas.problems(rec, "")
    if not found:
        return None
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    if first.kind is None or first.kind not in schemas.KINDS:
        return first.message
    return f"not a valid {first.kind} record: {first.message}{more}"


def parse_line(raw: bytes) -> tuple[Any, str | None]:
    """One line of JSON within pxq's bounds: (value, None), (None, None) for a blank line, or
    (None, why) for a line that is too long, not UTF-8, nested too deep or not JSON."""
    value, why = door.parse_json(raw, MAX_LINE)
    if why is not None:
        why = why.replace("not JSON (", "not a JSON record (").replace(" (not pxq's)", " (not a pxq record)")
        if why.endswith("MiB)") and why[0].isdigit():
            why = f"a line of {why.split()[0]} bytes (records are at most {MAX_LINE >> 20} MiB)"
    return value, why


def decode_line(raw: bytes, check: bool = True) -> tuple[Any, str | None]:
    """One line of a records file: (record, None), (None, None) for a blank line, or (None,
    why) for a line that is not a usable pxq record. The one door every reader goes through:
    parse_line's bounds, then the record's kind's schema (pxq.core.schemas)."""
    rec, why = parse_line(raw)
    if why is None and raw.strip():  # a JSON null is a line, not a blank one
        why = problem(rec) if check else (None if isinstance(rec, dict) else "not a pxq record")
    return (None, why) if why else (rec, None)


def json_file(path: Path, fix: str) -> Any:
    """A whole JSON document (a tile profile, a benchmark's output, a references or progress
    file) read within the same bounds as a record, through pxq.core.door: a regular file, UTF-8,
    at most MAX_LINE bytes, nested at most MAX_DEPTH deep. InputError names the file, the problem
    and FIX; a missing file raises FileNotFoundError for the caller to name."""
    return door.json_doc(path, "", fix, MAX_LINE)


def _decode(path: Path, number: int, raw: bytes, last: bool, check: bool = True) -> dict[str, Any] | None:
    """A record, None for a blank line, or a RecordError; a damaged unterminated last line is
    reported and skipped."""
    rec, why = decode_line(raw, check)
    if why is None:
        return rec
    if last and not raw.endswith(b"\n"):
        escape.warn(
            f"pxq: warning: {path}:{number}: damaged last line skipped ({why}; a write cut short); "
            f"`pxq repair {path}` removes it"
        )
        return None
    raise RecordError(
        f"{path}:{number}: {escape.plain(why)}: `pxq repair {path}` keeps the good records and sets the others aside"
    )


def read_bytes(path: Path) -> bytes:
    """A results file's bytes, through pxq.core.door (a regular file; any size)."""
    try:
        return door.read_bytes(path, "", "give a results file (.jsonl)", None)
    except InputError as e:
        raise RecordError(str(e).replace(" is a folder:", " is a directory:")) from None


def read(
    path: Path, must_exist: bool = False, check: bool = True, containing: bytes | None = None
) -> list[dict[str, Any]]:
    """All records of a results file ([] when it does not exist, unless must_exist). check=False
    is for the driver's own run folder only: an app's record before the driver completes it
    (within the door's bounds, not yet whole for its schema). CONTAINING: only the lines that
    hold those bytes (a sweep's id or plan) are decoded, so a sweep's own records are found in a
    file of 100,000 others without parsing them."""
    path = Path(path)
    if not path.exists():
        if must_exist:
            raise InputError(f"{path}: no such file")
        return []
    return [rec for rec in stream(path, check, containing) if rec is not None]


def stream(path: Path, check: bool = True, containing: bytes | None = None) -> Iterator[dict[str, Any] | None]:
    """A results file's records one at a time, as read() decodes them (None for a blank or a
    damaged last line): memory one line and one record, not the file."""
    for number, raw, last in lines(path):
        if containing is not None and containing not in raw:
            continue
        yield _decode(path, number, raw, last=last, check=check)


def lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(number, line, whether it is the last) of a results file, through pxq.core.door, a line at
    a time; a line over MAX_LINE comes cut (its reader says it is too long)."""
    try:
        yield from door.lines(Path(path), "", "give a results file (.jsonl)", MAX_LINE)
    except InputError as e:
        raise RecordError(str(e).replace(" is a folder:", " is a directory:")) from None


def read_own(path: Path, containing: bytes | None = None) -> list[dict[str, Any]]:
    """The records of a file pxq is writing to (a sweep's, read back at its end): a line that is
    not a record, which another process wrote there meanwhile, is skipped with one warning
    naming the fix, never a refusal of the runs that were made and recorded. CONTAINING: only
    the lines holding those bytes are decoded (as read's)."""
    out, bad = [], []
    for number, raw, _ in lines(Path(path)):
        raw = raw.rstrip(b"\r\n")
        if containing is not None and containing not in raw:
            # Not decoded, but a line that cannot be a record's (not one JSON object) is still said.
            text = raw.strip()
            if text and not (text.startswith(b"{") and text.endswith(b"}")):
                bad.append(number)
            continue
        rec, why = decode_line(raw)
        if why is not None:
            bad.append(number)
        elif rec is not None:
            out.append(rec)
    if bad:
        escape.warn(
            f"pxq: warning: {path}: line(s) {', '.join(map(str, bad[:5]))}{' ...' if len(bad) > 5 else ''} are not "
            f"records (written there by something else while pxq wrote to it): `pxq repair {path}` sets them aside"
        )
    return out


def _open_locked(path: Path, flags: int) -> int:
    """An fd of PATH under the exclusive lock every writer takes. A repair replaces the file
    (a new inode): a writer that waited for the lock on the old one opens the new one."""
    while True:
        fd = os.open(path, flags | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass  # replaced and not yet renamed into place: open again
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _write_beside(path: Path, data: bytes) -> None:
    """PATH replaced by DATA whole or not at all (a temporary file beside it, synced, renamed);
    on failure (a full disk) PATH is as it was and the temporary file is gone."""
    tmp = path.with_name(f".{path.name}.repair-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def repair(path: Path) -> tuple[int, list[tuple[int, str]]]:
    """Keeps the good records of a file; the lines that are not usable records go to
    PATH.damaged. Runs under the lock `append` takes, so no record appended meanwhile is lost;
    each file is replaced whole or not at all, PATH.damaged first (a full disk leaves both as
    they were). Returns (records kept, (line number, why) of each line set aside)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    read_bytes(path)  # a directory or a device: refused before it is opened for writing
    try:
        fd = _open_locked(path, os.O_RDWR)
    except OSError as e:
        raise RecordError(f"cannot repair {path}: {e.strerror}") from None
    try:
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
        good, bad = [], []
        for number, raw in enumerate(data.splitlines(keepends=True), start=1):
            rec, why = decode_line(raw)
            if why is not None:
                bad.append((number, raw.rstrip(b"\r\n") + b"\n", why))
            elif rec is not None:
                good.append(raw.rstrip(b"\r\n") + b"\n")
        if not bad:
            return len(good), []
        damaged = path.with_name(path.name + ".damaged")
        before = damaged.read_bytes() if damaged.is_file() else b""
        try:
            _write_beside(damaged, before + b"".join(raw for _, raw, _ in bad))
            _write_beside(path, b"".join(good))
        except OSError as e:
            raise RecordError(f"cannot repair {path}: {e.strerror}; the file is unchanged") from None
        return len(good), [(n, why) for n, _, why in bad]
    finally:
        os.close(fd)


# What a reader raises on a value of a type or range pxq never writes (a size as a string, a
# placement of numbers, a total of 0): the schema refuses most of them; what it cannot say (one
# field against another, a study's own rows) a reader meets here.
DATA_ERRORS = (TypeError, ValueError, LookupError, AttributeError, ArithmeticError, StopIteration, AssertionError)


@contextlib.contextmanager
def consuming(what: str) -> Iterator[None]:
    """Turns a data error raised while records are used into RecordError (exit 2) naming WHAT
    (the files read) and where the reader stopped: never a traceback."""
    try:
        yield
    except (InputError, RecordError):
        raise
    except RecursionError:
        raise RecordError(f"{what}: a record nests deeper than pxq's readers follow: not a pxq record") from None
    except DATA_ERRORS as e:
        frame = traceback.extract_tb(e.__traceback__)[-1]
        raise RecordError(
            f"{what}: a record holds a value pxq never writes there ({type(e).__name__}: {escape.plain(e)[:160]}, "
            f"met in {Path(frame.filename).name}:{frame.lineno}): `pxq validate` names the records' fields that "
            "break their schema; a record pxq wrote unchanged that fails here is a bug of pxq's to report"
        ) from None


def by_run_id(records: Iterable[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    return [r for r in records if r.get("driver", {}).get("run_id") == run_id]


def run_identity(rec: dict[str, Any]) -> tuple:
    """What makes two records the same run: a sweep's run (sweep id and key), else the run id."""
    d = rec.get("driver", {}) if isinstance(rec.get("driver"), dict) else {}
    if d.get("sweep_id") and d.get("sweep_key"):
        return ("sweep", d["sweep_id"], d["sweep_key"])
    if d.get("run_id"):
        return ("run", d["run_id"])
    return ("record", id(rec))


def final(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per run, the last written, in the order the runs first appeared."""
    last: dict[tuple, dict[str, Any]] = {}
    for rec in records:
        key = run_identity(rec)
        last.pop(key, None)  # re-insert: a superseding record keeps the later position
        last[key] = rec
    return list(last.values())


def _kept(
    path: Path, must_exist: bool, keep: Callable[[dict[str, Any]], dict[str, Any]] | None, many: bool
) -> Iterable[tuple[dict[str, Any], Any]]:
    """(record, what two copies of it are compared by) for a file's records as read() gives
    them; with KEEP, what of each is kept, one record at a time (the whole of a record is held
    only while it is read), compared by a digest of the whole record when MANY files are read."""
    if keep is None or not Path(path).exists():
        return ((rec, rec) for rec in read(path, must_exist=must_exist))
    return ((keep(rec), _digest(rec) if many else None) for rec in stream(path) if rec is not None)


def _digest(rec: dict[str, Any]) -> bytes:
    return hashlib.blake2b(json.dumps(rec, sort_keys=True).encode(), digest_size=16).digest()


PARTS_MAX = 1 << 14  # distinct parts kept for sharing (a bound on what sharing may hold)
_PARTS: dict[Any, Any] = {}


def share(key: Any, part: Any) -> Any:
    """One object for equal parts of many records, KEY their contents as a hashable value (the
    readers' KEEP projections: 100,000 runs of a sweep hold one copy of their alike layouts,
    variants and sizes); read only, never written to. A part whose key cannot be hashed (it
    holds a list or an object) is kept as it is."""
    try:
        kept = _PARTS.get(key)
    except TypeError:
        return part
    if kept is None and len(_PARTS) < PARTS_MAX:
        _PARTS[key] = kept = copy.deepcopy(part)  # its own copy: no caller's record is held
    return part if kept is None else kept


def _frozen(value: Any) -> Any:
    """A record part as a hashable value (its dicts as tuples of items, its lists as tuples,
    each tagged so a dict and a list of the same items differ)."""
    if isinstance(value, dict):
        return ("{", *((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("[", *(_frozen(v) for v in value))
    return value


def shared_part(name: str, part: Any) -> Any:
    """A record part (a dict or list of JSON values) through share(), keyed by its contents."""
    return share((name, _frozen(part)), part) if isinstance(part, (dict, list)) else part


def read_files(
    paths: Iterable[Path], must_exist: bool = True, keep: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every file's records (each through read(), one final record per run), a run counted
    once however many files hold it (a folder with two copies of one results file); the same
    run with different contents in two files is refused, naming both, rather than counted twice
    or picked at random. KEEP: what of each record the reader holds (its identity kept), taken
    as each file is read; two copies of a run are then compared by a digest of the whole."""
    paths = list(paths)
    seen: dict[tuple, tuple[Any, Path]] = {}
    out: list[dict[str, Any]] = []
    for path in paths:
        last: dict[tuple, tuple[dict[str, Any], Any]] = {}  # final(): the last record of each run
        for rec, whole in _kept(path, must_exist, keep, len(paths) > 1):
            key = run_identity(rec)
            last.pop(key, None)
            last[key] = (rec, whole)
        for key, (rec, whole) in last.items():
            if key[0] == "record":  # no identity: nothing to count twice
                out.append(rec)
                continue
            if key in seen:
                first, where = seen[key]
                if first != whole:
                    name = (rec.get("driver") or {}).get("run_id") or key[-1]
                    raise InputError(
                        f"run {escape.plain(name)} is in {where} and in {path} with different contents: keep "
                        "one of the files (or the record you trust) and read again"
                    )
                continue
            seen[key] = (whole, Path(path))
            out.append(rec)
    return out


def exit_code(records: Iterable[dict[str, Any]]) -> int:
    """3 when a run failed (error, timeout), else 1 when one did not verify, else 0."""
    statuses = {r.get("status") for r in records}
    if statuses & set(FAILED_STATUSES):
        return EXIT_RUN_FAILED
    if statuses - {"ok"}:
        return EXIT_VERIFICATION
    return EXIT_OK


def completed_keys(records: Iterable[dict[str, Any]]) -> set[str]:
    """Sweep keys of the runs whose final record verified (what --resume skips)."""
    return {
        r["driver"]["sweep_key"]
        for r in final(records)
        if r.get("status") == "ok" and r.get("driver", {}).get("sweep_key")
    }


def documents(path: Path) -> list[tuple[str, Any]]:
    """(where, record) for a JSON-lines file, or for one JSON document (a tile profile); a line
    that is not JSON within pxq.core.records' bounds (UTF-8, size, nesting) comes as a ValueError
    naming why."""
    return list(each_document(path))


def one_document(path: Path) -> bool:
    """Whether the file is one JSON document over several lines (a tile profile, a record saved
    pretty-printed), not JSON lines: documents() reads it whole, read() refuses it."""
    first = next((raw for _, raw, _ in lines(path) if raw.strip()), b"")
    return first.strip() == b"{"


def each_document(path: Path) -> Iterator[tuple[str, Any]]:
    """documents(), one at a time: memory one line and its value, not the file."""
    if one_document(path):
        whole, why = parse_line(read_bytes(path).replace(b"\n", b" "))
        yield f"{path}", ValueError(why) if why else whole
        return
    alone = sum(1 for _ in itertools.islice((1 for _, raw, _ in lines(path) if raw.strip()), 2)) < 2
    for number, line, _ in lines(path):
        if not line.strip():
            continue
        value, why = parse_line(line)
        yield (f"{path}" if alone else f"{path}:{number}"), ValueError(why) if why else value
