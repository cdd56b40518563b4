// Bookkeeping that message profilers should leave out: MPI_Pcontrol(0) when the outermost
// such region starts and MPI_Pcontrol(1) when it ends (the MPI standard's levels for
// "profiling off" and "on"). pxq brackets its own placement exchange, timer barriers and
// reductions and traffic gathers with it, so a profile holds the application's messages
// only; any MPI program can mark its own regions the same way.
#pragma once

#include <mpi.h>

namespace pxq::comm {

class Uncounted {
 public:
  Uncounted() {
    if (depth()++ == 0) MPI_Pcontrol(0);
  }
  ~Uncounted() {
    if (--depth() == 0) MPI_Pcontrol(1);
  }
  Uncounted(const Uncounted&) = delete;
  Uncounted& operator=(const Uncounted&) = delete;

 private:
  static int& depth() {
    static thread_local int d = 0;
    return d;
  }
};

}  // namespace pxq::comm
