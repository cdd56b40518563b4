"""What runs experiments: one run (`runner`), sweeps (`sweep`; `sweeping`: the steps of `pxq
sweep`; and `settling`: until the comparisons are settled), experiment files (`expfile`), Slurm
batch jobs (`batch`), the demo (`demo`), every published study at once (`reproduce`), the options
commands share (`options`), the studies' kit (`studykit`), the contention study's plan and
table (`study`) and what `pxq advise` runs (`advising`: each configuration's declared work, then
the proof)."""
