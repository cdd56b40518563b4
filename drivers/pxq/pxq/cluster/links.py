"""Link profiles for a cluster on this machine: a bandwidth each way (bytes per second, None:
unshaped) and a latency (seconds, None: unknown), named after the published machines or given
by hand (`1Gbit`, `400MB/s,5us`), or read from a `pxq probe pingpong` record of a real cluster."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pxq.core import door, escape, records
from pxq.core.errors import InputError


@dataclass(frozen=True)
class Link:
    name: str  # the profile's name, or the text given
    bytes_per_s: float | None  # each way; None: unshaped (the host's own speed)
    latency_s: float | None  # one way, small messages; None: not given
    source: str  # where the figures come from

    def text(self) -> str:
        rate = "unshaped" if self.bytes_per_s is None else rate_text(self.bytes_per_s)
        lat = "" if self.latency_s is None else f", {self.latency_s * 1e6:.3g} us"
        return f"{self.name}: {rate}{lat}"

    def record(self) -> dict:
        return asdict(self)


# Named profiles. MB is 1e6 bytes, as the papers and OSU print bandwidth.
PROFILES: dict[str, Link] = {
    "unshaped": Link("unshaped", None, None, "no shaping: the host's own veth and bridge speed"),
    "100mbit": Link("100mbit", 100e6 / 8, None, "Fast Ethernet, 100 Mbit/s"),
    "gige": Link("gige", 1e9 / 8, None, "Gigabit Ethernet, 1 Gbit/s"),
    "10gige": Link("10gige", 10e9 / 8, None, "10 Gigabit Ethernet, 10 Gbit/s"),
    "myri-10g": Link("myri-10g", 10e9 / 8, None, "Myri-10G, 10 Gbit/s (narayanaswamy2008's cluster)"),
    "woodcrest-ib": Link(
        "woodcrest-ib", 1532e6, 2.83e-6, "InfiniBand DDR of chai2007's Woodcrest cluster: 1532 MB/s, 2.83 us"
    ),
}

_RATE_UNITS = {
    "bit": 1 / 8,
    "kbit": 1e3 / 8,
    "mbit": 1e6 / 8,
    "gbit": 1e9 / 8,
    "b/s": 1.0,
    "kb/s": 1e3,
    "mb/s": 1e6,
    "gb/s": 1e9,
    "kib/s": 1024.0,
    "mib/s": 1024.0**2,
    "gib/s": 1024.0**3,
}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_HINT = "give a profile name ({names}), a rate such as 1Gbit or 400MB/s, optionally ',5us', or a pingpong record"


def _hint() -> str:
    return _HINT.format(names=", ".join(PROFILES))


def parse_rate(text: str) -> float:
    """Bytes per second from '1Gbit', '1Gbit/s', '400MB/s', '2.5GiB/s'."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-zA-Z/]+)\s*", text)
    unit = m.group(2).lower() if m else ""
    if unit.endswith("bit/s"):
        unit = unit[:-2]
    if unit.endswith("bps"):
        raise InputError(f"link rate '{text}': say Mbit/Gbit for bits or MB/s for bytes ('bps' is ambiguous)")
    if not m or unit not in _RATE_UNITS:
        raise InputError(f"link rate '{text}': {_hint()}")
    value = float(m.group(1)) * _RATE_UNITS[unit]
    if not math.isfinite(value) or value < 1e5 / 8 or value > 1e12:
        raise InputError(f"link rate '{text}': give a rate between 100 kbit/s and 1 TB/s")
    return value


MAX_LATENCY = 1.0  # seconds: a link slower to answer than this is no link a cluster has


def parse_time(text: str) -> float:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s)\s*", text)
    if not m:
        raise InputError(f"link latency '{escape.plain(text)}': give a time such as 5us or 0.1ms")
    value = float(m.group(1)) * _TIME_UNITS[m.group(2)]
    if not math.isfinite(value) or value > MAX_LATENCY:
        raise InputError(f"link latency '{escape.plain(text)}': give a latency of at most {MAX_LATENCY:.0f} s")
    return value


def parse_link(text: str) -> Link:
    """A profile name, 'RATE[,LATENCY]', or the path of a `pxq probe pingpong` record."""
    given = text.strip()
    if given.lower() in PROFILES:
        return PROFILES[given.lower()]
    path = Path(given)
    if path.suffix in (".jsonl", ".json") or (path.parent != Path(".") and path.exists()):
        return from_pingpong(path)
    rate, _, latency = given.partition(",")
    return Link(
        given,
        parse_rate(rate),
        parse_time(latency) if latency.strip() else None,
        "given on the command line",
    )


def from_pingpong(path: Path) -> Link:
    """The inter-node channel of a `pxq probe pingpong` record: its largest message's bandwidth
    and its smallest message's latency (the last pingpong record of the file). The file is read
    through the records' door (a regular file, each line bounded and checked by its schema),
    and every field used is checked for its type before use."""
    fix = "give a file of `pxq probe pingpong` records"
    try:
        raw = door.read_bytes(path, "link profile", fix, records.MAX_LINE)
    except FileNotFoundError:
        raise InputError(f"link profile {escape.plain(path)}: no such file: {fix}") from None
    rec = None
    for line in raw.splitlines():
        r, why = records.decode_line(line)
        if why is None and isinstance(r, dict) and r.get("app") == "probe-pingpong":
            rec = r
    if rec is None:
        raise InputError(
            f"link profile {escape.plain(path)}: no pingpong record in it: make one with `pxq probe pingpong` on two "
            "nodes"
        )

    def points(channel: dict, key: str, value: str) -> list[dict]:
        found = channel.get(key)
        return [
            p
            for p in (found if isinstance(found, list) else [])
            if isinstance(p, dict)
            and isinstance(p.get("bytes"), int)
            and isinstance(p.get(value), (int, float))
            and math.isfinite(p[value])
            and p[value] > 0
        ]

    found = rec.get("channels")
    channels: list[Any] = found if isinstance(found, list) else []
    inter = [c for c in channels if isinstance(c, dict) and c.get("channel") == "inter_node"]
    lat = points(inter[0], "latency", "median_us") if inter else []
    bw = points(inter[0], "bandwidth", "median_gbs") if inter else []
    if not lat or not bw:
        raise InputError(
            f"link profile {escape.plain(path)}: its record has no inter-node channel: run the probe on two nodes"
        )
    small = min(lat, key=lambda p: p["bytes"])
    large = max(bw, key=lambda p: p["bytes"])
    rate, latency = float(large["median_gbs"]) * 1e9, float(small["median_us"]) * 1e-6
    if not 1e5 / 8 <= rate <= 1e12 or latency > MAX_LATENCY:
        raise InputError(
            f"link profile {escape.plain(path)}: its inter-node channel ({rate:.3g} B/s, {latency:.3g} s) is no "
            f"link between 100 kbit/s and 1 TB/s with at most {MAX_LATENCY:.0f} s latency: {fix}"
        )
    found = rec.get("context")
    context: dict[str, Any] = found if isinstance(found, dict) else {}
    host = escape.plain(context.get("host", "?"))
    return Link(
        f"measured:{escape.plain(path.name)}",
        rate,
        latency,
        f"pxq probe pingpong on {host}: inter-node median bandwidth at {large['bytes']} bytes, "
        f"latency at {small['bytes']} bytes",
    )


def rate_text(bytes_per_s: float) -> str:
    bits = bytes_per_s * 8
    if bits >= 1e9:
        return f"{bits / 1e9:.3g} Gbit/s = {bytes_per_s / 1e6:.0f} MB/s"
    return f"{bits / 1e6:.3g} Mbit/s = {bytes_per_s / 1e6:.3g} MB/s"
