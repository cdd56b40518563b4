// Frozen reference for the ring update: plain scalar loops, the definition of correct.
#include "pxq/kernels/ring_update.hpp"

namespace pxq::kernels {

void ring_passes_reference(double* x, std::size_t n, const RingParams& p) {
  for (int pass = 0; pass < p.passes; ++pass)
    for (std::size_t i = 0; i < n; ++i)
      for (int f = 0; f < p.flops; ++f) x[i] = p.a * x[i] + p.b;
}

}  // namespace pxq::kernels
