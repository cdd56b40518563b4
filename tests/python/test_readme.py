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


def test_every_link_of_the_readme_and_docs_leads_somewhere():
    broken = []
    for page in PAGES:
        text = page.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md":
                heads = [_anchor(ln) for ln in dest.read_text().splitlines() if ln.startswith("#")]
                if anchor not in heads:
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such section)")
    assert broken == []
