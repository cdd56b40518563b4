// The CG kernels: every executor (OpenMP with 1 and 2 threads, tiled with tiles that do and
// do not divide the vectors, Kokkos) against the frozen single-thread reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "expect_close.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/cg_ops.hpp"
#include "pxq/kernels/sparse.hpp"

namespace {

using pxq::kernels::Backend;
using pxq::kernels::CsrMatrix;
using pxq::kernels::SymmetricCsr;

CsrMatrix random_matrix(int nrows, int ncols, int per_row, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> col(0, ncols - 1), len(0, per_row);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  CsrMatrix m;
  m.nrows = nrows;
  m.ncols = ncols;
  m.rowptr.push_back(0);
  for (int i = 0; i < nrows; ++i) {
    const int n = len(gen);  // some rows empty
    for (int k = 0; k < n; ++k) {
      m.col.push_back(col(gen));
      m.val.push_back(val(gen));
    }
    m.rowptr.push_back(static_cast<std::int64_t>(m.val.size()));
  }
  return m;
}

// A symmetric n x n matrix: `pairs` random off-diagonal entries with their mirrors (the
// mirror's value off by `mirror_rel` relative, as rounding leaves NAS's), a diagonal on
// every other row, rows in a shuffled column order and some rows empty.
CsrMatrix symmetric_matrix(int n, int pairs, unsigned seed, double mirror_rel = 0.0) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> idx(0, n - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::map<std::pair<int, int>, double> e;
  for (int k = 0; k < pairs; ++k) {
    const int i = idx(gen), j = idx(gen);
    if (i == j || i % 7 == 3 || j % 7 == 3) continue;  // rows 3, 10, ... stay empty
    const double v = val(gen);
    e[{i, j}] = v;
    e[{j, i}] = v * (1.0 + mirror_rel);
  }
  for (int i = 0; i < n; i += 2)
    if (i % 7 != 3) e[{i, i}] = 4.0 + val(gen);
  std::vector<std::vector<std::pair<int, double>>> rows(static_cast<std::size_t>(n));
  for (const auto& [ij, v] : e) rows[static_cast<std::size_t>(ij.first)].emplace_back(ij.second, v);
  CsrMatrix m;
  m.nrows = m.ncols = n;
  m.rowptr.push_back(0);
  for (auto& r : rows) {
    std::shuffle(r.begin(), r.end(), gen);
    for (const auto& [j, v] : r) {
      m.col.push_back(j);
      m.val.push_back(v);
    }
    m.rowptr.push_back(static_cast<std::int64_t>(m.val.size()));
  }
  return m;
}

std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = val(gen);
  return v;
}

struct Exec {
  Backend backend;
  int threads;
  std::size_t tile;  // elements (the executor takes bytes)
  std::string name;
};

std::vector<Exec> executors() {
  std::vector<Exec> out = {{"openmp", 1, 0, "openmp_t1"},
                           {"openmp", 2, 0, "openmp_t2"},
                           {"openmp", 1, 64, "openmp_t1_tile64"},
                           {"openmp", 2, 1000, "openmp_t2_tile1000"},
                           {"openmp", 2, 7, "openmp_t2_tile7"}};
  for (const auto& b : pxq::kernels::CgFamily::backends())  // every other backend that runs CG kernels
    if (b != "openmp") out.push_back({b, 2, 64, pxq::kernels::backend_name(b)});
  return out;
}

class CgKernels : public ::testing::TestWithParam<Exec> {};

TEST_P(CgKernels, PlainSweepsMatchTheReference) {
  const Exec e = GetParam();
  const auto ops = pxq::kernels::make_cg_ops(e.backend, e.threads, e.tile * sizeof(double));
  const auto ref = pxq::kernels::make_cg_ops_reference();
  const std::size_t n = 5003;  // not a multiple of any tile or thread count
  const CsrMatrix a = random_matrix(static_cast<int>(n), static_cast<int>(n), 40, 7);
  const auto x = random_vector(n, 1), y0 = random_vector(n, 2);

  std::vector<double> y(n), yr(n);
  ops->spmv(a, x.data(), y.data());
  ref->spmv(a, x.data(), yr.data());
  expect_close(y, yr, "spmv");

  EXPECT_NEAR(ops->dot(x.data(), y0.data(), n), ref->dot(x.data(), y0.data(), n), 1e-10);
  EXPECT_NEAR(ops->dist2(x.data(), y0.data(), n), ref->dist2(x.data(), y0.data(), n), 1e-10);
  const auto d2 = ops->dot2(x.data(), y0.data(), n), d2r = ref->dot2(x.data(), y0.data(), n);
  EXPECT_NEAR(d2.first, d2r.first, 1e-10);
  EXPECT_NEAR(d2.second, d2r.second, 1e-10);

  auto z = x, r = y0, zr = x, rr = y0;
  ops->update_zr(z.data(), r.data(), x.data(), y.data(), 0.37, n);
  ref->update_zr(zr.data(), rr.data(), x.data(), y.data(), 0.37, n);
  expect_close(z, zr, "update_zr z");
  expect_close(r, rr, "update_zr r");

  auto p = y0, pr = y0;
  ops->update_p(p.data(), x.data(), -1.25, n);
  ref->update_p(pr.data(), x.data(), -1.25, n);
  expect_close(p, pr, "update_p");

  ops->scale(p.data(), 3.0, x.data(), n);
  ref->scale(pr.data(), 3.0, x.data(), n);
  expect_close(p, pr, "scale");

  ops->add(p.data(), y0.data(), n);
  ref->add(pr.data(), y0.data(), n);
  expect_close(p, pr, "add");
}

TEST_P(CgKernels, FusedSweepsMatchThePlainSequence) {
  const Exec e = GetParam();
  const auto ops = pxq::kernels::make_cg_ops(e.backend, e.threads, e.tile * sizeof(double));
  const auto ref = pxq::kernels::make_cg_ops_reference();
  const std::size_t n = 3001;
  const auto x = random_vector(n, 3), qv = random_vector(n, 4);

  std::vector<double> q(n, 9), z(n, 9), r(n, 9), p(n, 9), q2(n, 8), z2(n, 8), r2(n, 8), p2(n, 8);
  const double rho = ops->start_norm(x.data(), q.data(), z.data(), r.data(), p.data(), n);
  ref->start(x.data(), q2.data(), z2.data(), r2.data(), p2.data(), n);
  EXPECT_NEAR(rho, ref->dot(r2.data(), r2.data(), n), 1e-10);
  expect_close(q, q2, "start q");
  expect_close(z, z2, "start z");
  expect_close(r, r2, "start r");
  expect_close(p, p2, "start p");

  const double rr = ops->update_zr_norm(z.data(), r.data(), x.data(), qv.data(), 0.81, n);
  ref->update_zr(z2.data(), r2.data(), x.data(), qv.data(), 0.81, n);
  EXPECT_NEAR(rr, ref->dot(r2.data(), r2.data(), n), 1e-10);
  expect_close(z, z2, "update_zr_norm z");
  expect_close(r, r2, "update_zr_norm r");
}

TEST_P(CgKernels, BlockedSpmvMatchesPlainForEveryWindow) {
  const Exec e = GetParam();
  const auto ops = pxq::kernels::make_cg_ops(e.backend, e.threads, e.tile * sizeof(double));
  const auto ref = pxq::kernels::make_cg_ops_reference();
  const int nrows = 777, ncols = 1234;
  const CsrMatrix a = random_matrix(nrows, ncols, 30, 11);
  const auto x = random_vector(ncols, 5), r = random_vector(ncols, 6);
  std::vector<double> want(nrows);
  ref->spmv(a, x.data(), want.data());
  for (int window : {1, 7, 100, 617, ncols, 5 * ncols}) {
    const auto b = pxq::kernels::block_columns(a, window);
    std::vector<double> y(nrows, 42.0);
    ops->spmv_blocked(b, x.data(), y.data());
    expect_close(y, want, "spmv_blocked window " + std::to_string(window));

    // p = r + beta p fused with y = A p.
    auto p = x, pr = x;
    std::vector<double> y2(nrows, -1.0), y2r(nrows);
    ops->update_p_spmv(b, p.data(), r.data(), 0.5, y2.data());
    ref->update_p(pr.data(), r.data(), 0.5, static_cast<std::size_t>(ncols));
    ref->spmv(a, pr.data(), y2r.data());
    expect_close(p, pr, "update_p_spmv p, window " + std::to_string(window));
    expect_close(y2, y2r, "update_p_spmv y, window " + std::to_string(window));
  }
}

TEST_P(CgKernels, TheUpperTriangleMultipliesAsTheWholeMatrix) {
  const Exec e = GetParam();
  const auto ops = pxq::kernels::make_cg_ops(e.backend, e.threads, e.tile * sizeof(double));
  const auto ref = pxq::kernels::make_cg_ops_reference();
  const int n = 4099;
  const CsrMatrix a = symmetric_matrix(n, 60000, 11);
  const SymmetricCsr s = pxq::kernels::upper_triangle(a, 0.0);
  std::vector<double> want(static_cast<std::size_t>(n)), want2(want);
  const auto x = random_vector(want.size(), 5), x2 = random_vector(want.size(), 6);
  ref->spmv(a, x.data(), want.data());
  ref->spmv(a, x2.data(), want2.data());
  std::vector<double> y(want.size(), 1e300), yr(want.size(), -1e300);  // every entry must be written
  ops->spmv_symmetric(s, x.data(), y.data());
  expect_close(y, want, "spmv_symmetric");
  ref->spmv_symmetric(s, x.data(), yr.data());
  expect_close(yr, want, "reference spmv_symmetric");
  ops->spmv_symmetric(s, x2.data(), y.data());  // the scratch vectors are cleared between calls
  expect_close(y, want2, "spmv_symmetric, second product");
}

INSTANTIATE_TEST_SUITE_P(Executors, CgKernels, ::testing::ValuesIn(executors()),
                         [](const auto& info) { return info.param.name; });

TEST(BlockedCsr, KeepsEveryEntryInItsWindow) {
  const CsrMatrix a = random_matrix(300, 500, 20, 2);
  const auto b = pxq::kernels::block_columns(a, 64);
  EXPECT_EQ(b.nblocks, 8);
  EXPECT_EQ(b.val.size(), a.val.size());
  for (int blk = 0; blk < b.nblocks; ++blk) {
    const std::int64_t* rp = b.block_rowptr(blk);
    for (int i = 0; i < b.nrows; ++i)
      for (std::int64_t k = rp[i]; k < rp[i + 1]; ++k) {
        EXPECT_GE(b.col[k], b.block_begin(blk));
        EXPECT_LT(b.col[k], b.block_end(blk));
      }
  }
  EXPECT_EQ(b.block_rowptr(b.nblocks - 1)[b.nrows], static_cast<std::int64_t>(a.nnz()));
  EXPECT_THROW(pxq::kernels::block_columns(a, 0), std::invalid_argument);
}

TEST(SymmetricCsr, KeepsTheDiagonalAndTheEntriesRightOfIt) {
  const CsrMatrix a = symmetric_matrix(500, 4000, 3);
  const SymmetricCsr s = pxq::kernels::upper_triangle(a, 0.0);
  ASSERT_EQ(s.n, 500);
  EXPECT_EQ(s.represented_nnz(), a.nnz());
  for (int i = 0; i < s.n; ++i) {
    EXPECT_EQ(s.diag[static_cast<std::size_t>(i)] != 0.0, i % 2 == 0 && i % 7 != 3) << "row " << i;
    for (std::int64_t k = s.rowptr[static_cast<std::size_t>(i)]; k < s.rowptr[static_cast<std::size_t>(i) + 1]; ++k)
      EXPECT_GT(s.col[static_cast<std::size_t>(k)], i);
  }
}

TEST(SymmetricCsr, RefusesAMatrixThatIsNotSymmetric) {
  const auto message = [](const CsrMatrix& m, double tol) {
    try {
      pxq::kernels::upper_triangle(m, tol);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // Mirrors off by 1e-15 relative (rounding) pass a 1e-12 tolerance and fail an exact one.
  const CsrMatrix rounded = symmetric_matrix(200, 1000, 4, 1e-15);
  EXPECT_EQ(message(rounded, 1e-12), "accepted");
  EXPECT_NE(message(rounded, 0.0).find("differ beyond rounding"), std::string::npos);
  EXPECT_NE(message(random_matrix(30, 40, 5, 1), 1e-12).find("must be square, not 30 x 40"), std::string::npos);
  // (0, 5) without (5, 0), and the other way round.
  CsrMatrix lonely;
  lonely.nrows = lonely.ncols = 6;
  lonely.rowptr = {0, 1, 1, 1, 1, 1, 1};
  lonely.col = {5};
  lonely.val = {1.0};
  EXPECT_NE(message(lonely, 1e-12).find("entry (0, 5) has no entry (5, 0)"), std::string::npos);
  lonely.rowptr = {0, 0, 0, 0, 0, 0, 1};
  lonely.col = {0};
  EXPECT_NE(message(lonely, 1e-12).find("entry (5, 0) has no entry (0, 5)"), std::string::npos);
}

TEST(SymmetricCsr, PartsHoldAboutEqualNumbersOfEntries) {
  const SymmetricCsr s = pxq::kernels::upper_triangle(symmetric_matrix(3000, 40000, 9), 0.0);
  std::int64_t longest = 0;
  for (int i = 0; i < s.n; ++i)
    longest = std::max(longest, s.rowptr[static_cast<std::size_t>(i) + 1] - s.rowptr[static_cast<std::size_t>(i)]);
  for (int parts : {1, 2, 3, 8}) {
    EXPECT_EQ(pxq::kernels::symmetric_part_begin(s, 0, parts), 0);
    EXPECT_EQ(pxq::kernels::symmetric_part_begin(s, parts, parts), s.n);
    const auto total = s.rowptr.back();
    for (int p = 0; p < parts; ++p) {
      const int lo = pxq::kernels::symmetric_part_begin(s, p, parts);
      const int hi = pxq::kernels::symmetric_part_begin(s, p + 1, parts);
      ASSERT_LE(lo, hi);
      const auto held = s.rowptr[static_cast<std::size_t>(hi)] - s.rowptr[static_cast<std::size_t>(lo)];
      EXPECT_LE(std::llabs(held - total / parts), longest + 1) << parts << " parts, part " << p;
    }
  }
}

}  // namespace
