"""Layouts (PxQ[xT]) and the driver's view of byte sizes, tiles and modes. Sizes, tiles and
modes are resolved by the binaries themselves (pxq.core.registry), so the two never disagree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pxq.core import bounds, registry
from pxq.core.errors import InputError

__all__ = [
    "InputError",
    "Layout",
    "format_bytes",
    "parse_bytes",
    "parse_layout",
    "parse_layouts",
    "parse_tile",
    "resolve_mode",
]


_LAYOUT = re.compile(r"^(\d+)x(\d+)(?:x(\d+))?$")


@dataclass(frozen=True)
class Layout:
    nodes: int
    ranks_per_node: int
    threads: int = 1

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def cores(self) -> int:
        return self.ranks * self.threads

    def __str__(self) -> str:
        base = f"{self.nodes}x{self.ranks_per_node}"
        return base if self.threads == 1 else f"{base}x{self.threads}"

    def with_threads(self, threads: int) -> Layout:
        return Layout(self.nodes, self.ranks_per_node, threads)


def parse_layout(text: str) -> Layout:
    """'2x4' = 2 nodes x 4 ranks per node; '2x4x4' adds 4 threads per rank."""
    m = _LAYOUT.match(text.strip())
    if not m:
        raise InputError(
            f"invalid layout '{text}': use PxQ or PxQxT with positive integers, "
            "e.g. 1x2 (1 node, 2 ranks) or 2x1x2 (2 nodes, 1 rank each, 2 threads per rank)"
        )
    p, q, t = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
    for name, value, most in (
        ("nodes", p, bounds.MAX_NODES),
        ("ranks per node", q, bounds.MAX_RANKS_PER_NODE),
        ("threads per rank", t, bounds.MAX_THREADS),
    ):
        if not 1 <= value <= most:
            raise InputError(f"invalid layout '{text}': {name} must be 1 to {most}")
    return Layout(p, q, t)


def parse_layouts(text: str) -> list[Layout]:
    items = [s for s in text.split(",") if s.strip()]
    if not items:
        raise InputError("no layouts given: use e.g. --layouts 1x2,2x1,1x1x2")
    return [parse_layout(s) for s in items]


def parse_bytes(text: str) -> int:
    """'256K' -> 262144 (powers of 1024), exactly as the miniapps parse it."""
    t = text.strip()
    if not t or "," in t:
        raise InputError(f"invalid size '{text}': use a positive size such as 4096, 64K, 256K, 1M or 2G")
    return int(registry.resolve(f"--bytes={t}")["bytes"][0])


def format_bytes(n: int) -> str:
    for unit in ("", "K", "M", "G"):
        if n < 1024 or n % 1024:
            return f"{n}{unit}"
        n //= 1024
    return f"{n}T"


def format_volume(n: float) -> str:
    """An amount of data with its unit: 512 B, 4.7 KiB, 1.2 MiB, 3.0 GiB."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _tile_text(text: str) -> str:
    t = text.strip()
    if not t or "," in t:
        raise InputError(f"tile '{text}': use off, auto or a size such as 256K")
    return t


def parse_tile(text: str) -> str:
    """Validates a tile policy ('off', 'auto' or a size) and returns it normalised ('256K')."""
    t = _tile_text(text)
    if t == "off":
        return t
    return str(registry.resolve(f"--tile={t}")["variant"]["tile"])


def resolve_mode(mode: str | None, threads: int, tile: str | None) -> tuple[str, int, str]:
    """Mode preset + axes -> (mode, threads, tile), as the miniapps resolve them."""
    args = [f"--threads={threads}"]
    if mode is not None:
        args.append(f"--mode={mode}")
    if tile is not None:  # the one pxq-envinfo call resolves and normalises the tile too
        args.append(f"--tile={_tile_text(tile)}")
    try:
        v = registry.resolve(*args)["variant"]
    except InputError as e:
        if "--threads" not in str(e):
            raise
        raise InputError(f"{e} (threads per rank here: {threads}, from the layout's T or --threads)") from None
    return str(v["mode"]), int(v["threads"]), str(v["tile"])
