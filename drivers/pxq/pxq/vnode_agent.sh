#!/usr/bin/env bash
# pxq virtual-node launch agent: Open MPI calls it as its rsh agent, and MPICH's Hydra as
# its ssh (-launcher-exec), with "[options] HOST COMMAND..."; it ignores where HOST is and starts COMMAND on this machine,
# giving each virtual node its own shared-memory backing and session directories (ranks
# of different virtual nodes must not share them) and its name in PXQ_VNODE. On a cluster of
# this machine (PXQ_CLUSTER_HOLDERS: the process holding each node's namespaces), HOST nK's
# command runs inside node K: its network, host name, IPC namespace and mounts, and on its
# cores (PXQ_CLUSTER_CPUSETS: each node's cpuset's cgroup.procs, where the cluster has them).
#
# No shell ever reads the command: Open MPI quotes the words it passes for a remote shell
# ("value"), so the agent removes one pair of surrounding double quotes from each word and
# runs the words as they are. A path holding spaces, quotes, `$(...)` or backquotes stays a
# path. The environment prelude Open MPI sends with --prefix ("PATH=/p/bin:$PATH ; export
# PATH ; ... /p/bin/orted") is applied here, expanding only the variable's own old value.
set -euo pipefail
while [[ $# -gt 0 && "$1" == -* ]]; do
  case "$1" in
    -l|-p|-i|-o|-F) shift 2 ;;
    *) shift ;;
  esac
done
[[ $# -ge 2 ]] || { echo "pxq vnode agent: expected HOST COMMAND..., got: $*" >&2; exit 2; }
host="$1"
shift

trim() {
  local s="$1"
  s="${s#"${s%%[![:space:]]*}"}"
  printf '%s' "${s%"${s##*[![:space:]]}"}"
}

# The prelude, if any, stands in the first word: statements separated by ';', the last one
# being the program.
first="$(trim "$1")"
shift
if [[ "$first" == *";"* ]]; then
  IFS=';' read -r -a statements <<<"$first"
  last=$((${#statements[@]} - 1))
  for ((i = 0; i < last; i++)); do
    st="$(trim "${statements[$i]}")"
    if [[ "$st" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
      name="${BASH_REMATCH[1]}"
      value="${BASH_REMATCH[2]}"
      old="${!name:-}"
      value="${value//"\${$name:-}"/$old}"
      value="${value//"\${$name}"/$old}"
      value="${value//"\$$name"/$old}"
      export "$name=$value"
    elif [[ -n "$st" && ! "$st" =~ ^export\ [A-Za-z_][A-Za-z0-9_]*$ ]]; then
      echo "pxq vnode agent: unexpected statement in the launch command: $st" >&2
      exit 2
    fi
  done
  first="$(trim "${statements[$last]}")"
fi
# MPICH's Hydra quotes the program too ("/usr/bin/hydra_pmi_proxy").
if [[ ${#first} -ge 2 && "$first" == \"*\" ]]; then
  first="${first:1:${#first}-2}"
fi

base="${PXQ_VNODE_DIR:-${TMPDIR:-/tmp}/pxq-vnodes-$(id -u)}/$host"
# Shared-memory segments in the run's own folder of /dev/shm when the driver gives one.
if [[ -n "${PXQ_VNODE_SHM:-}" ]]; then
  shm="$PXQ_VNODE_SHM/$host"
else
  shm="$base/shm"
fi
mkdir -p "$shm" "$base/session"

# mpirun passes its own "-mca orte_tmpdir_base DIR" to every daemon, and that beats the
# environment: daemons of virtual nodes on one host would then race to create the same
# job-family folder ("mkdir ... File exists" and orte_init fails). Each gets its own.
argv=("$first")
previous=""
for word in "$@"; do
  word="$(trim "$word")"
  if [[ ${#word} -ge 2 && "$word" == \"*\" ]]; then
    word="${word:1:${#word}-2}"
  fi
  if [[ "$previous" == "orte_tmpdir_base" ]]; then
    word="$base/session"
  fi
  argv+=("$word")
  previous="$word"
done

export PXQ_VNODE="$host"
export OMPI_MCA_btl_vader_backing_directory="$shm"
export OMPI_MCA_osc_sm_backing_directory="$shm"
export OMPI_MCA_orte_tmpdir_base="$base/session"
export PMIX_MCA_gds=hash
# Daemons that map hwloc's shared topology into a "hole" next to their stack crash now and
# then when several start at once on one host: each reads the topology itself instead.
export OMPI_MCA_rtc_hwloc_vmhole=none
if [[ -n "${PXQ_CLUSTER_HOLDERS:-}" ]]; then
  IFS=',' read -r -a holders <<<"$PXQ_CLUSTER_HOLDERS"
  node="${host#n}"
  if [[ ! "$node" =~ ^[0-9]+$ || "$node" -ge ${#holders[@]} ]]; then
    echo "pxq vnode agent: no node '$host' in this cluster (nodes n0 to n$((${#holders[@]} - 1)))" >&2
    exit 2
  fi
  # The node's cores: this process (and so the command it becomes) joins the node's cpuset.
  if [[ -n "${PXQ_CLUSTER_CPUSETS:-}" ]]; then
    IFS=',' read -r -a cpusets <<<"$PXQ_CLUSTER_CPUSETS"
    echo $$ >"${cpusets[$node]}"
  fi
  exec nsenter -t "${holders[$node]}" --net --uts --ipc --mount -- "${argv[@]}"
fi
exec "${argv[@]}"
