"""Experiments in a file (`pxq sweep --file`): the same sweep as the command line it stands for,
the file's identity in every record, and a malformed file refused with exit 2 naming its line."""

import json
from pathlib import Path

import pytest

from pxq import cli
from pxq.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]

TINY = """\
# the ring, tiny, on one rank: flat and tiled
name = "tiny-ring"
app = "ring"
layouts = ["1x1"]
modes = ["flat", "tiled"]
tiles = ["16K"]
repeat = 1
app_args = ["--block", "64K", "--iterations", "1"]

[launch]
timeout = 120
"""


def _facts(path: Path) -> list[tuple]:
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(
        (
            r["app"],
            r["status"],
            r["layout"]["ranks"],
            r["variant"]["mode"],
            r["variant"]["tile_bytes"],
            r["size"]["block_bytes"],
            r["size"]["iterations"],
        )
        for r in recs
    )


def test_a_file_runs_the_sweep_its_command_line_runs_and_names_itself(tmp_path):
    exp = tmp_path / "tiny.toml"
    exp.write_text(TINY)
    by_file, by_argv = tmp_path / "file.jsonl", tmp_path / "argv.jsonl"
    assert cli.main(["sweep", "--file", str(exp), "--results", str(by_file)]) == 0
    argv = ["sweep", "ring", "--layouts", "1x1", "--modes", "flat,tiled", "--tiles", "16K", "--repeat", "1"]
    assert (
        cli.main([*argv, "--timeout", "120", "--results", str(by_argv), "--", "--block", "64K", "--iterations", "1"])
        == 0
    )
    assert _facts(by_file) == _facts(by_argv) and len(_facts(by_file)) == 2
    for line in by_file.read_text().splitlines():
        got = json.loads(line)["driver"]["experiment"]
        assert got["name"] == "tiny-ring" and got["text"] == TINY and len(got["sha256"]) == 64
    assert all("experiment" not in json.loads(line)["driver"] for line in by_argv.read_text().splitlines())
    # --resume from the file: nothing left to run, nothing appended.
    assert cli.main(["sweep", "--file", str(exp), "--results", str(by_file), "--resume"]) == 0
    assert len(by_file.read_text().splitlines()) == 2


@pytest.mark.parametrize(
    "change, needle",
    [
        (('modes = ["flat", "tiled"]', 'modes = "flat"'), ":5: modes: 'flat' is not of type 'array'"),
        (("repeat = 1", "repeat = 0"), ":7: repeat: 0 is less than the minimum of 1"),
        (("timeout = 120", "timout = 120"), ":11: Additional properties are not allowed ('timout' was unexpected)"),
        (('app = "ring"', "app = ring"), "not valid TOML"),
        (('app = "ring"\n', ""), "'app' is a required property"),
    ],
)
def test_a_malformed_file_exits_2_naming_its_line(tmp_path, capsys, change, needle):
    exp = tmp_path / "bad.toml"
    exp.write_text(TINY.replace(*change))
    results = tmp_path / "r.jsonl"
    assert cli.main(["sweep", "--file", str(exp), "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err, err
    assert not results.exists()


def test_an_option_in_the_file_and_on_the_command_line_is_refused(tmp_path, capsys):
    exp = tmp_path / "tiny.toml"
    exp.write_text(TINY)
    assert cli.main(["sweep", "--file", str(exp), "--repeat", "5"]) == 2
    assert "--repeat is given on the command line and in" in capsys.readouterr().err
    assert cli.main(["sweep", "ring", "--file", str(exp)]) == 2
    assert "not both" in capsys.readouterr().err
    assert cli.main(["sweep", "--file", str(tmp_path / "none.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert cli.main(["sweep"]) == 2
    assert "--file EXPERIMENT.toml" in capsys.readouterr().err


def test_the_shipped_experiments_are_valid_and_stand_for_the_readme_sweeps():
    from pxq.experiments import expfile

    files = sorted((ROOT / "experiments").glob("*.toml"))
    assert files
    readme = (ROOT / "README.md").read_text() + (ROOT / "docs" / "USAGE.md").read_text()
    for f in files:
        data, _ = expfile.load(f)
        line = f"./pxq sweep --file experiments/{f.name}"
        assert line in readme or f.name.startswith("roofline-"), f"{f.name} is not shown in the README or USAGE"
        assert data["app"] in ("ring", "cg", "mg", "ft", "is")


def test_a_submitted_job_carries_the_experiment_s_identity_into_its_records(tmp_path, capsys):
    """`--file ... --submit`: the job's own `pxq sweep` line names the experiment, so its records
    say which experiment they belong to exactly as a run from the file does."""
    import shlex

    exp = tmp_path / "tiny.toml"
    exp.write_text(TINY + '\n[batch]\ntime = "0:10:00"\n')
    results = tmp_path / "r" / "ring.jsonl"
    results.parent.mkdir()
    assert cli.main(["sweep", "--file", str(exp), "--submit", "--dry-run", "--results", str(results)]) == 0
    script = capsys.readouterr().out
    line = next(ln for ln in script.splitlines() if ln.startswith("exec "))
    argv = shlex.split(line)[4:]  # after `exec PYTHON -m pxq`
    assert argv[0] == "sweep" and "--experiment-identity" in argv
    (tmp_path / "r" / "ring.jobs").mkdir()  # --submit makes it (the dry run does not)
    assert cli.main(argv) == 0
    recs = [json.loads(ln) for ln in (tmp_path / "r" / "ring.jobs" / "1x1.jsonl").read_text().splitlines()]
    assert len(recs) == 2
    for rec in recs:
        got = rec["driver"]["experiment"]
        assert got["name"] == "tiny-ring" and got["file"] == str(exp) and got["text"] == exp.read_text()
    bad = [*argv[: argv.index("--experiment-identity") + 1], '{"name": "x"}']
    assert cli.main(bad) == 2
    assert "exactly name, file, sha256, text" in capsys.readouterr().err
    both = ["sweep", "--file", str(exp), "--experiment-identity", "{}", "--results", str(results)]
    assert cli.main(both) == 2


def test_a_file_s_results_go_to_the_user_s_results_folder_and_the_command_line_redirects_them(
    tmp_path, monkeypatch, capsys
):
    """A shipped experiment writes where the user's results go: a relative `results` is a file in
    PXQ_RESULTS_DIR (a leading results/ being that folder), --results redirects it (not a
    conflict), an absolute path stays."""
    from pxq.experiments import expfile

    monkeypatch.setenv("PXQ_RESULTS_DIR", str(tmp_path / "mine"))
    assert expfile.file_results("roofline-cg.jsonl") == tmp_path / "mine" / "roofline-cg.jsonl"
    assert expfile.file_results("results/sub/x.jsonl") == tmp_path / "mine" / "sub" / "x.jsonl"
    assert (tmp_path / "mine" / "sub").is_dir()
    assert expfile.file_results(str(tmp_path / "abs.jsonl")) == tmp_path / "abs.jsonl"
    with pytest.raises(InputError, match="names a folder"):
        expfile.file_results("results/")
    shipped = ROOT / "experiments" / "roofline-ring.toml"
    args = cli.parser().parse_args(["sweep", "--file", str(shipped)])
    expfile.apply(args, [], cli.parser().parse_args(["sweep"]))
    assert args.results == tmp_path / "mine" / "roofline-ring.jsonl"
    args = cli.parser().parse_args(["sweep", "--file", str(shipped), "--results", str(tmp_path / "r.jsonl")])
    expfile.apply(args, [], cli.parser().parse_args(["sweep"]))
    assert args.results == tmp_path / "r.jsonl"
