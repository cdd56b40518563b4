// Unit-test main: starts every backend's runtime (Kokkos, when built) around every test.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pxq/kernels/backend.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
#ifdef GTEST_FLAG_GET
  const bool listing = GTEST_FLAG_GET(list_tests);
#else
  const bool listing = ::testing::GTEST_FLAG(list_tests);
#endif
  // CTest discovers the tests from this list: no runtime started, so nothing but the list is
  // printed (Kokkos's start-up warnings were taken for three tests).
  if (listing) return RUN_ALL_TESTS();
  std::vector<std::unique_ptr<pxq::kernels::ScopedRuntime>> runtimes;
  for (const auto& b : pxq::kernels::available_backends())
    runtimes.push_back(std::make_unique<pxq::kernels::ScopedRuntime>(b, 2));
  return RUN_ALL_TESTS();
}
