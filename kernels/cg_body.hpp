// Internal: CG's arithmetic, written once. Every executor (reference, OpenMP, Kokkos) runs
// these bodies; what differs between them is only how the indices are spread over threads and
// whether a sum keeps several partial sums (Simd) or adds in NAS's order. Internal linkage
// (an unnamed namespace): the reference is built without vectorisation, and its copies must
// never stand in for the executors'.
#pragma once

#include <cstddef>
#include <cstdint>

#include "portable.hpp"
#include "pxq/kernels/sparse.hpp"

namespace pxq::kernels::cg_body {
namespace {

// One row of y = A x over the nonzeros [b, e). Simd: several partial sums (gathers where the
// CPU has them), which breaks the add-latency chain a plain loop is bound by.
template <bool Simd>
PXQ_INLINE double row_dot(const double* val, const std::int32_t* col, std::int64_t b, std::int64_t e, const double* x) {
  double sum = 0.0;
  if constexpr (Simd) {
#pragma omp simd reduction(+ : sum)
    for (std::int64_t k = b; k < e; ++k) sum += val[k] * x[col[k]];
  } else {
    for (std::int64_t k = b; k < e; ++k) sum += val[k] * x[col[k]];
  }
  return sum;
}

// One row i of y = A x with A's upper triangle (sparse.hpp, SymmetricCsr), on a part's
// pairs (pair[2j] = x(j), pair[2j + 1] = the part's sum for row j): returns the row's sum over
// the entries right of the diagonal, and adds each entry's mirror term, a(i,j) x(i), to row j's
// sum. x(j) and the sum it feeds share a cache line, so an entry touches one line at random,
// not two. A plain loop: the mirror terms are scattered stores, which cost more as vector
// scatters than as scalar stores on the CPUs pxq was measured on.
PXQ_INLINE double symmetric_row(const double* val, const std::int32_t* col, std::int64_t b, std::int64_t e, double xi,
                                double* pair) {
  double sum = 0.0;
  for (std::int64_t k = b; k < e; ++k) {
    double* xj = pair + 2 * static_cast<std::size_t>(col[k]);
    sum += val[k] * xj[0];
    xj[1] += val[k] * xi;
  }
  return sum;
}

// One part of a product with the upper triangle, into its own 2n pairs: x(i) and a cleared sum
// for every row i in [lo, n), then rows [lo, hi)'s products and mirror terms summed into the
// sums (a mirror term lands in a later row, often another part's).
inline void symmetric_part(const SymmetricCsr& a, const double* x, double* pair, int lo, int hi) {
  for (auto i = static_cast<std::size_t>(lo); i < static_cast<std::size_t>(a.n); ++i) {
    pair[2 * i] = x[i];
    pair[2 * i + 1] = 0.0;
  }
  for (int i = lo; i < hi; ++i) {
    const auto r = static_cast<std::size_t>(i);
    pair[2 * r + 1] += symmetric_row(a.val.data(), a.col.data(), a.rowptr[r], a.rowptr[r + 1], x[r], pair);
  }
}

// Row i of the product: the diagonal term plus the row's sums in the parts 0 .. last, whose
// pairs lie 2n apart from `parts` (part p's rows start at or before row i for p <= last).
inline double symmetric_sum(const SymmetricCsr& a, const double* x, const double* parts, std::size_t n, int last,
                            std::size_t i) {
  double sum = a.diag[i] * x[i];
  for (int p = 0; p <= last; ++p) sum += parts[static_cast<std::size_t>(p) * 2 * n + 2 * i + 1];
  return sum;
}

// The terms of the reductions.
PXQ_INLINE double dot_term(const double* x, const double* y, std::size_t i) { return x[i] * y[i]; }
PXQ_INLINE double dist2_term(const double* x, const double* y, std::size_t i) {
  const double d = x[i] - y[i];
  return d * d;
}

// The element updates of the sweeps.
PXQ_INLINE void update_zr(double* z, double* r, const double* p, const double* q, double alpha, std::size_t i) {
  z[i] += alpha * p[i];
  r[i] -= alpha * q[i];
}
PXQ_INLINE void update_p(double* p, const double* r, double beta, std::size_t i) { p[i] = r[i] + beta * p[i]; }
PXQ_INLINE void scale(double* x, double s, const double* z, std::size_t i) { x[i] = s * z[i]; }
PXQ_INLINE void add(double* w, const double* q, std::size_t i) { w[i] += q[i]; }
// NAS's start of conj_grad: q = z = 0, r = p = x.
PXQ_INLINE void start(const double* x, double* q, double* z, double* r, double* p, std::size_t i) {
  q[i] = 0.0;
  z[i] = 0.0;
  r[i] = x[i];
  p[i] = x[i];
}

}  // namespace
}  // namespace pxq::kernels::cg_body
