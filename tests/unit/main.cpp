// Unit-test main: starts the Kokkos runtime (when built) around every test.
#include <gtest/gtest.h>

#include "pxq/kernels/backend.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const auto backend = pxq::kernels::backend_available(pxq::kernels::Backend::kokkos) ? pxq::kernels::Backend::kokkos
                                                                                      : pxq::kernels::Backend::openmp;
  pxq::kernels::ScopedRuntime runtime(backend, 2);
  return RUN_ALL_TESTS();
}
