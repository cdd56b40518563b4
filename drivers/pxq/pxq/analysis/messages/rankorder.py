"""Rank orders in files: pxq's order file (with its prediction line), Open MPI's rankfile and
Slurm's host list, written whole, and read back strictly (`pxq run --rank-order`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pxq.analysis.messages.msgdist import Model
from pxq.analysis.messages.placement import places_of
from pxq.core import bounds, door, escape, outputs, records
from pxq.core.errors import InputError
from pxq.launch.hostfile import hostfile_hosts

PREDICTION_TAG = "# pxq-prediction "  # the order file's header line with the prediction (JSON)


def format_order(order: list[int], header: list[str], prediction: dict[str, Any] | None) -> str:
    lines = [f"# {h}" for h in header]
    if prediction is not None:
        lines.append(PREDICTION_TAG + outputs.dumps(outputs.finite(prediction), sort_keys=True))
    lines += [",".join(str(r) for r in order[i : i + 16]) for i in range(0, len(order), 16)]
    return "\n".join(lines) + "\n"


def parse_order(text: str, source: str) -> tuple[list[int], dict[str, Any] | None]:
    """A rank order file (ranks slot by slot, separated by commas or white space, ranges such
    as 0-7 allowed, # comments): the order, and the prediction its header carries, if any."""
    prediction = None
    ranks: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(PREDICTION_TAG):
            prediction = _prediction(line[len(PREDICTION_TAG) :], f"{source}:{number}")
            continue
        for word in re.split(r"[,\s]+", line.split("#", 1)[0].strip()):
            if not word:
                continue
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", word)
            if not m:
                raise InputError(
                    f"{source}:{number}: '{word}' is not a rank or a range such as 0-7: list the ranks slot by "
                    "slot, e.g. 0,4,1,5"
                )
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if hi < lo:
                raise InputError(f"{source}:{number}: range {word} runs backwards: write it as {hi}-{lo}")
            if hi >= bounds.MAX_RANKS or len(ranks) + hi - lo >= bounds.MAX_RANKS:
                raise InputError(
                    f"{source}:{number}: '{word}' goes past {bounds.MAX_RANKS} ranks, more than a run of pxq "
                    "has: list the ranks of the run, slot by slot"
                )
            ranks += range(lo, hi + 1)
    check_permutation(ranks, source)
    return ranks, prediction


_PREDICTION = {
    "type": "object",
    "properties": {
        "model": {"type": "string", "pattern": "^[0-9]+x[0-9]+(x[0-9]+)?$"},
        "objective": {"type": "string", "pattern": "^[a-z-]+$"},
        "ranks": {"type": "integer", "minimum": 1},
        "chosen": {"type": "string", "pattern": "^[a-z-]+$"},
        "channels": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
            },
        },
    },
}


def _prediction(text: str, where: str) -> dict[str, Any]:
    """The prediction line of an order file, read through the records' bounds and checked for
    the types `pxq placement suggest` writes."""
    import jsonschema

    value, why = records.parse_line(text.encode("utf-8", errors="replace"))
    if why is None:
        try:
            jsonschema.validate(value, _PREDICTION)
        except jsonschema.ValidationError as e:
            why = f"{'/'.join(map(str, e.absolute_path)) or 'the line'}: {e.message}"
    if why is not None:
        raise InputError(
            f"{where}: the prediction line is not one pxq writes "
            f"({escape.plain(why).replace('not a JSON record', 'not JSON')[:120]}): write the file "
            "again with pxq placement suggest, or delete the line"
        )
    return value


def check_permutation(order: list[int], source: str) -> None:
    n = len(order)
    if n == 0:
        raise InputError(f"{source}: no ranks in it: list the ranks slot by slot, e.g. 0,4,1,5")
    seen: set[int] = set()
    for r in order:
        if r >= n:
            raise InputError(
                f"{source}: rank {r} with only {n} ranks listed: the order must list every rank 0..{n - 1} once"
            )
        if r in seen:
            raise InputError(f"{source}: rank {r} is listed twice: the order must list every rank 0..{n - 1} once")
        seen.add(r)


def read_order(path: Path) -> tuple[list[int], dict[str, Any] | None]:
    path = Path(path)
    try:
        text = door.text(path, "--rank-order", "give a text file of ranks", door.DOCUMENT)
    except FileNotFoundError:
        raise InputError(f"--rank-order {path}: no such file; write one with pxq placement suggest PROFILE") from None
    return parse_order(text, str(path))


def hosts_of(spec: str | None, nodes: int) -> list[str]:
    """Host names for the rankfile and Slurm's host list: from a comma list or a hostfile
    (first word of each line), else node0, node1, ... to be replaced."""
    if spec is None:
        return [f"node{i}" for i in range(nodes)]

    if Path(spec).is_file():
        names = hostfile_hosts(Path(spec))
    else:
        names = [h.strip() for h in spec.split(",") if h.strip()]
    if len(names) < nodes:
        raise InputError(f"--hosts {spec}: {len(names)} host(s) for {nodes} nodes: give one host per node")
    return names[:nodes]


def rankfile_text(model: Model, order: list[int], hosts: list[str]) -> str:
    """An Open MPI rankfile: every rank on its node's host, socket and core (socket:core)."""
    per_node = model.sockets * model.cores
    lines = {}
    for slot, rank in enumerate(order):
        node, local = divmod(slot, per_node)
        lines[rank] = f"rank {rank}={hosts[node]} slot={local // model.cores}:{local % model.cores}"
    return "".join(lines[r] + "\n" for r in sorted(lines))


def slurm_hosts_text(model: Model, order: list[int], hosts: list[str]) -> str:
    """Slurm's arbitrary distribution (SLURM_HOSTFILE): line i is the host of task i."""
    places = places_of(model, order)
    return "".join(hosts[node] + "\n" for node, _ in places)


OUTPUT_KINDS = {"order": "order", "rankfile": "rankfile", "slurm-hosts": "hosts"}  # what pxq.core.outputs checks
OUTPUTS = {
    "order": "ranks slot by slot: pxq run --rank-order FILE, or Cray MPICH's MPICH_RANK_ORDER",
    "rankfile": "Open MPI: mpirun --rankfile FILE",
    "slurm-hosts": "Slurm: SLURM_HOSTFILE=FILE srun --distribution=arbitrary",
}


def output_paths(prefix: Path) -> dict[str, Path]:
    return {kind: prefix.with_name(f"{prefix.name}.{kind}") for kind in OUTPUTS}


def check_prefix(prefix: Path) -> None:
    """The output folder exists and takes files, before any work is done."""
    import os

    parent = prefix.parent if str(prefix.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"--out {prefix}: folder '{parent}' does not exist: create it or give another --out")
    if not os.access(parent, os.W_OK):
        raise InputError(f"--out {prefix}: folder '{parent}' is not writable: give another --out")
    for kind, path in output_paths(prefix).items():
        outputs.check(path, OUTPUT_KINDS[kind], "--out")


def write_files(prefix: Path, files: dict[str, str]) -> None:
    """Each file whole or not at all."""
    try:
        for kind, path in output_paths(prefix).items():
            outputs.write(path, files[kind], OUTPUT_KINDS[kind], "--out")
    except OSError as e:
        raise InputError(f"cannot write {prefix}.*: {e.strerror}: give another --out") from None
