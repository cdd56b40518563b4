// The MG set-up: class table, NAS's process grid and levels, and the charges of the
// right-hand side, which must not depend on how the grid is split.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "mg_problem.hpp"
#include "pxq/kernels/nas_random.hpp"

namespace {

using namespace pxq::mg;

TEST(MgProblem, ClassesAndErrors) {
  EXPECT_EQ(mg_class("s").nx, 32);
  EXPECT_EQ(mg_class("A").nit, 4);
  EXPECT_EQ(mg_class("B").nit, 20);
  EXPECT_EQ(mg_class("C").lt, 9);
  EXPECT_DOUBLE_EQ(mg_class("B").smoother.w[0], -3.0 / 17.0);
  EXPECT_DOUBLE_EQ(mg_class("W").smoother.w[0], -3.0 / 8.0);
  EXPECT_DOUBLE_EQ(nas_operation_count(mg_class("S")), 58.0 * 4 * 32 * 32 * 32);
  try {
    mg_class("D");
    FAIL() << "class D accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use S, W, A, B or C"), std::string::npos);
  }
  try {
    make_proc_grid(mg_class("S"), 12, 0);
    FAIL() << "12 processes accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("got 12: use 8 or 16"), std::string::npos) << e.what();
  }
  try {
    make_proc_grid(mg_class("S"), 65536, 0);
    FAIL() << "65536 processes accepted for 32^3";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use at most 32768"), std::string::npos) << e.what();
  }
}

TEST(MgProblem, ProcessGridSplitsAsNas) {
  const auto& s = mg_class("S");
  const std::vector<std::pair<int, std::array<int, 3>>> want = {{1, {1, 1, 1}}, {2, {1, 1, 2}},  {4, {1, 2, 2}},
                                                                {8, {2, 2, 2}}, {16, {2, 2, 4}}, {32, {2, 4, 4}}};
  for (const auto& [p, pi] : want) {
    const ProcGrid g = make_proc_grid(s, p, p - 1);
    EXPECT_EQ(g.pi, pi) << p;
    EXPECT_EQ(g.rank_of(g.idi), p - 1) << p;
  }
}

TEST(MgProblem, LevelsTileTheGridAndFindTheirNeighbours) {
  const auto& s = mg_class("S");
  for (int p : {1, 2, 4, 8, 16, 32}) {
    std::vector<std::vector<Level>> all;
    all.reserve(static_cast<std::size_t>(p));
    for (int rank = 0; rank < p; ++rank) all.push_back(make_levels(s, make_proc_grid(s, p, rank)));
    for (int k = 1; k <= s.lt; ++k) {
      const Level& first = all[0][static_cast<std::size_t>(k)];
      EXPECT_EQ(first.ng, 1 << k);
      std::size_t points = 0;
      for (int rank = 0; rank < p; ++rank) {
        const Level& L = all[static_cast<std::size_t>(rank)][static_cast<std::size_t>(k)];
        EXPECT_EQ(L.distributed, first.distributed);
        points += L.interior();
        for (int ax = 0; ax < 3; ++ax) {
          EXPECT_EQ(L.box.n1 - 2, L.extent[0]);
          const int lo = L.neighbours.lower[static_cast<std::size_t>(ax)];
          const int hi = L.neighbours.upper[static_cast<std::size_t>(ax)];
          if (!L.distributed) {
            EXPECT_EQ(lo, rank);
            EXPECT_EQ(hi, rank);
            continue;
          }
          // The neighbour's block starts right after this one (periodically).
          const Level& up = all[static_cast<std::size_t>(hi)][static_cast<std::size_t>(k)];
          const std::size_t a = static_cast<std::size_t>(ax);
          EXPECT_EQ(up.offset[a], (L.offset[a] + L.extent[a]) % L.ng) << p << " " << k << " " << ax;
          EXPECT_EQ(all[static_cast<std::size_t>(lo)][static_cast<std::size_t>(k)].neighbours.upper[a], rank);
        }
      }
      // Distributed levels split the points; replicated ones give every rank the whole grid.
      const std::size_t whole = static_cast<std::size_t>(first.ng) * first.ng * first.ng;
      EXPECT_EQ(points, first.distributed ? whole : whole * static_cast<std::size_t>(p)) << p << " " << k;
    }
  }
  // 16 processes (2 x 2 x 4) cannot split the 2^3 coarsest grid along i3.
  EXPECT_FALSE(make_levels(s, make_proc_grid(s, 16, 0))[1].distributed);
  EXPECT_TRUE(make_levels(s, make_proc_grid(s, 16, 0))[2].distributed);
}

// Brute force over the whole class S field.
Charges brute_force(const MgClass& c) {
  std::vector<Candidate> all;
  pxq::kernels::NasRandom rng;
  const std::int64_t n = static_cast<std::int64_t>(c.nx) * c.nx * c.nx;
  for (std::int64_t m = 0; m < n; ++m) all.push_back({rng.next(), m});
  auto by_value = [](const Candidate& a, const Candidate& b) { return a.value < b.value; };
  std::sort(all.begin(), all.end(), by_value);
  Charges ch;
  for (int i = 0; i < kCharges; ++i) {
    ch.minus.push_back(all[static_cast<std::size_t>(i)].index);
    ch.plus.push_back(all[all.size() - 1 - static_cast<std::size_t>(i)].index);
  }
  return ch;
}

TEST(MgProblem, ChargesAreTheExtremesOfTheFieldWhateverTheSplit) {
  const auto& s = mg_class("S");
  const Charges want = brute_force(s);
  for (int p : {1, 2, 8, 32}) {
    std::vector<Candidate> largest, smallest;
    for (int rank = 0; rank < p; ++rank) {
      const auto levels = make_levels(s, make_proc_grid(s, p, rank));
      const Extremes ex = local_extremes(s, levels[static_cast<std::size_t>(s.lt)]);
      largest.insert(largest.end(), ex.largest.begin(), ex.largest.end());
      smallest.insert(smallest.end(), ex.smallest.begin(), ex.smallest.end());
    }
    const Charges got = select_charges(largest, smallest);
    EXPECT_EQ(got.plus, want.plus) << p;
    EXPECT_EQ(got.minus, want.minus) << p;
    // Placed: twenty points, +1 ten times and -1 ten times over all blocks.
    int plus = 0, minus = 0;
    for (int rank = 0; rank < p; ++rank) {
      const auto levels = make_levels(s, make_proc_grid(s, p, rank));
      const Level& top = levels[static_cast<std::size_t>(s.lt)];
      std::vector<double> v(top.box.size(), 7.0);
      place_charges(got, top, s.nx, v.data());
      for (double x : v) {
        plus += x == 1.0;
        minus += x == -1.0;
        EXPECT_TRUE(x == 0.0 || x == 1.0 || x == -1.0);
      }
    }
    EXPECT_EQ(plus, kCharges) << p;
    EXPECT_EQ(minus, kCharges) << p;
  }
}

}  // namespace
