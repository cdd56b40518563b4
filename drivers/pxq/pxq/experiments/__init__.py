"""What runs experiments: one run (runner), sweeps and batch jobs, the demo, reproduce, the options
commands share, the studies' kit (studykit), and redrawing any record's figure (plots)."""
