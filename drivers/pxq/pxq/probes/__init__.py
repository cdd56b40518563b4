"""The driver's side of the C++ probes: collective variability (`collprobe`), channels and rank pairs
(`chanprobe`), memory stride and bandwidth (`memprobe`), OSU-style runs (`osuprobe`), this
machine's ceilings (`ceilprobe`) and a cluster's links (`linkbench`). Each module that offers
`pxq probe` sub-commands declares them as its PLUGIN (pxq.core.plugins.Probe): their options and
their run live beside what they measure."""
