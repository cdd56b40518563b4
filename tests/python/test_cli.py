"""Bad input through the `pxq` command line: exit 2, a message naming the fix, no record."""

import pytest

from pxq import cli
from pxq.core import registry
from pxq.machine import envinfo


def run_cli(argv, capsys):
    code = cli.main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("layout", ["0x2", "2x", "axb", "1x2x0"])
def test_bad_layouts(fake_build, capsys, layout):
    code, err = run_cli(["run", "ring", "--layout", layout], capsys)
    assert code == 2 and "invalid layout" in err
    assert not (fake_build / "results" / "ring.jsonl").exists()


@pytest.mark.parametrize("tile", ["0", "-1", "12Q"])
def test_bad_tiles(fake_build, capsys, tile):
    code, err = run_cli(["run", "ring", "--layout", "1x1", "--tile", tile], capsys)
    assert code == 2 and "tile" in err


def test_oversubscription_needs_the_flag(fake_build, capsys, monkeypatch):
    monkeypatch.setattr(envinfo, "cores", lambda: 2)
    code, err = run_cli(["run", "ring", "--layout", "1x4"], capsys)
    assert code == 2 and "--oversubscribe" in err


def test_unknown_mode_and_backend_are_rejected_by_the_parser(fake_build, capsys):
    for argv in (["run", "ring", "--mode", "fast"], ["run", "ring", "--backend", "cuda"]):
        assert cli.main(argv) == 2  # the parser's refusal: exit 2, its message printed
        assert "invalid choice" in capsys.readouterr().err
    code, err = run_cli(["sweep", "ring", "--modes", "flat,fast"], capsys)
    assert code == 2 and "unknown mode 'fast'" in err


def test_kokkos_in_a_build_without_kokkos(fake_build, capsys, monkeypatch):
    monkeypatch.setattr(registry, "available_backends", lambda: ("openmp",))
    code, err = run_cli(["run", "ring", "--backend", "kokkos"], capsys)
    assert code == 2 and "no Kokkos" in err


def test_mpirun_missing(fake_build, capsys, monkeypatch):
    monkeypatch.delenv("PXQ_MPIRUN", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    code, err = run_cli(["run", "ring", "--layout", "1x1"], capsys)
    assert code == 2 and "mpirun not found" in err


def test_unwritable_results(fake_build, capsys):
    code, err = run_cli(["run", "ring", "--results", str(fake_build / "no" / "r.jsonl")], capsys)
    assert code == 2 and "does not exist" in err


def test_unknown_app_and_missing_build(fake_build, capsys):
    code, err = run_cli(["run", "lu"], capsys)
    assert code == 2 and "unknown app 'lu'" in err
    (fake_build / "build" / "bin" / "pxq-ring").unlink()
    code, err = run_cli(["run", "ring"], capsys)
    assert code == 2 and "./pxq build" in err


def test_dry_run_prints_the_command_and_runs_nothing(fake_build, capsys, monkeypatch):
    monkeypatch.delenv("PXQ_MPIRUN", raising=False)
    code = cli.main(
        ["run", "ring", "--layout", "2x1", "--mode", "tiled", "--tile", "1M", "--dry-run", "--", "--block", "8M"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "--host n0:1,n1:1" in out and "--tile 1M" in out and "--block 8M" in out
    assert "rank 1=n1 slot=1" in out
    assert not (fake_build / "results" / "ring.jsonl").exists()


def test_layouts_for_cores():
    assert [str(x) for x in envinfo.layouts_for(2)] == ["1x1x2", "1x2", "2x1"]
    assert all(x.cores == 4 for x in envinfo.layouts_for(4))


def test_problem_class_is_checked_per_app(fake_build, capsys):
    code, err = run_cli(["run", "cg", "--class", "Q"], capsys)
    assert code == 2 and "unknown class 'Q' for cg: use S, W, A, B, C" in err
    code, err = run_cli(["sweep", "ring", "--class", "A"], capsys)
    assert code == 2 and "ring has no problem classes" in err
    assert not (fake_build / "results" / "cg.jsonl").exists()
    code, err = run_cli(["sweep", "mg", "--class", "D"], capsys)
    assert code == 2 and "unknown class 'D' for mg: use S, W, A, B, C" in err
    assert not (fake_build / "results" / "mg.jsonl").exists()
    code, err = run_cli(["run", "ft", "--class", "E"], capsys)
    assert code == 2 and "unknown class 'E' for ft: use S, W, A, B, C" in err


def test_class_reaches_the_app_command_line(fake_build, capsys):
    code = cli.main(["run", "cg", "--class", "a", "--layout", "1x2", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert "pxq-cg " in out and out.rstrip().endswith("--class A")
    code = cli.main(["run", "mg", "--class", "w", "--layout", "1x1x2", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert "pxq-mg " in out and out.rstrip().endswith("--class W")
    code = cli.main(["run", "ft", "--class", "b", "--layout", "2x1", "--dry-run", "--", "--decomp", "2d"])
    out = capsys.readouterr().out
    assert code == 0
    assert "pxq-ft " in out and out.rstrip().endswith("--class B --decomp 2d")


def test_dry_run_leaves_the_files_its_command_needs(fake_build, capsys):
    results = fake_build / "results" / "ring.jsonl"
    results.parent.mkdir(exist_ok=True)
    code = cli.main(["run", "ring", "--layout", "2x1", "--dry-run", "--results", str(results)])
    out = capsys.readouterr().out
    rankfile = results.parent / "ring.dry-run" / "rankfile"
    assert code == 0 and rankfile.is_file() and rankfile.read_text().startswith("rank 0=")
    assert f"--rankfile {rankfile}" in out.splitlines()[-1]


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as done:
        cli.parser().parse_args([*argv, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_help_is_written_per_command(capsys):
    """Help that fits where it stands: a probe's own results file and no --class; a study's class
    default and every NAS proxy from the registry; run's default layout; sweep's lists explained."""
    probe = _help(["probe", "pingpong"], capsys)
    assert "default results/probe-pingpong.jsonl" in probe and "--class" not in probe.split("options:")[1]
    assert "results/probe-allreduce.jsonl" in _help(["probe", "allreduce"], capsys)
    sharing = _help(["study", "sharing"], capsys)
    assert f"NAS problem class for {', '.join(registry.nas_apps())}" in sharing
    assert "(default A quick, B full)" in sharing and "results/study-sharing.jsonl" in sharing
    assert "--class" not in _help(["study", "rankpairs"], capsys).split("options:")[1]
    assert "(default 1x1)" in _help(["run", "ring"], capsys)
    sweep = _help(["sweep", "ring"], capsys)
    for words in ("layouts PxQ[xT], comma-separated", "variants, comma-separated", "kernel backends"):
        assert words in sweep


def test_class_on_a_study_without_classes_is_refused(fake_build, capsys):
    code, err = run_cli(["study", "rankpairs", "--class", "A"], capsys)
    assert code == 2 and "no NAS proxy with a problem class" in err


def _numeric_options(parser, path=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _numeric_options(sub, (*path, name))
        elif getattr(action.type, "__name__", "") in ("int", "float") and action.option_strings:
            yield path, action.option_strings[-1], action


def test_every_numeric_option_of_every_command_is_bounded_at_the_door(capsys):
    """nan, infinities, 1e300 and -1e300 are refused by every integer and real option of every
    command (exit 2, the option and its range named), before anything runs; so is a value just
    past each end of its range, and 0 wherever 0 is outside it (0 never means "all")."""
    from pxq.core import bounds

    parser = cli.parser()
    found = list(_numeric_options(parser))
    assert len(found) > 60
    for path, flag, action in found:
        limits = bounds.OPTIONS.get(f"{' '.join(path)} {flag}") or bounds.OPTIONS[flag]
        step = 1 if action.type.__name__ == "int" else 1e-9
        bad = ["nan", "inf", "-inf", "1e300", "-1e300", str(limits.high + step), str(limits.low - step)]
        if not limits.holds(0):
            bad.append("0")
        for text in bad:
            if action.type.__name__ == "int" and text in ("nan", "inf", "-inf", "1e300", "-1e300"):
                text = text.replace("nan", "1" + "0" * 30).replace("inf", "9" * 40).replace("1e300", "1" + "0" * 300)
            with pytest.raises(SystemExit) as out:
                given = f"{flag}={text}" if flag.startswith("--") else f"{flag}{text}"  # a value may start with -
                parser.parse_args([*path, *_positionals(path), given])
            assert out.value.code == 2, (path, flag, text)
            err = capsys.readouterr().err
            assert flag in err and ("use " in err or "not " in err), err


def _positionals(path):
    """What a command needs before its options parse (an app, a file)."""
    needs = {("run",): ["ring"], ("compare",): ["a", "b"], ("study", "contention"): ["cg"], ("study", "sharing"): []}
    if path in needs:
        return needs[path]
    if path[:1] == ("study",) and path[1:] and path[1] in ("counters", "scalability", "allocation", "placement"):
        return ["cg"]
    if path[:1] in (("lab",),) and path[1:] in (("check",), ("grade",)):
        return ["4"] + (["d"] if path[1] == "grade" else [])
    if path == ("placement", "suggest"):
        return ["p.jsonl"]
    return []


def test_the_console_never_passes_a_control_sequence_it_was_given():
    """Every pxq console strips terminal control sequences from what it prints (a student's
    output, a folder's name, a record's field), in plain lines, tables and markup=False text,
    while its own colours still reach a terminal."""
    import io

    from rich.table import Table

    from pxq.core.escape import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120)
    hostile = "w\x1b[2J\x1b]0;title\x07\x1b[31mX\rY\x9b"
    console.print(f"[red]{hostile}[/red]", highlight=False)
    console.print(hostile, markup=False)
    t = Table()
    t.add_column(hostile)
    t.add_row(hostile)
    console.print(t)
    out = buf.getvalue()
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out and "\r" not in out
    assert "\x1b[31m" in out  # rich's own red, for the [red] markup
    import re

    sequences = re.findall(r"\x1b\[[0-9;?]*[A-Za-z]", out)
    assert sequences and all(q.endswith("m") for q in sequences), sequences  # colours only
    assert out.count("\x1b") == len(sequences)  # and no escape outside them
    assert "title" in out and "w" in out


def test_an_apps_option_before_the_double_dash_gets_the_fix(capsys):
    from pxq import cli

    assert cli.main(["run", "ring", "--repeat", "3", "--iterations", "3"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --iterations 3" in err
    assert "go after `--`: pxq run ring --repeat 3 -- --iterations 3" in err
    assert cli.main(["report", "--nonsense"]) == 2  # no app: no such hint
    assert "go after" not in capsys.readouterr().err


def test_env_json_is_one_document_with_the_machine_and_its_layouts(capsys):
    import json

    from pxq import cli

    assert cli.main(["env", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["usable_cores"] >= 1 and doc["layouts"] and "caches" in doc["machine"]
    assert {b["name"] for b in doc["backends"]} >= {"openmp"}


def test_every_command_s_help_ends_with_an_example_that_parses(capsys):
    """Each command's --help shows a command line that uses it, and that line is one pxq accepts."""
    import shlex

    import pytest

    from pxq import cli
    from pxq.core import plugins

    for command in plugins.commands():
        assert command.example.startswith(("./pxq ", "sudo ./pxq ")), command.name
        with pytest.raises(SystemExit):
            cli.parser().parse_args([command.name, "--help"])
        assert command.example.split(" && ")[0] in " ".join(capsys.readouterr().out.split()), command.name
        line = command.example.split(" && ")[0].split(" > ")[0]
        argv = shlex.split(line)[2 if line.startswith("sudo") else 1 :]
        own, _ = cli._split_app_args(argv)
        args, unknown = cli.parser().parse_known_args(own)
        assert args.command == command.name and unknown == [], (command.name, unknown)


def _every_option(ap, name="pxq"):
    import argparse

    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _every_option(sub, f"{name} {sub_name}")
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield name, ap, action


def test_every_option_has_help_and_states_its_default(capsys):
    """No blank option on any help page, every option with a default says it (`--repeat`,
    `--timeout`, `--tiles`, ...) and every study's description says what it runs, not a pointer."""
    import argparse

    from pxq import cli

    ap = cli.parser()
    blank, silent = [], []
    for name, _, action in _every_option(ap):
        text = action.help or ""
        if not text.strip():
            blank.append((name, action.option_strings[0]))
        unset = action.default is None or isinstance(action.default, bool) or action.default in ("", [])
        if not unset and action.default is not argparse.SUPPRESS and "default" not in text:
            silent.append((name, action.option_strings[0]))
    assert blank == [] and silent == []
    with pytest.raises(SystemExit):
        ap.parse_args(["sweep", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "interleaved repeats of every configuration (a fixed count) (default 3)" in out
    assert "(default 600)" in out  # --timeout
    with pytest.raises(SystemExit):
        ap.parse_args(["study", "tiling", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "The paper:" not in out and "beside Chai et al.'s time reductions" in out
