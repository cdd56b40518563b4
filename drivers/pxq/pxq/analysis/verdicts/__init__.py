"""Comparisons and verdicts: `compare` (two results files) and `compareview` (what `pxq compare`
concludes and says), `settle` and `paired` (settled comparisons), `plausible` (figures no engineer
would sign), `findings` (the published findings), `allocation` (the allocation study's verdicts)."""
