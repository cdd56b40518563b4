"""Facts about this machine: what pxq-envinfo reports (`envinfo`), the MPI launcher found here
(`mpi`), the measured cache profile (`caches`) and roofline ceilings (`ceilings`), how busy the
host is (`hostload`), and the counters (PAPI or the cache simulator) a run can be wrapped in
(`counters`)."""
