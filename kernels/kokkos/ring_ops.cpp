// Kokkos executor for the ring update: one worker per thread of Kokkos::OpenMP.
#include <Kokkos_Core.hpp>

#include "pxq/kernels/ring_update.hpp"

namespace pxq::kernels {

void ring_passes_workers_kokkos(double* const* blocks, int workers, std::size_t begin, std::size_t end,
                                const RingParams& p) {
  using Policy = Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::Schedule<Kokkos::Static>>;
  const std::size_t n = end - begin;
  Kokkos::parallel_for("pxq::ring_passes", Policy(0, workers),
                       [=](const int w) { ring_passes(blocks[w] + begin, n, p); });
  Kokkos::fence();
}

PXQ_JOIN(RingFamily, "kokkos", ring_passes_workers_kokkos);

}  // namespace pxq::kernels
