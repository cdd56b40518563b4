#!/usr/bin/env bash
# pxq virtual-node launch agent: Open MPI calls it as its rsh agent with
# "[options] HOST COMMAND..."; it ignores where HOST is and starts COMMAND on this machine,
# giving each virtual node its own shared-memory backing and session directories (ranks
# of different virtual nodes must not share them) and its name in PXQ_VNODE.
set -euo pipefail
while [[ $# -gt 0 && "$1" == -* ]]; do
  case "$1" in
    -l|-p|-i|-o|-F) shift 2 ;;
    *) shift ;;
  esac
done
host="$1"
shift
base="${PXQ_VNODE_DIR:-${TMPDIR:-/tmp}/pxq-vnodes-$(id -u)}/$host"
mkdir -p "$base/shm" "$base/session"
export PXQ_VNODE="$host"
export OMPI_MCA_btl_vader_backing_directory="$base/shm"
export OMPI_MCA_orte_tmpdir_base="$base/session"
export PMIX_MCA_gds=hash
exec /bin/sh -c "$*"
