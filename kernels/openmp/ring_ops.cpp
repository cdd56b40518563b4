// OpenMP executor for the ring update: one worker per OpenMP thread.
#include "pxq/kernels/ring_update.hpp"

namespace pxq::kernels {

void ring_passes_workers_openmp(double* const* blocks, int workers, std::size_t begin, std::size_t end,
                                const RingParams& p) {
  if (workers == 1) {  // no fork/join for a single worker
    ring_passes(blocks[0] + begin, end - begin, p);
    return;
  }
#pragma omp parallel for num_threads(workers) schedule(static, 1)
  for (int w = 0; w < workers; ++w) ring_passes(blocks[w] + begin, end - begin, p);
}

PXQ_JOIN(RingFamily, "openmp", ring_passes_workers_openmp);

}  // namespace pxq::kernels
