"""The one door every file pxq writes passes (records appended are pxq.core.records' own):

- nothing but a regular file is ever written or replaced: a device (`--out /dev/null` as root),
  a FIFO, a socket or a folder is refused;
- an existing file is replaced only when it holds the kind of thing pxq writes there (a
  figure where a figure goes, JSON where JSON goes, a table where a table goes, pxq's own kept
  profile where one is kept), so a mistyped path never destroys a user's file;
- the file is written whole or not at all (a temporary file beside it, renamed into place),
  with the mode the user's umask gives a new file;
- JSON is never written with NaN or Infinity, which JSON does not have.

Refusals are InputError (exit 2) naming the option or variable and the fix."""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pxq.core import door
from pxq.core.errors import InputError

HEAD = 1 << 16  # bytes of an existing file read to tell what it holds


def _text(head: bytes) -> str | None:
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as e:  # a multi-byte character cut at the end of the head is fine
        return head[: e.start].decode("utf-8") if e.start > len(head) - 4 else None


def _first_line(head: bytes) -> str:
    text = _text(head) or ""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _json_start(head: bytes) -> bool:
    """One JSON document: it starts as JSON does, and is not JSON lines (records: a whole object
    on its first line, another after it), which no JSON document pxq writes replaces."""
    text = (_text(head) or "").lstrip()
    if text[:1] not in ("{", "["):
        return False
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return not (len(lines) > 1 and _records(head) and lines[1].startswith("{"))


def _records(head: bytes) -> bool:
    """JSON lines: the first line a JSON object, or one cut short (a record a killed writer tore
    is still a records file's line, and repair sets it aside); a line longer than the head is
    taken as one. A pretty-printed JSON document's first line, a lone "{", is not."""
    line = _first_line(head)
    if line.startswith('{"') or (len(line) >= HEAD - 4 and line.startswith("{")):
        return True
    value, why = door.parse_json(line.encode(), HEAD)
    return why is None and isinstance(value, dict)


def _kept(*keys: str) -> Callable[[bytes], bool]:
    """A JSON object pxq keeps for itself, known by its keys."""

    def check(head: bytes) -> bool:
        text = _text(head) or ""
        return text.lstrip()[:1] == "{" and all(f'"{k}"' in text for k in keys)

    return check


def _csv(head: bytes) -> bool:
    line = _first_line(head)
    return bool(line) and "," in line and not line.startswith(("{", "[", "#", "<", "|"))


def _markdown(head: bytes) -> bool:
    return _first_line(head).startswith(("|", "#"))


# What an existing file must hold to be replaced, by the kind of thing written there.
KINDS: dict[str, tuple[str, Callable[[bytes], bool]]] = {
    "json": ("a JSON document", _json_start),
    "records": ("pxq records (JSON lines)", _records),
    "trace": ("a Chrome trace", lambda h: _json_start(h) and b'"traceEvents"' in h),
    "csv": ("a CSV table", _csv),
    "markdown": ("a markdown table", _markdown),
    "png": ("a PNG image", lambda h: h.startswith(b"\x89PNG\r\n\x1a\n")),
    "pdf": ("a PDF", lambda h: h.startswith(b"%PDF")),
    "svg": ("an SVG image", lambda h: (_text(h) or "").lstrip().startswith(("<?xml", "<svg"))),
    "html": ("an HTML page", lambda h: (_text(h) or "").lstrip()[:15].lower().startswith(("<!doctype html", "<html"))),
    "extrap": ("an Extra-P input", lambda h: _first_line(h).startswith(("PARAMETER", "POINTS", "REGION", "METRIC"))),
    "order": ("a pxq rank order", lambda h: _first_line(h).startswith("#") or _first_line(h)[:1].isdigit()),
    "rankfile": ("an Open MPI rankfile", lambda h: _first_line(h).startswith(("rank ", "#"))),
    "hosts": ("a host list", lambda h: all(c.isalnum() or c in "-._:,\n " for c in (_text(h) or "!"))),
    "script": ("a pxq job script", lambda h: (_text(h) or "").startswith("#!") and "pxq" in (_text(h) or "")),
    "ceilings": ("pxq's kept ceilings", _kept("format", "cpu_model")),
    "caches": ("pxq's kept cache profile", _kept("format", "levels")),
    "tiles": ("a pxq tile profile", lambda h: (_text(h) or "").lstrip()[:1] == "{" and b"tile-profile" in h),
    "text": ("a text file", lambda h: _text(h) is not None),
}


def figure_kind(path: Path) -> str:
    """The kind of a figure path by its suffix (png when it has none of pdf or svg)."""
    return {".pdf": "pdf", ".svg": "svg"}.get(Path(path).suffix.lower(), "png")


def check(path: Path, kind: str, option: str) -> None:
    """Refuses (InputError, exit 2) a target pxq must not write: a folder or special file, or a
    file that holds something other than KIND. Creates nothing."""
    path = Path(path)
    what, holds = KINDS[kind]
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise InputError(f"{option} {path}: cannot be checked ({e.strerror}): give another path") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{option} {path} is a folder: give a file path")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"{option} {path} is not a regular file (a device, FIFO or socket): pxq writes only regular files, "
            "and never replaces another kind; give a file path"
        )
    if st.st_size == 0:
        return
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD)
    except OSError as e:
        raise InputError(f"{option} {path}: cannot be read to check it ({e.strerror}): give another path") from None
    if not holds(head):
        raise InputError(
            f"{option} {path} exists and does not hold {what}, which pxq writes there: pxq replaces only "
            "files of the kind it writes; give another path, or move that file away first"
        )


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write(path: Path, data: str | bytes, kind: str, option: str = "the output") -> Path:
    """DATA to PATH after check(), whole or not at all (a temporary file beside it, renamed into
    place), with the mode a new file gets under the umask. OSError passes on; the temporary
    file never stays."""
    return write_chunks(path, [data], kind, option)


def write_chunks(path: Path, chunks: Iterable[str | bytes], kind: str, option: str = "the output") -> Path:
    """write() of the CHUNKS one after the other, never all of them in memory at once (a trace of
    thousands of ranks): whole or not at all, as write()."""
    path = Path(path)
    check(path, kind, option)
    fd, name = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}-")
    try:
        os.fchmod(fd, _umask_mode())
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return path


def keep_json(path: Path, data: Any, kind: str, variable: str) -> Path | None:
    """A JSON file pxq keeps for itself (a measured profile), written whole; None when its folder
    cannot be written (the caller measures again next time). A path (from VARIABLE) that holds
    a file pxq did not keep there is refused, exit 2, naming the variable."""
    path = Path(path)
    check(path, kind, variable)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path, dumps(data, indent=1), kind, variable)
    except OSError:
        return None
    return path


def _non_finite(value: Any, where: str = "") -> str | None:
    """The dotted path of the first NaN or infinity in VALUE and what it is, None when there is none."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where or 'the value'} is {value}"
    if isinstance(value, dict):
        for k, v in value.items():
            found = _non_finite(v, f"{where}.{k}" if where else str(k))
            if found:
                return found
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _non_finite(v, f"{where}[{i}]")
            if found:
                return found
    return None


def finite(value: Any) -> Any:
    """VALUE with every NaN and infinity as None: for figures derived from records (a p-value
    that could not be computed), whose JSON says null rather than a number JSON lacks."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


class NotJSON(ValueError):
    """A value holds NaN or infinity: JSON has no such number."""


def dumps(value: Any, **options: Any) -> str:
    """json.dumps that refuses NaN and infinity (NotJSON names the field)."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        where = _non_finite(value)
        raise NotJSON(f"{where or 'a number is not finite'}: JSON has no such number") from None
