// The probes' statistics on samples whose answers are known by hand: percentiles by linear
// interpolation, the tail share, and clusters recovered exactly from synthetic call times.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "pxq/probes/stats.hpp"

namespace {

using pxq::probes::clusters_1d;
using pxq::probes::percentile;
using pxq::probes::tail_share;

TEST(ProbeStats, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> v{5, 1, 4, 2, 3};  // sorted 1..5
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 3);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 4.6);  // position 3.6
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  std::vector<double> hundred;
  for (int i = 1; i <= 101; ++i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(percentile(hundred, 95), 96);
  EXPECT_DOUBLE_EQ(percentile(hundred, 99), 100);
  EXPECT_THROW(percentile({}, 50), std::invalid_argument);
  EXPECT_THROW(percentile(v, 101), std::invalid_argument);
}

TEST(ProbeStats, TailShareIsTheSlowestCallsShareOfTheTotal) {
  std::vector<double> v(100, 1.0);  // 95 calls of 1 and 5 of 20: total 195, tail 100
  for (int i = 0; i < 5; ++i) v[static_cast<std::size_t>(i) * 17] = 20.0;
  EXPECT_DOUBLE_EQ(tail_share(v, 0.05), 100.0 / 195.0);
  EXPECT_DOUBLE_EQ(tail_share(v, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(tail_share({3.0, 1.0}, 0.01), 0.75);  // at least one call
  EXPECT_THROW(tail_share(v, 0.0), std::invalid_argument);
  EXPECT_THROW(tail_share({}, 0.05), std::invalid_argument);
  EXPECT_THROW(tail_share({0.0, 0.0}, 0.5), std::invalid_argument);
}

TEST(ProbeStats, ClustersRecoverKnownPopulations) {
  // 900 calls near 10 us, 90 near 100 us and 10 near 1 ms, each spread by +-10%, shuffled.
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  std::vector<double> v;
  v.reserve(900);
  for (int i = 0; i < 900; ++i) v.push_back(10e-6 * jitter(gen));
  for (int i = 0; i < 90; ++i) v.push_back(100e-6 * jitter(gen));
  for (int i = 0; i < 10; ++i) v.push_back(1e-3 * jitter(gen));
  std::shuffle(v.begin(), v.end(), gen);
  const auto c = clusters_1d(v, 1.5);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].count, 900u);
  EXPECT_EQ(c[1].count, 90u);
  EXPECT_EQ(c[2].count, 10u);
  EXPECT_NEAR(c[0].centre, 10e-6, 1e-6);
  EXPECT_NEAR(c[1].centre, 100e-6, 10e-6);
  EXPECT_NEAR(c[2].centre, 1e-3, 0.1e-3);
  EXPECT_GE(c[0].min, 9e-6);
  EXPECT_LE(c[2].max, 1.1e-3);
  // One population stays one cluster; a wider gap ratio merges nothing new here.
  EXPECT_EQ(clusters_1d(std::vector<double>(v.begin(), v.begin() + 1), 1.5).size(), 1u);
  EXPECT_EQ(clusters_1d({1.0, 1.2, 1.3, 1.45}, 1.5).size(), 1u);
  EXPECT_EQ(clusters_1d({1.0, 2.0, 4.0}, 1.5).size(), 3u);
  EXPECT_THROW(clusters_1d({1.0, -1.0}, 1.5), std::invalid_argument);
  EXPECT_THROW(clusters_1d({1.0}, 1.0), std::invalid_argument);
}

}  // namespace
