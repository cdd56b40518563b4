// Lab 5, solution: the rows of a step shared among the rank's threads; only the master
// thread calls MPI, outside the parallel loop, so MPI_THREAD_FUNNELED is enough.
#include <algorithm>
#include <utility>

#include "heat.hpp"

namespace heat {

int thread_level() { return MPI_THREAD_FUNNELED; }

double step(Grid& g, const lab::World& w) {
  exchange_halos(g, w);
  double change = 0;
#pragma omp parallel for reduction(max : change) schedule(static)
  for (int r = 1; r <= g.rows; ++r) change = std::max(change, relax_row(g, r));
  std::swap(g.u, g.next);
  return change;
}

}  // namespace heat
