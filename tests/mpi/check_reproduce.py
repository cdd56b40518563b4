"""`pxq reproduce` end to end on two studies: one progress bar, a report folder with
report.md, report.html (loaded in headless Chromium: every figure there) and the study
records (valid); a second call resumes and runs nothing; unknown studies exit 2.

usage: check_reproduce.py WORKDIR   (PYTHONPATH and PXQ_BUILD_DIR set by CTest)"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from driver_check import fail, pxq


def main() -> None:
    work = Path(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    out = work / "report"
    p = pxq("reproduce", "--only", "channels,msgdist", "--out", str(out))
    if p.returncode != 0:
        fail(f"reproduce exited {p.returncode}\n{p.stdout}{p.stderr}")
    if "channels: " not in p.stdout or "msgdist: " not in p.stdout or "pingpong" in p.stdout:
        fail(f"the terminal shows one line per study, the studies' output goes to the logs:\n{p.stdout}")
    text = (out / "report.md").read_text()
    for name in ("channels", "msgdist"):
        if not re.search(rf"^## {name}: ", text, re.M) or not (out / "figures" / f"{name}.png").is_file():
            fail(f"{name} missing from the report\n{text}")
        if not (out / "logs" / f"{name}.log").read_text().strip():
            fail(f"{name}: empty log")
    p = pxq("validate", str(out / "records"), "--require", "study,probe,run,profile")
    if p.returncode != 0:
        fail(f"the study records do not validate\n{p.stdout}{p.stderr}")
    state = json.loads((out / "progress.json").read_text())
    if sorted(state["done"]) != ["channels", "msgdist"]:
        fail(f"progress {state}")
    again = pxq("reproduce", "--only", "channels,msgdist", "--out", str(out))
    if again.returncode != 0 or "2 of 2 studies already done" not in again.stdout:
        fail(f"the second call did not resume\n{again.stdout}{again.stderr}")
    bad = pxq("reproduce", "--only", "channels,nas", "--out", str(work / "bad"))
    if bad.returncode != 2 or "unknown study 'nas'" not in bad.stderr:
        fail(f"unknown study: exit {bad.returncode}\n{bad.stderr}")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("SKIP the page check: no Chromium here (./pxq test installs it where apt can)")
    else:
        dom = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                f"--user-data-dir={work / 'chromium'}",
                "--virtual-time-budget=5000",
                "--dump-dom",
                (out / "report.html").resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        body = re.search(r"<body[^>]*>", dom)
        if not body or 'data-figures="2"' not in body.group(0) or 'data-loaded="2"' not in body.group(0):
            fail(f"report.html in Chromium: {body.group(0) if body else dom[:500]}")
    print("PASS: reproduce writes and resumes its report; the page loads with every figure")


if __name__ == "__main__":
    main()
