"""Layouts (PxQ[xT]), allocation schemes and byte sizes: parsing and validation only."""

from __future__ import annotations

import re
from dataclasses import dataclass


class InputError(ValueError):
    """Bad user input: the message names the problem and the fix."""


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

    def with_threads(self, threads: int) -> "Layout":
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
    for name, value in (("nodes", p), ("ranks per node", q), ("threads per rank", t)):
        if value < 1:
            raise InputError(f"invalid layout '{text}': {name} must be at least 1")
    return Layout(p, q, t)


def parse_layouts(text: str) -> list[Layout]:
    items = [s for s in text.split(",") if s.strip()]
    if not items:
        raise InputError("no layouts given: use e.g. --layouts 1x2,2x1,1x1x2")
    return [parse_layout(s) for s in items]


ALLOCATIONS = ("block", "cyclic")
MODES = ("flat", "hybrid", "tiled")
BACKENDS = ("openmp", "kokkos")

MAX_BYTES = 1 << 50  # 1 PiB: anything larger is a typo
_SIZE = re.compile(r"^(\d+)\s*([KMG]?)(?:I?B)?$", re.IGNORECASE)


def parse_bytes(text: str) -> int:
    """'256K' -> 262144 (powers of 1024). Same forms as the miniapps accept."""
    m = _SIZE.match(text.strip())
    if not m:
        raise InputError(f"invalid size '{text}': use a positive size such as 4096, 64K, 256K, 1M")
    value = int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()]
    if value <= 0:
        raise InputError(f"invalid size '{text}': must be > 0")
    if value > MAX_BYTES:
        raise InputError(f"invalid size '{text}': too large (at most {MAX_BYTES >> 40}T)")
    return value


def format_bytes(n: int) -> str:
    for unit in ("", "K", "M", "G"):
        if n < 1024 or n % 1024:
            return f"{n}{unit}"
        n //= 1024
    return f"{n}T"


MIN_TILE_BYTES = 512  # the miniapps' own limit (tiling/tile_policy.hpp)


def parse_tile(text: str) -> str:
    """Validates a tile policy ('off', 'auto' or a size) and returns it normalised."""
    t = text.strip()
    if t in ("off", "auto"):
        return t
    try:
        n = parse_bytes(t)
    except InputError as e:
        raise InputError(f"tile: {e}, or off, or auto") from None
    if n < MIN_TILE_BYTES:
        raise InputError(f"tile {t}: smaller than {MIN_TILE_BYTES} bytes (8 cache lines), where loop overhead "
                         f"swamps the kernel: use {MIN_TILE_BYTES} or more (256K is the reference)")
    return format_bytes(n)


def resolve_mode(mode: str | None, threads: int, tile: str | None) -> tuple[str, int, str]:
    """Mode preset + axes -> (mode, threads, tile), mirroring the miniapps' rules."""
    if mode is not None and mode not in MODES:
        raise InputError(f"unknown mode '{mode}': use one of {', '.join(MODES)}")
    tile = parse_tile(tile) if tile is not None else None
    if mode == "flat":
        if threads > 1:
            raise InputError(
                f"mode flat means 1 thread per rank, but the layout has {threads}: "
                "use mode hybrid or tiled, or a layout without threads"
            )
        if tile not in (None, "off"):
            raise InputError(f"mode flat is untiled, but tile {tile} was given: use --mode tiled")
        return "flat", 1, "off"
    if mode == "hybrid":
        if threads < 2:
            raise InputError(
                "mode hybrid needs 2 or more threads per rank: use a layout such as 1x1x2 "
                "or --threads 2"
            )
        if tile not in (None, "off"):
            raise InputError(f"mode hybrid is untiled, but tile {tile} was given: use --mode tiled")
        return "hybrid", threads, "off"
    if mode == "tiled":
        if tile == "off":
            raise InputError("mode tiled with tile off: give a tile size or auto")
        return "tiled", threads, tile or "256K"
    tile = tile or "off"
    return ("tiled" if tile != "off" else ("hybrid" if threads > 1 else "flat")), threads, tile
