"""Text from records and students' files, made safe for where it is shown: the terminal (no
control sequences, no rich markup: `term`), markdown (no markup), HTML (pxq.experiments.reproduce
uses html.escape) and CSV cells (no formulas a spreadsheet would run)."""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~])")


def plain(text: Any) -> str:
    """Text with terminal control sequences and control characters removed."""
    return _CONTROL.sub("", str(text))


def warn(text: Any) -> None:
    """A line to standard error (a warning beside a command's output), controls removed."""
    import sys

    print(plain(text), file=sys.stderr)


def term(text: Any) -> str:
    """Text safe in rich output (a table cell, a printed line): controls removed, rich markup
    such as [red] or [/] escaped so it shows as written."""
    from rich.markup import escape

    return escape(plain(text))


def md(text: Any) -> str:
    """Text safe in a markdown table cell: controls removed, markup escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", plain(text)).replace("\n", " ").replace("\r", " ")


def csv_cell(text: Any) -> str:
    """Text safe in a CSV cell opened by a spreadsheet: controls removed, and a leading =, +, -
    or @ quoted so it is never read as a formula (numbers keep their sign)."""
    out = plain(text).replace("\n", " ")
    if out[:1] in ("=", "+", "-", "@") and not re.fullmatch(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", out):
        return "'" + out
    return out


def _console_class() -> type:
    from rich.console import Console as Rich
    from rich.segment import Segment

    class Console(Rich):
        """pxq's console: whatever it prints, no text in it carries a terminal control sequence or
        control character (a student's output, a folder's name, a record's field); only rich's own
        styles and controls reach the terminal. Every pxq console is one of these."""

        def _render_buffer(self, buffer: Any) -> str:
            return super()._render_buffer(
                Segment(plain(text), style, control) if control is None and text else Segment(text, style, control)
                for text, style, control in buffer
            )

    return Console


def __getattr__(name: str) -> Any:
    """`Console` is made on first use: the modules run by a Python without rich (Extra-P's and
    OTF2's, pxq.analysis.exports.extrapfit and otf2trace) import this one too."""
    if name == "Console":
        globals()["Console"] = _console_class()
        return globals()["Console"]
    raise AttributeError(name)
