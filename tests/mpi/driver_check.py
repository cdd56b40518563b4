"""What the driver-level checks share: failing with a message, running `python -m pxq`, and
reading a results file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(f"FAIL: {msg}")
    sys.exit(1)


def fresh_workdir() -> Path:
    """The check's working folder (its first argument), emptied."""
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return work


def pxq(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pxq", *args], capture_output=True, text=True, timeout=timeout)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def readme_commands(marker: str) -> list[str]:
    """The commands of the bash block after `<!-- marker -->` in the README or a page of docs/,
    as users copy them (comments and blank lines left out)."""
    import re

    root = Path(__file__).resolve().parents[2]
    text = "\n".join(p.read_text() for p in [root / "README.md", *sorted((root / "docs").rglob("*.md"))])
    block = re.search(rf"<!-- {marker} -->\s*```bash\n(.*?)```", text, re.S)
    if block is None:
        fail(f"neither README.md nor docs/ has a block <!-- {marker} --> followed by a bash block")
    return [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
