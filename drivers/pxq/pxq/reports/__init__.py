"""What `pxq report` writes: one writer per format (`writers`: the runs' table and chart,
CSV, JSON, markdown, Caliper profiles, Extra-P's input), and the figures of probe, profile and
study records drawn again from the records alone (`redraw`)."""
