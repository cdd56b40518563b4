// Column blocking of a CSR matrix, and the upper triangle of a symmetric one.
#include "pxq/kernels/sparse.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace pxq::kernels {

BlockedCsr block_columns(const CsrMatrix& a, int window) {
  if (window < 1) throw std::invalid_argument("column window must be at least one column");
  BlockedCsr b;
  b.nrows = a.nrows;
  b.ncols = a.ncols;
  b.window = window;
  b.nblocks = a.ncols == 0 ? 1 : (a.ncols + window - 1) / window;
  const std::size_t stride = static_cast<std::size_t>(a.nrows) + 1;
  b.rowptr.assign(static_cast<std::size_t>(b.nblocks) * stride, 0);
  // Count entries per (block, row), then prefix-sum block-major.
  std::vector<std::int64_t> count(static_cast<std::size_t>(b.nblocks) * stride, 0);
  for (int i = 0; i < a.nrows; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k)
      ++count[static_cast<std::size_t>(a.col[k] / window) * stride + i];
  std::int64_t offset = 0;
  for (int blk = 0; blk < b.nblocks; ++blk) {
    std::int64_t* rp = b.rowptr.data() + static_cast<std::size_t>(blk) * stride;
    for (int i = 0; i < a.nrows; ++i) {
      rp[i] = offset;
      offset += count[static_cast<std::size_t>(blk) * stride + i];
    }
    rp[a.nrows] = offset;
  }
  b.col.resize(a.nnz());
  b.val.resize(a.nnz());
  std::vector<std::int64_t> next(b.rowptr);
  for (int i = 0; i < a.nrows; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const std::size_t slot = static_cast<std::size_t>(a.col[k] / window) * stride + i;
      const std::int64_t dst = next[slot]++;
      b.col[dst] = a.col[k];
      b.val[dst] = a.val[k];
    }
  return b;
}

std::size_t SymmetricCsr::represented_nnz() const {
  const auto diagonal =
      static_cast<std::size_t>(std::count_if(diag.begin(), diag.end(), [](double d) { return d != 0.0; }));
  return 2 * val.size() + diagonal;
}

int symmetric_part_begin(const SymmetricCsr& a, int part, int parts) {
  if (part <= 0) return 0;
  if (part >= parts) return a.n;
  const auto total = static_cast<long double>(a.rowptr.back());
  const auto target = static_cast<std::int64_t>(total * part / parts);
  const auto it = std::lower_bound(a.rowptr.begin(), a.rowptr.end() - 1, target);
  return static_cast<int>(it - a.rowptr.begin());
}

namespace {

// Row by row, (column, value) of the entries on one side of the diagonal, sorted by column:
// the upper side as stored, the lower side transposed (so both are indexed by the upper's row).
using Entries = std::vector<std::vector<std::pair<std::int32_t, double>>>;

std::string entry_name(int i, int j) { return "(" + std::to_string(i) + ", " + std::to_string(j) + ")"; }

void check_mirrored(const CsrMatrix& a, double rel_tolerance) {
  const auto n = static_cast<std::size_t>(a.nrows);
  Entries upper(n), lower(n);
  for (int i = 0; i < a.nrows; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const int j = a.col[k];
      if (j > i) upper[static_cast<std::size_t>(i)].emplace_back(j, a.val[k]);
      if (j < i) lower[static_cast<std::size_t>(j)].emplace_back(i, a.val[k]);
    }
  for (std::size_t i = 0; i < n; ++i) {
    auto& u = upper[i];
    auto& l = lower[i];
    std::sort(u.begin(), u.end());
    std::sort(l.begin(), l.end());
    const int row = static_cast<int>(i);
    for (std::size_t k = 0; k < std::max(u.size(), l.size()); ++k) {
      if (k >= u.size() || (k < l.size() && l[k].first < u[k].first))
        throw std::invalid_argument("the matrix is not symmetric: entry " + entry_name(l[k].first, row) +
                                    " has no entry " + entry_name(row, l[k].first));
      if (k >= l.size() || u[k].first != l[k].first)
        throw std::invalid_argument("the matrix is not symmetric: entry " + entry_name(row, u[k].first) +
                                    " has no entry " + entry_name(u[k].first, row));
      const double x = u[k].second, y = l[k].second;
      if (std::fabs(x - y) > rel_tolerance * std::max(std::fabs(x), std::fabs(y)))
        throw std::invalid_argument("the matrix is not symmetric: entries " + entry_name(row, u[k].first) + " and " +
                                    entry_name(u[k].first, row) + " differ beyond rounding");
    }
  }
}

}  // namespace

SymmetricCsr upper_triangle(const CsrMatrix& a, double rel_tolerance) {
  if (a.nrows != a.ncols)
    throw std::invalid_argument("a symmetric matrix must be square, not " + std::to_string(a.nrows) + " x " +
                                std::to_string(a.ncols));
  check_mirrored(a, rel_tolerance);
  SymmetricCsr s;
  s.n = a.nrows;
  s.diag.assign(static_cast<std::size_t>(a.nrows), 0.0);
  s.rowptr.assign(static_cast<std::size_t>(a.nrows) + 1, 0);
  for (int i = 0; i < a.nrows; ++i) {
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const int j = a.col[k];
      if (j == i) s.diag[static_cast<std::size_t>(i)] += a.val[k];
      if (j <= i) continue;
      s.col.push_back(j);
      s.val.push_back(a.val[k]);
    }
    s.rowptr[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(s.col.size());
  }
  return s;
}

}  // namespace pxq::kernels
