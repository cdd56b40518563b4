#!/usr/bin/env bash
# pxq's rank binder for runs under MPICH's Hydra, and for Open MPI's on a cluster of this
# machine: binds this rank to the cores pxq planned for it, then becomes the program
# ("bind_rank.sh PROGRAM ARGS..."). Hydra binds the ranks of one host alike, so virtual nodes
# sharing this machine would land on the same cores; Open MPI checks a rankfile's cores against
# mpirun's view of the machine, not the cpuset of the node a rank runs in.
#
# PXQ_BIND_CPUS lists the cores of every rank, ranks separated by ';' ("0,1;2,3"); Hydra's
# PMI_RANK, or Open MPI's OMPI_COMM_WORLD_RANK, says which entry is this rank's.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "pxq bind: expected PROGRAM ARGS..." >&2; exit 2; }
rank="${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-}}"
[[ -n "${PXQ_BIND_CPUS:-}" && -n "$rank" ]] || {
  echo "pxq bind: PXQ_BIND_CPUS and the rank (PMI_RANK or OMPI_COMM_WORLD_RANK) must be set (pxq sets the first, the launcher the second)" >&2
  exit 2
}
IFS=';' read -r -a per_rank <<<"$PXQ_BIND_CPUS"
cpus="${per_rank[$rank]:-}"
[[ -n "$cpus" ]] || { echo "pxq bind: no cores planned for rank $rank in PXQ_BIND_CPUS=$PXQ_BIND_CPUS" >&2; exit 2; }
exec taskset -c "$cpus" "$@"
