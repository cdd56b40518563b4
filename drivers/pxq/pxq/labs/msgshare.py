"""Lab 2, message distribution: the student's 2-D stencil on 16 ranks under the message profiler,
classified on the paper's 4 nodes x 2 chips x 2 cores with block allocation, beside the
row-major decomposition; and pxq's CG the same way, beside the published table."""

from __future__ import annotations

from rich.table import Table

from pxq.analysis.messages import msgdist
from pxq.analysis.verdicts import findings
from pxq.core import paths, plugins, procs
from pxq.teaching import harness as labs

RANKS, MODEL = 16, "4x2x2"


def shares(rec: dict, model: msgdist.Model, alloc: str) -> dict[str, float]:
    """Point-to-point messages per channel (self left out), as fractions."""
    t = msgdist.tally(rec, msgdist.place(model, rec["ranks"], alloc), "p2p")
    count = {c: sum(r[c] for r in t.count) for c in msgdist.CHANNELS}
    total = sum(count.values())
    return {c: (count[c] / total if total else 0.0) for c in msgdist.CHANNELS}


def neighbour_shares(cells: list[list[int]], q: int, cyclic: bool = False) -> float:
    """The share of a 5-point stencil's halo messages between ranks of one node: q ranks a node,
    in block order (ranks 0..q-1 on the first node) or cyclic (q nodes, a rank on rank mod q)."""
    where = {(r, c): rank for rank, (r, c) in enumerate(cells)}

    def node(rank: int) -> int:
        return rank % q if cyclic else rank // q

    same = total = 0
    for rank, (r, c) in enumerate(cells):
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            peer = where.get((r + dr, c + dc))
            if peer is not None:
                total += 1
                same += node(peer) == node(rank)
    return same / total if total else 0.0


def best_blocks(rows: int, cols: int, q: int) -> tuple[float, str]:
    """The largest share of halo messages on a node that a decomposition of the rows x cols grid
    into nodes of q ranks reaches with rectangular blocks of a x b cells per node (a x b = q, the
    blocks tiling the grid; row-major strips among them), and that block's shape. For q cells a
    node, the squarest block keeps the most neighbours together."""
    best, shape = 0.0, f"1 x {q}"
    for a in range(1, q + 1):
        b = q // a
        if a * b != q or rows % a or cols % b:
            continue
        cells = [
            [br * a + i, bc * b + j]
            for br in range(rows // a)
            for bc in range(cols // b)
            for i in range(a)
            for j in range(b)
        ]
        share = neighbour_shares(cells, q)
        if share > best + 1e-12:
            best, shape = share, f"{a} x {b}"
    return best, shape


def other_layouts(result: dict) -> tuple[str, str | None]:
    """cell_of() at the other grids and node sizes the harness asked it for (never run): a
    problem (exit 1) where two ranks share a cell or one falls outside the grid, else the first
    layout whose share of on-node halo messages falls short of what the grid allows (None when
    every one reaches it)."""
    for other in result.get("other_layouts") or []:
        (rows, cols), q, cells = other["grid"], other["ranks_per_node"], other["cells"]
        where = f"for the {rows} x {cols} grid with {q} ranks a node"
        seen: dict[tuple[int, int], int] = {}
        for rank, (r, c) in enumerate(cells):
            if not (0 <= r < rows and 0 <= c < cols):
                return f"{where}, cell_of() gives rank {rank} the cell ({r}, {c}), outside the grid", None
            if (r, c) in seen:
                return f"{where}, cell_of() gives ranks {seen[(r, c)]} and {rank} the same cell ({r}, {c})", None
            seen[(r, c)] = rank
        share = neighbour_shares(cells, q)
        best, shape = best_blocks(rows, cols, q)
        if share < best - 1e-9:
            return "", (
                f"{where} cell_of() keeps {100 * share:.1f}% of halo messages on a node, where {shape} blocks keep "
                f"{100 * best:.1f}%: the decomposition must follow the grid and ranks_per_node, not this run's alone"
            )
    return "", None


def profile(ctx: labs.Context, program, args: list[str], name: str) -> tuple[dict, dict]:
    """One run under the message profiler: the program's result and its profile."""
    # A folder of the run's own: students checking at the same moment never share a profile.
    with procs.workdir("pxq-lab-profile-") as folder:
        path = folder / f"{name}-msgprof.jsonl"
        ctx.console.print(f"  profiling {name} on {RANKS} ranks")
        result = ctx.run(f"1x{RANKS}", args, profile=path, program=program, lab_result=program == ctx.program)
        return result, msgdist.load(path)


def measure(ctx: labs.Context) -> labs.Outcome:
    model = msgdist.parse_model(MODEL)
    q = model.sockets * model.cores
    result, rec = profile(ctx, ctx.program, ["--ranks-per-node", str(q)], "stencil")
    rows = {"stencil, your decomposition": rec}
    cg = paths.binary("cg")
    if cg.exists():
        rows["CG class S (pxq)"] = profile(ctx, cg, ["--class", "S", "--quiet"], "cg")[1]
    t = Table(title=f"point-to-point messages by channel, {RANKS} ranks on {MODEL} (nodes x chips x cores)")
    for col in ("program", "allocation", "same chip", "other chip", "other node"):
        t.add_column(col, justify="left" if col in ("program", "allocation") else "right")
    for name, r in rows.items():
        for alloc in msgdist.ALLOCATIONS:
            s = shares(r, model, alloc)
            t.add_row(name, alloc, *(f"{100 * s[c]:.1f}%" for c in msgdist.CHANNELS))
    paper = findings.section("message_distribution")["messages_percent"]["CG"]
    t.add_row("CG class B (published)", "block", *(f"{v}%" for v in paper))
    mine = shares(rec, model, "block")
    on_node = 1 - mine["inter_node"]
    rows_major = [[i // result["grid"][1], i % result["grid"][1]] for i in range(RANKS)]
    base = neighbour_shares(rows_major, q)
    if abs(neighbour_shares(result["cells"], q) - on_node) > 1e-9:
        raise labs.LabFailure("the profile and the stencil's own cells disagree: run the check again", 3)
    best, shape = best_blocks(result["grid"][0], result["grid"][1], q)
    wrong, short = other_layouts(result)
    if wrong:
        raise labs.LabFailure(f"{wrong}: cell_of() must give every rank its own cell of any grid", 1)
    # Done is the lesson: as many halo messages on a node as the grid allows (not "not row-major"),
    # at this run's grid and at the others cell_of() was asked for.
    starter = result["cells"] == rows_major or on_node < best - 1e-9 or short is not None
    if result["cells"] == rows_major:
        note = f"row-major cells: a node owns a 1 x {q} strip; {100 * on_node:.1f}% of halo messages stay on a node"
    elif on_node < best - 1e-9:
        note = (
            f"{100 * on_node:.1f}% of halo messages stay on a node (row-major: {100 * base:.1f}%); the grid allows "
            f"{100 * best:.1f}% with {shape} blocks of cells per node: not there yet"
        )
    elif short is not None:
        note = f"{100 * on_node:.1f}% of halo messages stay on a node here, but {short}"
    else:
        note = (
            f"{100 * on_node:.1f}% of halo messages stay on a node, the most the grid allows ({shape} blocks per "
            f"node; row-major: {100 * base:.1f}%), and at the other grids cell_of() was asked for"
        )
    ratio = (1 - base) / (1 - on_node) if on_node < 1 else float("inf")
    sentence = (
        f"your decomposition sends {ratio:.2f}x fewer halo messages off the node than row-major"
        if ratio > 1
        else "your decomposition sends as many halo messages off the node as row-major, or more"
    )
    effect = labs.effect_of(
        sentence,
        ratio,
        0.0,
        0.1,
        "a message count does not vary run to run: the cells your cell_of() gives are laid out as "
        "row-major, or as another order with the same neighbours off the node",
        counted=True,
    )
    return labs.Outcome(t, note, starter, effect, data={"on_node": on_node, "row_major": base, "best": best})


PLUGIN = plugins.Lab(
    folder="02-msgdist",
    title="Message distribution",
    build=plugins.LabBuild(program="lab-stencil", minutes=30),
    measure=measure,
)
