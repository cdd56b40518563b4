// The POP efficiency breakdown: its factors from synthetic per-rank times, a balanced run, a
// deliberately unbalanced one, and one that only waits; the factors multiply to the parallel
// efficiency, mean useful time over the runtime.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "pxq/common/efficiency.hpp"

namespace {

using pxq::common::efficiency_of;

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

TEST(Efficiency, BalancedRanksLoseOnlyTheirCommunication) {
  // Four ranks, 10 s each, 2 s of it in MPI: balanced; 80% of the time is useful.
  const auto e = efficiency_of({10, 10, 10, 10}, {2, 2, 2, 2});
  EXPECT_DOUBLE_EQ(e.load_balance, 1.0);
  EXPECT_DOUBLE_EQ(e.communication, 0.8);
  EXPECT_DOUBLE_EQ(e.parallel, 0.8);
}

TEST(Efficiency, AnUnbalancedRunShowsInLoadBalanceAndTheProductHolds) {
  // Rank 0 computes 9 s, the others 3 s and wait 6 s for it in MPI.
  const std::vector<double> elapsed{10, 10, 10, 10}, comm{1, 7, 7, 7};
  const auto e = efficiency_of(elapsed, comm);
  EXPECT_DOUBLE_EQ(e.useful[0], 9.0);
  EXPECT_DOUBLE_EQ(e.load_balance, mean({9, 3, 3, 3}) / 9.0);  // 0.5
  EXPECT_DOUBLE_EQ(e.communication, 0.9);
  EXPECT_NEAR(e.parallel, e.load_balance * e.communication, 1e-15);
  EXPECT_NEAR(e.parallel, mean(e.useful) / 10.0, 1e-15);
}

TEST(Efficiency, TheRuntimeIsTheSlowestRanks) {
  const auto e = efficiency_of({8, 10}, {0, 2});
  EXPECT_DOUBLE_EQ(e.communication, 8.0 / 10.0);
  EXPECT_DOUBLE_EQ(e.load_balance, 1.0);
}

TEST(Efficiency, NothingUsefulIsNothingToJudge) {
  const auto e = efficiency_of({1, 1}, {1, 1});
  EXPECT_EQ(e.parallel, 0.0);
  EXPECT_EQ(efficiency_of({}, {}).parallel, 0.0);
}

}  // namespace
