#!/bin/sh
# pxq from an install tree (cmake --install): the driver in PREFIX/share/pxq/driver, on the
# Python given by PXQ_PYTHON (default python3), which needs the driver's requirements
# (pip install PREFIX/share/pxq/driver installs the driver and them).
prefix=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd) || exit 3
python=${PXQ_PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || {
  echo "pxq: error: $python not found: install Python 3.10 or later, or set PXQ_PYTHON" >&2
  exit 2
}
PYTHONPATH="$prefix/share/pxq/driver${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m pxq "$@"
