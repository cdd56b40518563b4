// STREAM-style triad, the memory-bandwidth yardstick the ring's effective GB/s is read against.
#pragma once

#include <cstddef>

namespace pxq::kernels {

// a[i] = b[i] + s*c[i] over [0, n), OpenMP-parallel over `threads` threads.
void stream_triad(double* a, const double* b, const double* c, double s, std::size_t n, int threads);

}  // namespace pxq::kernels
