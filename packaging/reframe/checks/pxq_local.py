"""pxq's checks on this machine (the system in ../settings.py): every proxy in every variant
at one node of two ranks, and the OSU-style latency and bandwidth probe.

    .deps/ecosystem/bin/reframe -C packaging/reframe/settings.py -c packaging/reframe/checks/pxq_local.py -r
"""

import sys
from pathlib import Path

import reframe as rfm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pxq_rfm import pxq_osu_check, pxq_proxy_check  # noqa: E402


@rfm.simple_test
class pxq_proxy_local(pxq_proxy_check):
    descr = "a pxq proxy, verified, with its record's timings and rates"


@rfm.simple_test
class pxq_osu_local(pxq_osu_check):
    descr = "pxq's OSU-style probe, its data validated"
