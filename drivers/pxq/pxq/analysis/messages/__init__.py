"""Messages and placement: `msgdist` (messages by channel and size), `placement` (the placement
advisor), `placement_view` (what `pxq placement` prints), `placement_bench` (its benchmark),
`rankorder` (rank orders and their files)."""
