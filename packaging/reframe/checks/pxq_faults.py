"""A check that must fail: CG with its messages corrupted in flight (pxq's test fault, a
library preloaded into every rank). pxq's own verification fails, and so must the check.
tests/python/test_reframe.py runs it to show that the library's sanity can fail.
"""

import sys
from pathlib import Path

import reframe as rfm
from reframe.core.builtins import parameter, run_before

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pxq_rfm import pxq_proxy_check  # noqa: E402


@rfm.simple_test
class pxq_corrupted_cg(pxq_proxy_check):
    descr = "CG with doubles corrupted in flight: verification must fail"
    tags = {"pxq", "fault"}
    app = parameter(["cg"])
    mode = parameter(["flat"])

    @run_before("run")
    def corrupt_messages(self):
        self.env_vars["LD_PRELOAD"] = str(Path(self.pxq_build) / "lib" / "libpxq-test-corrupt-doubles.so")
