"""The core, which imports nothing of pxq above it: `errors` (bad input, exit 2), `escape` (text
made safe where it is shown), `bounds` (every number's limits), `paths`, `door` (every file read)
and `outputs` (every file written), `records` and `schemas` (run records and their schemas),
`registry` (what the binaries declare), `layout` (layouts and sizes), `procs`, `watchdog` and
`leftovers` (child processes tied to the driver's life), `progress`, and `plugins` (the plugin
declarations)."""
