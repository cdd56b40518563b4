// Lab 3, solution: every rank's copy starts after one barrier, so all copies run at once.
#include "stride.hpp"

namespace stride {

Window run_copies(const lab::World& w, std::uint64_t* array, std::size_t bytes, std::size_t stride, int reps) {
  Window win;
  MPI_Barrier(w.comm);
  win.ran = true;
  win.start = MPI_Wtime();
  sweep(array, bytes, stride, reps);
  win.end = MPI_Wtime();
  return win;
}

}  // namespace stride
