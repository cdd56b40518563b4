"""The README's examples are the program's: every `./pxq ...` line parses with the driver's
own parser, and every `pxq run` example resolves to a launch command (--dry-run)."""

import shlex

import pytest

from pxq import cli
from pxq.core import plugins
from pxq.core.paths import ROOT

WRAPPER_ONLY = {"demo", "test", "build", "setup"}  # handled by ./pxq itself (demo also by the driver)


def examples() -> list[str]:
    lines, inside = [], False
    for line in (ROOT / "README.md").read_text().splitlines():
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
