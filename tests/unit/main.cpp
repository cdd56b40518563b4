// Unit-test main: starts every backend's runtime (Kokkos, when built) around every test.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pxq/kernels/backend.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::vector<std::unique_ptr<pxq::kernels::ScopedRuntime>> runtimes;
  for (const auto& b : pxq::kernels::available_backends())
    runtimes.push_back(std::make_unique<pxq::kernels::ScopedRuntime>(b, 2));
  return RUN_ALL_TESTS();
}
