// The CG problem set-up: NAS's process grid and the distributed matrix generator.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cg_problem.hpp"

namespace {

using pxq::cg::CgGrid;
using pxq::cg::make_grid;

std::string error_of(int na, int nprocs) {
  try {
    make_grid(na, nprocs, 0);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

class CgGridShapes : public ::testing::TestWithParam<std::pair<int, int>> {};

// For every rank: the process row covers all columns exactly once, the process rows cover
// all rows, the transpose partner's piece of its row sum is exactly this rank's columns,
// and reduction partners pair up within the process row.
TEST_P(CgGridShapes, BlocksPartitionAndPartnersLineUp) {
  const auto [na, np] = GetParam();
  std::vector<CgGrid> g;
  g.reserve(static_cast<std::size_t>(np));
  for (int r = 0; r < np; ++r) g.push_back(make_grid(na, np, r));
  const int npcols = g[0].npcols, nprows = g[0].nprows;
  EXPECT_EQ(npcols * nprows, np);
  EXPECT_TRUE(npcols == nprows || npcols == 2 * nprows);
  for (int row = 0; row < nprows; ++row) {
    std::vector<int> covered(static_cast<std::size_t>(na), 0);
    for (int c = 0; c < npcols; ++c) {
      const CgGrid& x =
          g[static_cast<std::size_t>(row) * static_cast<std::size_t>(npcols) + static_cast<std::size_t>(c)];
      EXPECT_EQ(x.proc_row, row);
      EXPECT_GT(x.ncols(), 0);
      for (int j = x.col_begin; j < x.col_end; ++j) ++covered[static_cast<std::size_t>(j)];
      EXPECT_EQ(x.row_begin, g[static_cast<std::size_t>(row * npcols)].row_begin);
    }
    for (int j = 0; j < na; ++j) ASSERT_EQ(covered[static_cast<std::size_t>(j)], 1) << "column " << j;
  }
  int next_row = 0;
  for (int row = 0; row < nprows; ++row) {
    EXPECT_EQ(g[static_cast<std::size_t>(row) * static_cast<std::size_t>(npcols)].row_begin, next_row);
    next_row = g[static_cast<std::size_t>(row) * static_cast<std::size_t>(npcols)].row_end;
  }
  EXPECT_EQ(next_row, na);
  for (const CgGrid& x : g) {
    const CgGrid& t = g[static_cast<std::size_t>(x.exch_proc)];
    EXPECT_EQ(t.exch_proc, x.rank) << "transpose partner of " << x.rank;
    EXPECT_EQ(t.row_begin + t.send_start, x.col_begin) << "rank " << x.rank;
    EXPECT_EQ(t.send_len, x.ncols()) << "rank " << x.rank;
    EXPECT_EQ(x.exch_recv_len, x.ncols());
    EXPECT_EQ(static_cast<int>(x.steps.size()), static_cast<int>(x.scalar_partners.size()));
    for (const auto& s : x.steps) {
      const CgGrid& p = g[static_cast<std::size_t>(s.partner)];
      EXPECT_EQ(p.proc_row, x.proc_row);
      EXPECT_NE(p.rank, x.rank);
      // What the partner sends in the matching step is what this rank receives.
      bool matched = false;
      for (const auto& ps : p.steps)
        if (ps.partner == x.rank) {
          matched = true;
          EXPECT_EQ(ps.send_len, s.recv_len);
          EXPECT_EQ(ps.send_start, s.recv_start);
        }
      EXPECT_TRUE(matched);
      EXPECT_LE(s.recv_start + s.recv_len, x.nrows());
      EXPECT_LE(s.send_start + s.send_len, x.nrows());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EvenAndUneven, CgGridShapes,
                         ::testing::Values(std::make_pair(1400, 1), std::make_pair(1400, 2), std::make_pair(1400, 4),
                                           std::make_pair(1400, 8), std::make_pair(1400, 16), std::make_pair(75000, 8),
                                           std::make_pair(75000, 32), std::make_pair(1001, 2), std::make_pair(1001, 8),
                                           std::make_pair(1001, 64)));

TEST(CgGrid, NonPowerOfTwoNamesTheNearestCounts) {
  EXPECT_NE(error_of(1400, 3).find("use 2 or 4"), std::string::npos) << error_of(1400, 3);
  EXPECT_NE(error_of(1400, 6).find("use 4 or 8"), std::string::npos);
  EXPECT_NE(error_of(1400, 12).find("use 8 or 16"), std::string::npos);
  EXPECT_NE(error_of(1400, 0).find("power-of-two"), std::string::npos);
}

TEST(CgGrid, TooManyProcessesNamesTheLargestCount) {
  // 8 rows: 64 processes form an 8 x 8 grid with one column each; 128 would be 8 x 16,
  // whose column halves would be empty.
  const std::string e = error_of(8, 128);
  EXPECT_NE(e.find("use at most 64"), std::string::npos) << e;
  EXPECT_EQ(error_of(8, 64), "");
}

TEST(CgClass, KnowsTheNasClassesAndRejectsOthers) {
  EXPECT_EQ(pxq::cg::cg_class("S").na, 1400);
  EXPECT_EQ(pxq::cg::cg_class("a").na, 14000);
  EXPECT_EQ(pxq::cg::cg_class("C").niter, 75);
  EXPECT_THROW(pxq::cg::cg_class("Q"), std::invalid_argument);
  EXPECT_THROW(pxq::cg::cg_class("AA"), std::invalid_argument);
  EXPECT_THROW(pxq::cg::cg_class(""), std::invalid_argument);
}

TEST(CgClass, OperationCountIsNas) {
  // 2 * niter * na * (3 + nz + 25 (5 + nz) + 3), nz = nonzer (nonzer + 1)
  EXPECT_DOUBLE_EQ(pxq::cg::nas_operation_count(pxq::cg::cg_class("S")),
                   2.0 * 15 * 1400 * (3 + 56 + 25 * (5 + 56) + 3));
}

// Entries of a distributed matrix, by global (row, column).
std::map<std::pair<int, int>, double> entries(const pxq::kernels::CsrMatrix& m, const CgGrid& g) {
  std::map<std::pair<int, int>, double> out;
  for (int i = 0; i < m.nrows; ++i)
    for (std::int64_t k = m.rowptr[i]; k < m.rowptr[i + 1]; ++k) {
      EXPECT_GE(m.col[k], 0);
      EXPECT_LT(m.col[k], g.ncols());
      const auto key = std::make_pair(g.row_begin + i, g.col_begin + m.col[k]);
      EXPECT_EQ(out.count(key), 0u) << "duplicate entry";
      out[key] = m.val[k];
    }
  return out;
}

// The blocks of 2 and 8 processes put together are the 1-process matrix, entry for entry
// (each entry sums the same contributions in the same order).
TEST(CgMatrix, BlocksAssembleToTheWholeMatrix) {
  const auto& cls = pxq::cg::cg_class("S");
  const CgGrid g1 = make_grid(cls.na, 1, 0);
  const auto whole = entries(pxq::cg::make_matrix(cls, g1), g1);
  EXPECT_GT(whole.size(), static_cast<std::size_t>(cls.na) * cls.nonzer);
  for (int np : {2, 8}) {
    std::map<std::pair<int, int>, double> parts;
    for (int r = 0; r < np; ++r) {
      const CgGrid g = make_grid(cls.na, np, r);
      for (const auto& [k, v] : entries(pxq::cg::make_matrix(cls, g), g)) parts[k] = v;
    }
    ASSERT_EQ(parts.size(), whole.size()) << np << " processes";
    for (const auto& [k, v] : whole) ASSERT_EQ(parts.at(k), v) << np << " processes";
  }
  // Symmetric (up to the rounding of v_i v_j against v_j v_i), with the shifted diagonal.
  for (const auto& [k, v] : whole) {
    const double t = whole.at({k.second, k.first});
    EXPECT_NEAR(v, t, 1e-15 * std::abs(v) + 1e-300);
  }
  for (int i = 0; i < cls.na; ++i) EXPECT_LT(whole.at({i, i}), 0.0);  // rcond - shift dominates
}

}  // namespace
