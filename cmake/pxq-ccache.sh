#!/usr/bin/env bash
# pxq's compiler launcher (CMakeLists.txt sets it as CMAKE_<LANG>_COMPILER_LAUNCHER where ccache is
# installed and PXQ_CCACHE is ON): every compile goes through ccache, so a second build of the
# same sources (a fresh clone, CI's sanitizer and MPICH builds, the scratch copy of
# arch.registries) takes its objects from the cache instead of compiling them again.
#
#   pxq-ccache.sh COMPILER ARGS...
#
# - The cache is $PXQ_CCACHE_DIR, else $XDG_CACHE_HOME/pxq/ccache, else ~/.cache/pxq/ccache
#   (ccache's own settings elsewhere are left alone).
# - Paths under the checkout are hashed as relative ones (CCACHE_BASEDIR) and the working folder is
#   not hashed, so a clone elsewhere hits the same entries.
# - pxq compiles with -march=native, which ccache hashes as the text "-march=native": the
#   compiler check is instead the compiler's version, its mtime and what -march=native means on
#   this CPU, so objects built on one CPU are never taken on another.
# - Where the cache cannot be written, or ccache is gone, the compiler runs as it is.
set -uo pipefail
compiler="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${PXQ_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pxq/ccache}"
if ! command -v ccache >/dev/null 2>&1 || ! mkdir -p "$dir" 2>/dev/null || [[ ! -w "$dir" ]]; then
  exec "$@"
fi
path="$(command -v "$compiler")" || exec "$@"
check="$({ "$compiler" --version; stat -L -c %Y "$path"; "$compiler" -march=native -Q --help=target; } 2>&1 | md5sum)"
export CCACHE_DIR="$dir" CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK="string:${check%% *}"
exec ccache "$@"
