"""The record fuzzer: real records of every kind (tests/python/data), each mutated field by field
(a wrong type, zero, a negative, a huge or tiny number, an empty or a deep value, an escape
sequence, a missing key), read by every command that reads records. A reader may refuse a
record (exit 2, naming it) or report it; it may never crash (a traceback, any other exception),
hang or print a terminal escape sequence it read.

    python tests/faults/fuzz_records.py [SECONDS] [SEED]     # a long run, as CI's (default 600 s)

test_record_fuzz.py runs a short seeded run of the same with hypothesis."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "drivers" / "pxq"))
DATA = ROOT / "tests" / "python" / "data"

from pxq import cli  # noqa: E402

# The values a field may be mutated to.
VALUES: list[Any] = [
    None,
    0,
    -1,
    1,
    0.0,
    -0.5,
    1e-300,
    1e300,
    2**63,
    -(2**63),
    10**9,
    1.5,
    True,
    "",
    "x",
    "1x2",
    "256K",
    "\x1b[2J\x1b[31mred",
    "[/red]",
    [],
    [1, 2],
    [[0, 1, 2]],
    ["a"],
    {},
    {"a": 1},
    [[[[[[[[[[1]]]]]]]]]],
]


def corpus() -> dict[str, list[dict[str, Any]]]:
    """Every record of the test data, by kind (a record without a kind is a run of schema 1)."""
    out: dict[str, list[dict[str, Any]]] = {}
    files = [DATA / "run-record.json", DATA / "bandwidth-record.json", DATA / "advice-record.jsonl"]
    files += sorted((DATA / "figures").glob("*.jsonl")) + sorted((DATA / "studies").glob("*.jsonl"))
    for path in files:
        texts = [path.read_text()] if path.suffix == ".json" else path.read_text().splitlines()
        for text in texts:
            if text.strip():
                rec = json.loads(text)
                out.setdefault(rec.get("kind", "run"), []).append(rec)
    return out


def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path to a value inside VALUE (keys and list indexes), the value's own first."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):
            yield from paths(v, (*prefix, i))


def mutate(rec: dict[str, Any], rng: random.Random, count: int) -> tuple[dict[str, Any], list[str]]:
    """REC with COUNT fields changed at random; what was changed."""
    out = copy.deepcopy(rec)
    done = []
    for _ in range(count):
        where = [p for p in paths(out) if p and p[0] not in ("kind", "schema")]
        if not where:
            break
        path = rng.choice(where)
        parent = out
        for k in path[:-1]:
            parent = parent[k]
        last = path[-1]
        if isinstance(parent, dict) and rng.random() < 0.15:
            del parent[last]
            done.append(f"del {'.'.join(map(str, path))}")
            continue
        value = copy.deepcopy(rng.choice(VALUES))
        parent[last] = value
        done.append(f"{'.'.join(map(str, path))}={json.dumps(value)[:40]}")
    return out, done


def readers(kind: str, path: Path, tmp: Path) -> list[list[str]]:
    """Every command that reads a records file of this kind."""
    f = str(path)
    out = [
        ["validate", f],
        ["report", f],
        ["report", f, "--format", "csv"],
        ["report", f, "--format", "json"],
        ["report", f, "--format", "markdown"],
        ["report", f, "--group-by", "context.host,layout.nodes"],
        ["compare", f, f],
        ["compare", f, f, "--format", "json"],
        ["repair", f],
    ]
    if kind == "run":
        out += [
            ["report", f, "--format", "caliper", "--out", str(tmp / "cali")],
            ["report", f, "--format", "extrap", "--out", str(tmp / "x.txt")],
            ["roofline", f, "--plot", str(tmp / "roof.png")],
            ["report", f, "--plot", str(tmp / "chart.png")],
        ]
    if kind == "profile":
        out += [
            ["msgdist", f, "--plot", str(tmp / "m.png")],
            ["msgdist", f, "--model", "4x2x2", "--plot", str(tmp / "m2.png")],
            ["placement", "suggest", f, "--model", "4x2x2", "--out", str(tmp / "pl")],
        ]
    return out


SLOW = 30.0  # seconds a reader may take over one mutated record


def read_with_every_reader(kind: str, recs: list[dict[str, Any]], tmp: Path) -> list[str]:
    """Runs every reader of KIND over RECS (written to a file in TMP); the crash signatures."""
    path = tmp / "fuzz.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    crashes = []
    for argv in readers(kind, path, tmp):
        out, err = io.StringIO(), io.StringIO()
        start = time.monotonic()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(argv)
        except SystemExit as e:  # argparse's own exit 2
            code = e.code if isinstance(e.code, int) else 2
        except Exception as e:  # noqa: BLE001 - that is what the fuzzer looks for
            frame = traceback.extract_tb(e.__traceback__)[-1]
            crashes.append(
                f"{' '.join(a for a in argv if not a.startswith(str(tmp)))}: {type(e).__name__} at "
                f"{Path(frame.filename).name}:{frame.lineno} ({str(e)[:80]})"
            )
            continue
        finally:
            path.write_text("".join(json.dumps(r) + "\n" for r in recs))  # repair may have moved it
        text = out.getvalue() + err.getvalue()
        if time.monotonic() - start > SLOW:
            crashes.append(f"{argv[0]}: over {SLOW:.0f} s on one record")
        if code not in (0, 1, 2, 3):
            crashes.append(f"{argv[0]}: exit {code}")
        if "Traceback" in text:
            crashes.append(f"{argv[0]}: a traceback printed")
        if "\x1b[2J" in text or "\x1b[31m" in text:
            crashes.append(f"{argv[0]}: a terminal escape from the record printed")
    return crashes


def run(seconds: float, seed: int, tmp: Path) -> dict[str, str]:
    """Mutates and reads for SECONDS; each distinct crash signature with the mutation that found it."""
    rng = random.Random(seed)
    seeds = corpus()
    found: dict[str, str] = {}
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        kind = rng.choice(sorted(seeds))
        rec, how = mutate(rng.choice(seeds[kind]), rng, rng.choice([1, 1, 2, 3]))
        for sig in read_with_every_reader(kind, [rec], tmp):
            found.setdefault(sig, f"{kind}: {'; '.join(how)}")
        n += 1
    found["(examples)"] = str(n)
    return found


if __name__ == "__main__":
    import tempfile

    import matplotlib

    matplotlib.use("Agg")
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as d:
        result = run(secs, seed, Path(d))
    examples = result.pop("(examples)")
    for sig, how in sorted(result.items()):
        print(f"CRASH {sig}\n    found by {how}")
    print(f"{len(result)} crash signature(s) in {examples} mutated records over {secs:.0f} s (seed {seed})")
    raise SystemExit(1 if result else 0)
