"""Messages and placement: `msgdist` (messages by channel and size), `placement` (the placement
advisor), `placement_view` (what `pxq placement` prints), `placement_bench` (its benchmark),
`rankorder` (rank orders and their files), `rankpair_map` (the rank-pair probe's timed pairs,
whole matrix or sample)."""
