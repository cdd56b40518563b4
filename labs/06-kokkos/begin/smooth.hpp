// Lab 6: port a kernel to Kokkos. smooth() makes one step of a 1-D diffusion on x into y and
// returns the largest |y(i) - x(i)|. It is called with Space = Kokkos::Serial and with
// Space = Kokkos::OpenMP; as written it ignores Space and runs on one thread either way.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>

namespace smooth {

template <class Space>
double step(Kokkos::View<const double*> x, Kokkos::View<double*> y, double c) {
  const int n = static_cast<int>(x.extent(0));
  // LAB 1: make this loop a Kokkos::parallel_for over Kokkos::RangePolicy<Space>(1, n - 1)
  // with a KOKKOS_LAMBDA(const int i) body.
  for (int i = 1; i < n - 1; ++i) y(i) = x(i) + c * (x(i - 1) - 2.0 * x(i) + x(i + 1));
  // LAB 2: make this one a Kokkos::parallel_reduce with a Kokkos::Max<double> reducer: the
  // largest change does not depend on the order, so the result stays exact.
  double change = 0;
  for (int i = 1; i < n - 1; ++i) change = std::max(change, std::fabs(y(i) - x(i)));
  return change;
}

}  // namespace smooth
