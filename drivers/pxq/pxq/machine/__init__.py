"""The machine: what pxq-envinfo reports, the MPI launcher found here, the measured cache profile, and
the counters (PAPI or the cache simulator) a run can be wrapped in."""
