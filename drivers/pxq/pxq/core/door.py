"""The one door every file pxq reads passes, whatever it holds (records, TOML experiments, link
and host files, rank orders, kept ceilings, marker files, manifests, peers' output): opened
without blocking (a FIFO or a device never hangs the reader), a regular file only, its size
bounded before it is read, UTF-8, and for structured text its nesting bounded before a parser
recurses into it. Every refusal is an InputError (exit 2) naming the file, what is wrong and
FIX; a missing file raises FileNotFoundError for the caller to name."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import orjson
except ImportError:  # an interpreter without it (the tools' environment runs pxq's modules too)
    orjson = None  # type: ignore[assignment]  # the standard parser alone: slower, the same verdicts

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (a dependency of the package there)
    import tomli as tomllib

from pxq.core import escape
from pxq.core.errors import InputError

MAX_DEPTH = 32  # nesting of arrays and tables: pxq's own files nest 6 deep
SMALL = 1 << 20  # a file a person writes (an experiment, a hostfile, a link, a marker)
DOCUMENT = 64 << 20  # a document pxq writes (a profile, a trace, a manifest)
_JSON_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
TOML_STRINGS = re.compile(rb"\"\"\".*?\"\"\"|'''.*?'''|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|#[^\n]*", re.S)
_BRACKETS = re.compile(rb"[\[\]{}]")
_TOKENS: dict[re.Pattern[bytes], re.Pattern[bytes]] = {}
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")


def _tokens(strings: re.Pattern[bytes]) -> re.Pattern[bytes]:
    """STRINGS or a bracket, whichever comes first: one scan in the regex engine."""
    if strings not in _TOKENS:
        _TOKENS[strings] = re.compile(strings.pattern + b"|" + _BRACKETS.pattern, strings.flags)
    return _TOKENS[strings]


def nesting(text: bytes, strings: re.Pattern[bytes] = _JSON_STRINGS) -> int:
    """How deep the arrays and objects (tables) of a JSON text nest, strings ignored (TOML's:
    STRINGS=TOML_STRINGS, which also drops its comments). One pass of the regex engine over
    the text, keeping nothing but the depth: memory a small constant, not a copy of the text
    per pass (a 7 MB line once cost 650 MB here)."""
    depth = deepest = 0
    for m in _tokens(strings).finditer(text):
        c = text[m.start()]
        if c in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif c in _CLOSE:
            depth -= 1
    return deepest


def _name(path: Path, what: str) -> str:
    return f"{what} {escape.plain(path)}" if what else escape.plain(path)


def _open_regular(path: Path, name: str, fix: str, limit: int | None) -> int:
    """A blocking fd of a regular file of at most LIMIT bytes, opened without blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise InputError(f"{name} is a folder: {fix}") from None
    except OSError as e:
        raise InputError(f"{name}: cannot open it ({e.strerror}): {fix}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{name} is a folder: {fix}")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{name} is not a regular file (a FIFO, a device or a socket): {fix}")
        if limit is not None and st.st_size > limit:
            raise InputError(f"{name}: {st.st_size} bytes, more than such a file holds (at most {limit}): {fix}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def lines(path: Path, what: str, fix: str, longest: int) -> Iterator[tuple[int, bytes, bool]]:
    """(number, line, whether it is the last) of a regular file of any size, a line at a time:
    memory one line, not the file. A line longer than LONGEST comes as its first LONGEST + 1
    bytes (the rest is skipped unread into memory), so its reader can say it is too long."""
    path = Path(path)
    name = _name(path, what)
    fd = _open_regular(path, name, fix, None)
    try:
        with os.fdopen(fd, "rb", buffering=1 << 20, closefd=False) as f:
            number, pending = 0, None
            while True:
                raw = f.readline(longest + 1)
                if len(raw) > longest and not raw.endswith(b"\n"):
                    while True:  # the rest of an overlong line, read in pieces and dropped
                        rest = f.readline(1 << 20)
                        if not rest or rest.endswith(b"\n"):
                            raw += b"\n" if rest else b""
                            break
                if pending is not None:
                    yield number, pending, not raw
                if not raw:
                    return
                number, pending = number + 1, raw
    except OSError as e:
        raise InputError(f"{name}: cannot read it ({e.strerror}): {fix}") from None
    finally:
        os.close(fd)


def read_bytes(path: Path, what: str, fix: str, limit: int | None = SMALL) -> bytes:
    """The bytes of a regular file of at most LIMIT bytes (None: any size)."""
    path = Path(path)
    name = _name(path, what)
    fd = _open_regular(path, name, fix, limit)
    try:
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:  # it grew while being read
                raise InputError(f"{name}: more than {limit} bytes, more than such a file holds: {fix}")
        return b"".join(chunks)
    except OSError as e:
        raise InputError(f"{name}: cannot read it ({e.strerror}): {fix}") from None
    finally:
        os.close(fd)


def text(path: Path, what: str, fix: str, limit: int | None = SMALL) -> str:
    """A UTF-8 text file (read_bytes's bounds)."""
    raw = read_bytes(path, what, fix, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{_name(Path(path), what)}: not UTF-8 text (byte {e.start}): {fix}") from None


def toml_doc(path: Path, what: str, fix: str, limit: int = SMALL) -> tuple[dict[str, Any], str]:
    """A whole TOML document and its text: text()'s bounds, its nesting bounded before the
    parser recurses, then parsed (invalid TOML names the parser's line and column)."""
    body = text(path, what, fix, limit)
    name = _name(Path(path), what)
    if nesting(body.encode(), TOML_STRINGS) > MAX_DEPTH:
        raise InputError(f"{name}: nested deeper than {MAX_DEPTH} levels: {fix}")
    try:
        return tomllib.loads(body), body
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{name}: not valid TOML: {e}: {fix}") from None
    except RecursionError:
        raise InputError(f"{name}: nested deeper than {MAX_DEPTH} levels: {fix}") from None


def _not_a_number(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON number")


def parse_json(raw: bytes, limit: int) -> tuple[Any, str | None]:
    """JSON within pxq's bounds: (value, None), (None, None) for blank text, or (None, why)
    for text too long, not UTF-8, nested too deep, holding NaN or Infinity, or not JSON."""
    raw = raw.strip()
    if not raw:
        return None, None
    if len(raw) > limit:
        return None, f"{len(raw)} bytes (at most {limit >> 20} MiB)"
    # orjson first (its own recursion bounded; keys up to 64 bytes shared between records by its
    # cache); what it refuses goes to the standard parser, which decides and names the problem
    # (NaN, the byte that is not UTF-8), and takes what only orjson refuses (an escaped lone
    # surrogate). orjson reads an integer past 64 bits as a float (the standard parser: exactly);
    # no record pxq writes holds one. The depth is read from the parsed value (a walk costs a
    # sixth of scanning the text).
    try:
        if orjson is None:
            raise ValueError("no orjson")
        value = orjson.loads(raw)
    except ValueError:  # orjson.JSONDecodeError is one
        value, why = _parse_standard(raw)
        if why is not None:
            return None, why
    if deeper_than(value, MAX_DEPTH):
        return None, f"nested deeper than {MAX_DEPTH} levels (not pxq's)"
    return value, None


def _parse_standard(raw: bytes) -> tuple[Any, str | None]:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    try:
        return json.loads(decoded, parse_constant=_not_a_number), None
    except ValueError as e:
        return None, f"not JSON ({getattr(e, 'msg', e)})"
    except RecursionError:
        return None, f"nested deeper than {MAX_DEPTH} levels (not pxq's)"


_SHARED: dict[str, str] = {}
SHARED_MAX = 1 << 16  # short string values kept for sharing (a bound on what sharing may hold)


def deeper_than(value: Any, limit: int) -> bool:
    """Whether parsed JSON's arrays and objects nest deeper than LIMIT: a walk of its containers
    a level at a time (no recursion), stopped at the first level past the limit. On the way an
    object's short string values ("ok", "flat", "openmp") are shared with every other record's:
    100,000 records of one sweep hold them once, not 100,000 times."""
    if value.__class__ is not dict and value.__class__ is not list:
        return False
    shared, level, depth = _SHARED, [value], 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            if node.__class__ is list:
                below.extend(c for c in node if c.__class__ is dict or c.__class__ is list)
                continue
            for key, child in node.items():
                kind = child.__class__
                if kind is dict or kind is list:
                    below.append(child)
                elif kind is str and len(child) <= 16:
                    kept = shared.get(child)
                    if kept is None:
                        if len(shared) < SHARED_MAX:
                            shared[child] = child
                    elif kept is not child:
                        node[key] = kept
        level, depth = below, depth + 1
    return False


def json_doc(path: Path, what: str, fix: str, limit: int = DOCUMENT) -> Any:
    """A whole JSON document: read_bytes's bounds, then parse_json's."""
    value, why = parse_json(read_bytes(path, what, fix, limit), limit)
    if why is None and value is None:
        why = "empty"
    if why is not None:
        raise InputError(f"{_name(Path(path), what)}: {escape.plain(why)}: {fix}")
    return value
