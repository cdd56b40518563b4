// STREAM-style triad with OpenMP: static schedule so each thread touches the pages it
// first-touched.
#include "pxq/kernels/stream.hpp"

namespace pxq::kernels {

void stream_triad(double* a, const double* b, const double* c, double s, std::size_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace pxq::kernels
