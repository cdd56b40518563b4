"""What pxq concludes from records, cut by job into four sub-packages:

- `exports`: tables and exports (the runs' report, probes' and studies' tables, Caliper, Extra-P,
  traces, POP factors, NAS and OSU output read as pxq records);
- `verdicts`: the comparisons and the verdicts on them (two results files, settled comparisons,
  the plausibility guards, the published findings, the allocation verdicts);
- `models`: the roofline's predictions and their words, how well they order the variants, the
  machine against its kept ceilings, tile profiles and the advice built on them;
- `messages`: messages by channel and size, rank placement and rank orders."""
