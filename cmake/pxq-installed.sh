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
# The driver's requirements, looked up without importing them (cheap on every call).
missing=$("$python" -c 'import importlib.util as u, sys
names = ("rich", "matplotlib", "jsonschema", "scipy", "numpy")
print(" ".join(n for n in names if u.find_spec(n) is None))' 2>/dev/null) || missing="(cannot run $python)"
if [ -n "$missing" ]; then
  echo "pxq: error: $python lacks the driver's requirements: $missing." \
    "Install them (pip install $prefix/share/pxq/driver) or set PXQ_PYTHON to a Python that has them" >&2
  exit 2
fi
PYTHONPATH="$prefix/share/pxq/driver${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m pxq "$@"
