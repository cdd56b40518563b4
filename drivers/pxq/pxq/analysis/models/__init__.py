"""Models of a run's time: `roofline` and `roofmark` (predictions against the ceilings, a run's
share of its roof), `ordering` (how well they order an app's variants: tau-b against the runs'
settled order), `roofview` (what `pxq roofline` prints of them), `drift` (the machine against its
kept ceilings), `tiles` (tile benchmarks and the tile profile), `advice` (every way to run an app
on a node ranked by its predicted time, the proof's outcome and the hit rate)."""
