"""The registries the binaries declare (apps, backends, modes, allocations), and their own
resolution of byte sizes and variants: the driver asks `pxq-envinfo` instead of keeping copies."""

from __future__ import annotations

import functools
import json
import subprocess
from typing import Any

from pxq.errors import InputError
from pxq.paths import binary


def _envinfo(*args: str) -> tuple[int, dict[str, Any]]:
    exe = binary("envinfo")
    if not exe.exists():
        raise InputError(f"{exe} is missing: run ./pxq build first")
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    try:
        return out.returncode, json.loads(out.stdout)
    except json.JSONDecodeError:
        return out.returncode, {"error": (out.stderr or out.stdout).strip()}


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, Any]:
    code, reg = _envinfo("registry")
    if code != 0 or "apps" not in reg:
        raise InputError(f"pxq-envinfo registry failed: {reg.get('error', '?')}: rebuild with ./pxq build")
    return reg


def apps() -> tuple[str, ...]:
    return tuple(a["name"] for a in registry()["apps"])


def app(name: str) -> dict[str, Any]:
    for a in registry()["apps"]:
        if a["name"] == name:
            return a
    raise InputError(f"unknown app '{name}': pxq has {', '.join(apps())}")


def classes(name: str) -> tuple[str, ...]:
    return tuple(app(name)["classes"])


def backends() -> tuple[str, ...]:
    """Every backend pxq knows (available or not in this build)."""
    return tuple(b["name"] for b in registry()["backends"])


def backend_label(name: str) -> str:
    """A backend's name as people write it ("Kokkos"), from its runtime's description."""
    for b in registry()["backends"]:
        if b["name"] == name:
            return str(b["runtime"]).split(" (")[0]
    return name


def available_backends() -> tuple[str, ...]:
    return tuple(b["name"] for b in registry()["backends"] if b["available"])


def modes() -> tuple[str, ...]:
    return tuple(registry()["modes"])


def allocations() -> tuple[str, ...]:
    return tuple(registry()["allocations"])


def tile_kernels() -> tuple[str, ...]:
    """Every kernel pxq-bench-tiling measures, in the registry's order."""
    return tuple(k for a in registry()["apps"] for k in a["bench_kernels"])


@functools.lru_cache(maxsize=4096)
def resolve(*args: str) -> dict[str, Any]:
    """`pxq-envinfo resolve ARGS`: the miniapps' own answer; InputError with their message."""
    code, out = _envinfo("resolve", *args)
    if code != 0 or "error" in out:
        raise InputError(out.get("error", f"pxq-envinfo resolve {' '.join(args)} failed"))
    return out
