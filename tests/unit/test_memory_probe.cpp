// The stride probe's schedules, kernels and cache-step reading.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "pxq/probes/memory.hpp"

using namespace pxq::probes;

TEST(StrideSchedule, SizesArePowersOfTwoAndTheirMidpoints) {
  EXPECT_EQ(stride_sizes(4096, 65536, 1), (std::vector<std::size_t>{4096, 8192, 16384, 32768, 65536}));
  EXPECT_EQ(stride_sizes(4096, 32768, 2), (std::vector<std::size_t>{4096, 6144, 8192, 12288, 16384, 24576, 32768}));
  // A 48 KiB L1 and a 96 MiB L3 fall on points.
  const auto big = stride_sizes(4096, std::size_t{256} << 20, 2);
  EXPECT_NE(std::find(big.begin(), big.end(), std::size_t{48} << 10), big.end());
  EXPECT_NE(std::find(big.begin(), big.end(), std::size_t{96} << 20), big.end());
  EXPECT_EQ(big.back(), std::size_t{256} << 20);
  EXPECT_THROW(stride_sizes(8, 4096, 1), std::invalid_argument);
  EXPECT_THROW(stride_sizes(8192, 4096, 1), std::invalid_argument);
  EXPECT_THROW(stride_sizes(4096, 8192, 3), std::invalid_argument);
}

TEST(StrideSchedule, StridesRunFromOneDoubleToHalfTheArray) {
  EXPECT_EQ(strides_for(64), (std::vector<std::size_t>{8, 16, 32}));
  EXPECT_EQ(strides_for(6144).back(), 2048u);  // 4096 > 6144 / 2
  EXPECT_EQ(strides_for(4096, 512), (std::vector<std::size_t>{512}));
  EXPECT_THROW(strides_for(4096, 4096), std::invalid_argument);  // larger than half the array
  EXPECT_THROW(strides_for(4096, 12), std::invalid_argument);    // not whole doubles
}

TEST(StrideSchedule, SweepsReachTheAccessCountAndZeroIsRefused) {
  EXPECT_EQ(sweeps_for(4096, 8, 512), 1u);  // 512 accesses per sweep
  EXPECT_EQ(sweeps_for(4096, 8, 513), 2u);
  EXPECT_EQ(sweeps_for(4096, 2048, 1000), 500u);  // 2 per sweep
  EXPECT_THROW(sweeps_for(4096, 8, 0), std::invalid_argument);
}

TEST(StrideKernel, TouchesEveryStrideThElementOncePerSweep) {
  std::vector<double> a(100, 0.0);
  EXPECT_EQ(stride_kernel(a.data(), a.size(), 8, 3), 13u * 3);  // 0, 8, ..., 96
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], i % 8 == 0 ? 3.0 : 0.0) << i;
  std::vector<double> b(37, 1.0);
  block_kernel(b.data(), b.size(), 4);
  for (double x : b) EXPECT_EQ(x, 5.0);
}

TEST(CacheSteps, FindsHeldRisesMergesGradualOnesAndIgnoresASlowPoint) {
  const std::vector<std::size_t> sizes = {1, 2, 4, 8, 16, 32, 64, 128};
  // A jump at 2 -> 4, a single slow point at 16, a gradual rise 32 -> 64 -> 128.
  const std::vector<double> ns = {1.0, 1.0, 2.0, 2.0, 5.0, 2.1, 3.0, 4.5};
  const auto steps = detect_steps(sizes, ns, 1.2);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].fits, 2u);
  EXPECT_EQ(steps[0].spills, 4u);
  EXPECT_EQ(steps[1].fits, 32u);
  EXPECT_EQ(steps[1].spills, 128u);
  EXPECT_DOUBLE_EQ(steps[1].after_ns, 4.5);
  EXPECT_THROW(detect_steps(sizes, {1.0}, 1.2), std::invalid_argument);
  EXPECT_THROW(detect_steps(sizes, ns, 1.0), std::invalid_argument);
}

TEST(CacheSteps, MatchesCachesToTheNearestStepInOctaves) {
  const std::vector<Step> steps = {{32768, 65536, 1, 2}, {std::size_t{32} << 20, std::size_t{48} << 20, 3, 4}};
  const auto m = match_caches(steps, {{"L1d", 49152}, {"L3", std::size_t{96} << 20}, {"L2", 0}}, 0.5);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_TRUE(m[0].found);
  EXPECT_DOUBLE_EQ(m[0].octaves, 0.0);
  EXPECT_FALSE(m[1].found);  // 96M is one octave above 48M
  EXPECT_NEAR(m[1].octaves, 1.0, 1e-12);
  EXPECT_FALSE(m[2].found);  // no such cache
}

TEST(Bandwidth, StreamKernelsCountTheirBytesAndComputeStreamsFormulas) {
  EXPECT_DOUBLE_EQ(stream_bytes(StreamKernel::copy, 10), 160.0);
  EXPECT_DOUBLE_EQ(stream_bytes(StreamKernel::triad, 10), 240.0);
  EXPECT_EQ(stream_kernel_named("add"), StreamKernel::add);
  EXPECT_THROW(stream_kernel_named("fma"), std::invalid_argument);
  std::vector<double> a(5, 1.0), b(5, 2.0), c(5, 0.0);
  stream_pass(StreamKernel::copy, a.data(), b.data(), c.data(), 0, 5);   // c = a
  stream_pass(StreamKernel::scale, a.data(), b.data(), c.data(), 0, 5);  // b = 3 c
  stream_pass(StreamKernel::add, a.data(), b.data(), c.data(), 1, 5);    // c = a + b
  stream_pass(StreamKernel::triad, a.data(), b.data(), c.data(), 0, 5);  // a = b + 3 c
  EXPECT_EQ(c[0], 1.0);
  EXPECT_EQ(c[1], 4.0);
  EXPECT_EQ(a[0], 3.0 + 3.0 * 1.0);
  EXPECT_EQ(a[4], 3.0 + 3.0 * 4.0);
}

TEST(Bandwidth, SaturationIsTheFewestCoresNearTheBestUnlessStillScaling) {
  EXPECT_EQ(saturation_point({10, 18, 20, 20.5}, 0.9), 3);  // 18 < 18.45 <= 20
  EXPECT_EQ(saturation_point({10, 19, 19.5, 19}, 0.9), 2);
  EXPECT_FALSE(still_scaling({10, 18, 20, 20.5}, 0.9));
  EXPECT_TRUE(still_scaling({10, 19.5}, 0.9));  // 97.5% of perfect scaling
  EXPECT_FALSE(still_scaling({10}, 0.9));
  EXPECT_THROW(saturation_point({}, 0.9), std::invalid_argument);
  EXPECT_THROW(saturation_point({1}, 0), std::invalid_argument);
}
