"""What pxq concludes from records, by job:

- tables and exports: `report` (the runs' table and chart labels), `tables` (probes', profiles'
  and studies' tables), `caliper` (Caliper profiles), `extrap` and `extrapfit` (Extra-P's input
  and models), `trace` and `otf2trace` (timelines), `efficiency` (POP factors);
- verdicts: `compare` (two results files) and `compareview` (what `pxq compare` concludes and
  says), `settle` and `paired` (settled comparisons),
  `plausible` (figures no engineer would sign), `findings` (the published findings),
  `allocation` (the allocation study's verdicts);
- models: `roofline` and `roofmark` (predictions against the ceilings, a run's share of its
  roof), `ordering` (how well they order an app's variants: tau-b against the runs' settled order),
  `roofview` (what `pxq roofline` prints of them), `drift` (the machine against its
  kept ceilings), `tiles` (tile benchmarks and the tile profile), `advice` (every way to run an
  app on a node ranked by its predicted time, the proof's outcome and the hit rate);
- messages and placement: `msgdist` (messages by channel and size), `placement`,
  `placement_view`, `placement_bench`, `rankorder` (rank orders and their files);
- `peers` (NAS and OSU output as pxq records)."""
