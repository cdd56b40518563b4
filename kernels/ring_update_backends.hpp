// Private to kernels/: the per-backend executors behind ring_passes_workers.
#pragma once

#include "pxq/kernels/ring_update.hpp"

namespace pxq::kernels {
void ring_passes_workers_openmp(double* const* blocks, int workers, std::size_t begin,
                                std::size_t end, const RingParams& p);
void ring_passes_workers_kokkos(double* const* blocks, int workers, std::size_t begin,
                                std::size_t end, const RingParams& p);
}  // namespace pxq::kernels
