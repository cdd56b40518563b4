"""How busy the host is: the share of its cores that every process together kept busy over a
second, read from /proc/stat while pxq itself waits. A measurement taken beside a busy host is
not what the machine can do (the variability study's "quiet" run, the roofline's ceilings)."""

from __future__ import annotations

import time
from pathlib import Path

BUSY = 0.25  # more of the cores busy than this, the second before a measurement: the host is not quiet


def _cpu_times(stat: Path) -> tuple[int, int] | None:
    """(busy, total) jiffies of all cores from /proc/stat's first line."""
    try:
        with stat.open(encoding="ascii") as f:
            fields = f.readline(4096).split()
        values = [int(v) for v in fields[1:9]]
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if fields[:1] != ["cpu"] or len(values) < 5:
        return None
    idle = values[3] + values[4]  # idle and waiting for I/O
    return sum(values) - idle, sum(values)


def busy(seconds: float = 1.0, stat: Path = Path("/proc/stat")) -> float | None:
    """The share of the host's cores busy over SECONDS (every process's, while pxq waits): the
    load a "quiet" run would have beside it; None where the system does not say."""
    a = _cpu_times(stat)
    time.sleep(seconds)
    b = _cpu_times(stat)
    if a is None or b is None or b[1] <= a[1]:
        return None
    return max(0.0, min(1.0, (b[0] - a[0]) / (b[1] - a[1])))
