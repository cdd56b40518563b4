#!/usr/bin/env bash
# pxq's rank binder for runs under MPICH's Hydra: binds this rank to the cores pxq planned for
# it, then becomes the program ("bind_rank.sh PROGRAM ARGS..."). Hydra binds the ranks of one
# host alike, so virtual nodes sharing this machine would land on the same cores; a rankfile
# does this for Open MPI.
#
# PXQ_BIND_CPUS lists the cores of every rank, ranks separated by ';' ("0,1;2,3"); Hydra's
# PMI_RANK says which entry is this rank's.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "pxq bind: expected PROGRAM ARGS..." >&2; exit 2; }
[[ -n "${PXQ_BIND_CPUS:-}" && -n "${PMI_RANK:-}" ]] \
  || { echo "pxq bind: PXQ_BIND_CPUS and PMI_RANK must be set (pxq sets the first, Hydra the second)" >&2; exit 2; }
IFS=';' read -r -a per_rank <<<"$PXQ_BIND_CPUS"
cpus="${per_rank[$PMI_RANK]:-}"
[[ -n "$cpus" ]] || { echo "pxq bind: no cores planned for rank $PMI_RANK in PXQ_BIND_CPUS=$PXQ_BIND_CPUS" >&2; exit 2; }
exec taskset -c "$cpus" "$@"
