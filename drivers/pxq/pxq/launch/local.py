"""One machine: mpirun's own mapping, or a rankfile where pxq placed the ranks core by core."""

from __future__ import annotations

import socket

from pxq.core.errors import InputError
from pxq.launch.launchers import Launcher, Staging
from pxq.launch.request import YIELD, rankfile


class Local(Launcher, name="local", plans_cores=True):
    def open_mpi(self, st: Staging) -> list[str]:
        req, layout = st.req, st.req.layout
        if layout.nodes != 1:
            raise InputError("the local launcher runs one node: use the virtual launcher for p > 1")
        argv = st.mpirun_np()
        if st.chosen is not None or req.rank_order is not None:
            host = socket.gethostname()
            st.files.update(rankfile(st.workdir, layout, req, st.chosen, lambda node: host))
            argv += ["--rankfile", str(st.workdir / "rankfile")]
            if st.oversubscribed:
                argv += ["--oversubscribe", "--bind-to", "core:overload-allowed", *YIELD]
        elif st.oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "none", *YIELD]
        else:
            argv += ["--map-by", f"slot:PE={layout.threads}", "--bind-to", "core"]
        return argv
