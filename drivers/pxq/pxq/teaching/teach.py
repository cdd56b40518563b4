"""`pxq lab teach N`: the teacher's folder for one lab, rendered from docs/teaching: the guide
with its rubric for the written answers (guide.html) and a short slide deck (slides.html, one
slide a screen and a page: a browser prints it to PDF). Markdown is rendered by markdown-it
(the CommonMark renderer rich already brings); each page is self-contained."""

from __future__ import annotations

import html
from pathlib import Path

from pxq.core import outputs, paths, plugins
from pxq.core.errors import InputError

DOCS = paths.ROOT / "docs" / "teaching"

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #222; }
main { max-width: 60em; margin: 2em auto; padding: 0 1.5em; line-height: 1.45; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: .3em .6em; vertical-align: top; }
code { background: #f3f3f3; padding: 0 .2em; } pre { background: #f3f3f3; padding: .6em; overflow-x: auto; }
section.slide { box-sizing: border-box; min-height: 100vh; padding: 6vh 8vw; border-bottom: 1px solid #ddd;
  font-size: 1.6em; page-break-after: always; break-after: page; }
section.slide h1 { font-size: 2em; margin-top: 20vh; } section.slide h2 { color: #1f77b4; }
@media print { section.slide { min-height: auto; height: 100vh; border: none; } }
"""


def sources(mod: plugins.Lab) -> tuple[Path, Path]:
    """The lab's guide and its slides, in docs/teaching."""
    return DOCS / f"{mod.folder}.md", DOCS / "slides" / f"{mod.folder}.md"


def _render(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def slides(text: str) -> list[str]:
    """The deck's slides: the markdown between lines of three dashes."""
    parts: list[str] = []
    cur: list[str] = []
    for line in text.splitlines():
        if line.strip() == "---":
            parts.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    parts.append("\n".join(cur))
    return [p.strip() for p in parts if p.strip()]


def write(mod: plugins.Lab, out: Path | None) -> list[Path]:
    """guide.html and slides.html in OUT (default results/teacher/NN-name): the paths written."""
    guide, deck = sources(mod)
    for src in (guide, deck):
        if not src.is_file():
            raise InputError(f"{src} is missing: pxq's checkout is incomplete (git checkout -- docs/teaching)")
    folder = out or paths.results_dir() / "teacher" / mod.folder
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {folder} is a file: give a folder")
    folder.mkdir(parents=True, exist_ok=True)
    title = f"Lab {mod.number}: {mod.title}"
    guide_html = page(f"{title}: teacher's guide", f"<main>\n{_render(guide.read_text(encoding='utf-8'))}</main>")
    sections = "\n".join(f'<section class="slide">\n{_render(s)}</section>' for s in slides(deck.read_text("utf-8")))
    written = []
    for name, text in (("guide.html", guide_html), ("slides.html", page(title, sections))):
        written.append(outputs.write(folder / name, text, "html", "--out"))
    return written
