"""The README's and docs/' examples are the program's: every `./pxq ...` line parses with the
driver's own parser, and every `pxq run` example resolves to a launch command (--dry-run). The
README is a front page: short, with a table of contents, and every link of it and of docs/ leads
somewhere."""

import re
import shlex

import pytest

from pxq import cli
from pxq.core import plugins
from pxq.core.paths import ROOT

WRAPPER_ONLY = {"demo", "test", "build", "setup"}  # handled by ./pxq itself (demo also by the driver)


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples() -> list[str]:
    lines = []
    for page in PAGES:
        inside = False
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                inside = not inside
            elif inside and line.startswith("./pxq "):
                lines.append(line)
    return lines


EXAMPLES = examples()


def test_the_readme_has_examples_of_every_command():
    commands = {shlex.split(line, comments=True)[1] for line in EXAMPLES}

    assert {c.name for c in plugins.commands()} - commands == set()


@pytest.mark.parametrize("line", EXAMPLES)
def test_each_example_parses_and_runs_dry(line, fake_build, monkeypatch, tmp_path):
    words = shlex.split(line, comments=True)[1:]
    if words[0] in WRAPPER_ONLY - {"demo"}:
        return
    own = words[: words.index("--")] if "--" in words else words
    args = cli.parser().parse_args(own)  # an unknown option or command exits 2 here
    assert args.command == words[0]
    if words[0] == "run":
        monkeypatch.chdir(tmp_path)
        if args.rank_order is not None:  # the file placement suggest writes: here block's order
            from pxq.core.layout import parse_layout

            args.rank_order.parent.mkdir(parents=True, exist_ok=True)
            ranks = parse_layout(args.layout).ranks
            args.rank_order.write_text(",".join(str(r) for r in range(ranks)) + "\n")
        if getattr(args, "hostfile", None):  # the README writes it just before (printf ... > FILE)
            from pathlib import Path

            Path(args.hostfile).parent.mkdir(parents=True, exist_ok=True)
            Path(args.hostfile).write_text("localhost slots=2\n")
        dry = own + ["--dry-run"] + (words[words.index("--") :] if "--" in words else [])
        assert cli.main(dry) == 0, line


def _anchor(header: str) -> str:
    """GitHub's anchor of a markdown header."""
    text = header.lstrip("#").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def test_the_readme_is_a_front_page_with_contents():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    sections = [ln for ln in text.splitlines() if ln.startswith("## ")]
    contents = text.split("## Contents", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"\]\(#([^)]+)\)", contents)
    assert listed == [_anchor(s) for s in sections if s != "## Contents"]
    for command in ("./pxq demo", "./pxq test"):  # the two set-up commands stay on the front page
        assert command in text


MARKDOWN = [*PAGES, *sorted((ROOT / "labs").rglob("*.md"))]


def _parse(page):
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").parse(page.read_text())


def _headings(tokens) -> list[str]:
    """The anchors of a page's headings as markdown reads them (a `# comment` in a code block is
    not one)."""
    return [_anchor(tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]


def _links(tokens) -> list[str]:
    out = []
    for t in tokens:
        for child in t.children or []:
            target = child.attrs.get("href") or child.attrs.get("src")
            if target:
                out.append(str(target))
    return out


def _unclosed_fences(page, tokens, root=ROOT) -> list[str]:
    """Code fences the page never closes: markdown runs them to the end of the page and swallows
    every section after them."""
    lines = page.read_text().splitlines()
    out = []
    for t in tokens:
        if t.type != "fence":
            continue
        start, end = t.map
        last = lines[end - 1].strip() if end - 1 > start else ""
        if not (set(last) == {t.markup[0]} and len(last) >= len(t.markup)):
            out.append(f"{page.relative_to(root)}:{start + 1}: a code fence opened here is never closed")
        # A closing fence with words after it does not close: the fence runs on to the next
        # bare one, and the fences between open inside it.
        inner = [i for i in range(start + 1, end - 1) if lines[i].lstrip().startswith(t.markup)]
        if inner:
            out.append(
                f"{page.relative_to(root)}:{inner[0] + 1}: a fence marker inside the code fence opened at line "
                f"{start + 1} (a closing fence takes nothing after it)"
            )
    return out


def test_markdown_lint_flags_an_unclosed_fence_and_a_link_to_a_missing_section(tmp_path):
    """The lint below can fail: a fence left open and a link to a heading that exists only inside
    a code block are both caught."""
    page = tmp_path / "p.md"
    page.write_text("# Top\n\n[x](#usage)\n\n```sh\n# usage\n./pxq demo\n\n## Later\n")
    tokens = _parse(page)
    assert "usage" not in _headings(tokens) and "top" in _headings(tokens)
    assert "#usage" in _links(tokens)
    (fault,) = _unclosed_fences(page, tokens, root=tmp_path)
    assert "never closed" in fault
    page.write_text("# Top\n\n```sh\n./pxq demo\n``` Then:\n\n## Later\n\n```sh\nls\n```\n")
    (fault,) = _unclosed_fences(page, _parse(page), root=tmp_path)
    assert "p.md:5: a fence marker inside the code fence opened at line 3" in fault
    page.write_text("# Top\n\n```sh\n./pxq demo\n```\n\n## Later\n")
    assert _unclosed_fences(page, _parse(page), root=tmp_path) == []


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_pages_close_their_fences_and_every_link_leads_somewhere(page):
    """A Markdown lint over the README, docs/ and labs/: fences closed, every relative link to a
    file that exists and every anchor to a heading of its page (read as markdown, not as lines)."""
    tokens = _parse(page)
    broken = _unclosed_fences(page, tokens)
    for target in _links(tokens):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{page.relative_to(ROOT)}: {target}")
        elif anchor and dest.suffix == ".md":
            if anchor not in _headings(_parse(dest)):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such section)")
    assert broken == []
