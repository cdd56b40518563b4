"""The registries the binaries declare (apps, backends, modes, allocations), and their own
resolution of byte sizes and variants: the driver asks `pxq-envinfo` instead of keeping copies.

Without a build (the driver installed with pip on a laptop, to read records), the registry
comes from `data/registry.json`: the build-independent part of `pxq-envinfo registry`, which
a test holds equal to the binary's (`python -m pxq.core.registry` rewrites it). No backend is
available then, and anything that runs a binary says to build pxq first.
"""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import Any

from pxq.core.errors import InputError
from pxq.core.paths import binary, build_hint

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "registry.json"


def _envinfo(*args: str) -> tuple[int, dict[str, Any]]:
    exe = binary("envinfo")
    if not exe.exists():
        raise InputError(f"{exe} is missing: {build_hint()}")
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    try:
        return out.returncode, json.loads(out.stdout)
    except json.JSONDecodeError:
        return out.returncode, {"error": (out.stderr or out.stdout).strip()}


def snapshot(reg: dict[str, Any]) -> dict[str, Any]:
    """The part of a registry that does not depend on the build: the backends' availability,
    versions and how to build them in, and which backends run each kernel family, left out."""
    out = {k: v for k, v in reg.items() if k != "kernel_families"}
    out["backends"] = [
        {k: v for k, v in b.items() if k not in ("available", "version", "enable")} for b in reg["backends"]
    ]
    return out


def _from_snapshot() -> dict[str, Any]:
    try:
        reg = json.loads(SNAPSHOT.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{binary('envinfo')} is missing and {SNAPSHOT} unreadable ({e}): {build_hint()}") from None
    reg["backends"] = [dict(b, available=False, version="", enable="a pxq build") for b in reg["backends"]]
    reg["kernel_families"] = []
    return reg


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, Any]:
    if not binary("envinfo").exists():
        return _from_snapshot()
    code, reg = _envinfo("registry")
    if code != 0 or "apps" not in reg:
        raise InputError(f"pxq-envinfo registry failed: {reg.get('error', '?')}: rebuild with ./pxq build")
    try:  # a registry the driver's copy has grown since this build (a driver newer than its build)
        missing = sorted(set(json.loads(SNAPSHOT.read_text())) - {"kernel_families"} - set(reg))
    except (OSError, json.JSONDecodeError):
        missing = []
    if missing:
        raise InputError(
            f"{binary('envinfo')} is older than the driver (its registry has no {', '.join(missing)}): "
            "rebuild with ./pxq build"
        )
    return reg


def apps() -> tuple[str, ...]:
    return tuple(a["name"] for a in registry()["apps"])


def app(name: str) -> dict[str, Any]:
    for a in registry()["apps"]:
        if a["name"] == name:
            return a
    raise InputError(f"unknown app '{name}': pxq has {', '.join(apps())}")


def nas_apps() -> tuple[str, ...]:
    """The NAS proxies: the apps with NAS problem classes, in the registry's order."""
    return tuple(a["name"] for a in registry()["apps"] if a["classes"])


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


if __name__ == "__main__":  # python -m pxq.core.registry: rewrites data/registry.json from this build
    SNAPSHOT.write_text(json.dumps(snapshot(registry()), indent=2, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")
