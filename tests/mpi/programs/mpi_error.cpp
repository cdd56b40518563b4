// A miniapp whose run makes an invalid MPI call (a send to a rank that does not exist), for
// the check that run_miniapp's error handler makes every MPI error fatal: the rank names
// the error and the job exits 3, so no record can claim the run went well.
#include <mpi.h>

#include "pxq/common/app.hpp"

int main(int argc, char** argv) {
  pxq::cli::App app{"pxq-mpi-error: an invalid MPI call", "pxq-mpi-error"};
  return pxq::common::run_miniapp(argc, argv, app, [](const pxq::common::MpiWorld& w) {
    double x = 1.0;
    MPI_Send(&x, 1, MPI_DOUBLE, w.size, 0, w.comm);  // rank w.size does not exist
    return pxq::common::kExitOk;                     // never reached: the handler aborts
  });
}
