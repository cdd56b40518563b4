"""An invalid MPI call inside a miniapp ends the job with exit code 3 and the MPI error named
(run_miniapp's fatal error handler), on 1 and 2 ranks.

usage: check_mpi_error.py PROGRAM MPIRUN"""

import subprocess
import sys


def main() -> int:
    program, mpirun = sys.argv[1], sys.argv[2]
    failures = []
    for ranks in (1, 2):
        p = subprocess.run(
            [mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", program],
            capture_output=True,
            text=True,
            timeout=120,
        )
        err = p.stdout + p.stderr
        if p.returncode != 3:
            failures.append(f"np {ranks}: exit {p.returncode}, expected 3")
        if "MPI error" not in err or "rank" not in err.lower():
            failures.append(f"np {ranks}: the MPI error is not named: {err[-500:]!r}")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    if not failures:
        print("PASS: an invalid MPI call exits 3 with the MPI error named, on 1 and 2 ranks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
