// Internal: MG's arithmetic, written once: NAS's row operators (the partial sums of the
// neighbouring rows kept in two line buffers, so a stencil point costs 15 flops, not 27
// multiply-adds). The OpenMP and Kokkos executors both run these rows; they differ only in
// how the rows are spread over threads and tiles. The reference (mg_ops_reference.cpp) stays
// an independent point-by-point definition to check them against. Internal linkage.
#pragma once

#include <cstddef>

#include "portable.hpp"
#include "pxq/kernels/mg_ops.hpp"

namespace pxq::kernels::mg_body {
namespace {

// NAS's line buffers for row (i2, i3) over points [lo, hi): s1 = the 4 face neighbours
// off the row (i2 +- 1, i3 +- 1), s2 = the 4 edge neighbours off it (both offsets).
PXQ_INLINE void line_sums(const double* x, Box b, int i2, int i3, int lo, int hi, double* s1, double* s2) {
  const double* xm = x + b.at(0, i2 - 1, i3);
  const double* xp = x + b.at(0, i2 + 1, i3);
  const double* xb = x + b.at(0, i2, i3 - 1);
  const double* xt = x + b.at(0, i2, i3 + 1);
  const double* xmb = x + b.at(0, i2 - 1, i3 - 1);
  const double* xpb = x + b.at(0, i2 + 1, i3 - 1);
  const double* xmt = x + b.at(0, i2 - 1, i3 + 1);
  const double* xpt = x + b.at(0, i2 + 1, i3 + 1);
#pragma omp simd
  for (int i1 = lo; i1 < hi; ++i1) {
    s1[i1] = xm[i1] + xp[i1] + xb[i1] + xt[i1];
    s2[i1] = xmb[i1] + xpb[i1] + xmt[i1] + xpt[i1];
  }
}

// NAS's line buffers for the consecutive rows lo .. hi - 1 of a plane, over points [p0, p1),
// given the plane (`pc`) and the planes below and above it (`pm`, `pp`; n1 points a row):
// q(k) = x(k, below) + x(k, above) is kept for rows k = i2 - 1, i2, i2 + 1, so a row's s1
// and s2 cost 4 additions and 4 loads off the row, not 6 and 8. row(i2, s1, s2) is called
// for each row in order; `buf` holds 5 n1 doubles (three rows of q, s1, s2).
template <class Row>
PXQ_INLINE void rolling_line_sums_from(const double* pm, const double* pc, const double* pp, int n1, int lo, int hi,
                                       int p0, int p1, double* buf, Row&& row) {
  const std::size_t n = static_cast<std::size_t>(n1);
  double* q[3] = {buf, buf + n, buf + 2 * n};
  double* s1 = buf + 3 * n;
  double* s2 = buf + 4 * n;
  for (int k = 0; k < 2; ++k) {
    const double* xb = pm + static_cast<std::size_t>(lo - 1 + k) * n;
    const double* xt = pp + static_cast<std::size_t>(lo - 1 + k) * n;
    double* qk = q[k];
#pragma omp simd
    for (int i1 = p0; i1 < p1; ++i1) qk[i1] = xb[i1] + xt[i1];
  }
  for (int i2 = lo; i2 < hi; ++i2) {
    const double* qm = q[(i2 - lo) % 3];
    const double* qc = q[(i2 - lo + 1) % 3];
    double* qp = q[(i2 - lo + 2) % 3];
    const double* xb = pm + static_cast<std::size_t>(i2 + 1) * n;
    const double* xt = pp + static_cast<std::size_t>(i2 + 1) * n;
    const double* xm = pc + static_cast<std::size_t>(i2 - 1) * n;
    const double* xp = pc + static_cast<std::size_t>(i2 + 1) * n;
#pragma omp simd
    for (int i1 = p0; i1 < p1; ++i1) {
      const double qn = xb[i1] + xt[i1];
      qp[i1] = qn;
      s1[i1] = xm[i1] + xp[i1] + qc[i1];
      s2[i1] = qm[i1] + qn;
    }
    row(i2, s1, s2);
  }
}

// The same for plane i3 of the block x.
template <class Row>
PXQ_INLINE void rolling_line_sums(const double* x, Box b, int i3, int lo, int hi, int p0, int p1, double* buf,
                                  Row&& row) {
  rolling_line_sums_from(x + b.at(0, 0, i3 - 1), x + b.at(0, 0, i3), x + b.at(0, 0, i3 + 1), b.n1, lo, hi, p0, p1, buf,
                         static_cast<Row&&>(row));
}

// The residual's arithmetic along one row, given the row's line sums u1 (faces) and u2
// (edges): rc = vc - A uc on the interior points; a[1] = 0 as in NAS.
PXQ_INLINE void resid_line(const double* uc, const double* vc, double* rc, const double* u1, const double* u2, int n1,
                           const Stencil& a) {
  const double a0 = a.w[0], a2 = a.w[2], a3 = a.w[3];
#pragma omp simd
  for (int i1 = 1; i1 < n1 - 1; ++i1)
    rc[i1] = vc[i1] - a0 * uc[i1] - a2 * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) - a3 * (u2[i1 - 1] + u2[i1 + 1]);
}

// The smoother's arithmetic along one row for points [lo, hi), given the row's line sums
// r1 (faces) and r2 (edges): uc (+)= c0 rc + c1 (faces) + c2 (edges); c[3] = 0 as in NAS.
template <bool Assign>
PXQ_INLINE void smooth_line(const double* rc, double* uc, const double* r1, const double* r2, int lo, int hi,
                            const Stencil& c) {
  const double c0 = c.w[0], c1 = c.w[1], c2 = c.w[2];
#pragma omp simd
  for (int i1 = lo; i1 < hi; ++i1) {
    const double du = c0 * rc[i1] + c1 * (rc[i1 - 1] + rc[i1 + 1] + r1[i1]) + c2 * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
    uc[i1] = Assign ? du : uc[i1] + du;
  }
}

// r = v - A u along one interior row into `rc` (the row's n1 points, interior written).
PXQ_INLINE void resid_row_to(const double* u, const double* v, double* rc, Box b, const Stencil& a, int i2, int i3,
                             double* buf) {
  double* u1 = buf;
  double* u2 = buf + b.n1;
  line_sums(u, b, i2, i3, 0, b.n1, u1, u2);
  resid_line(u + b.at(0, i2, i3), v + b.at(0, i2, i3), rc, u1, u2, b.n1, a);
}

// The same, in place in r.
PXQ_INLINE void resid_row(const double* u, const double* v, double* r, Box b, const Stencil& a, int i2, int i3,
                          double* buf) {
  resid_row_to(u, v, r + b.at(0, i2, i3), b, a, i2, i3, buf);
}

// r = v - A u along the consecutive interior rows i2 = lo .. hi - 1 of plane i3 into the
// plane `out` (n1 x n2, row i2 at out + i2 n1; interior points written), the line sums
// rolled from row to row (rolling_line_sums); `buf` holds 5 n1 doubles.
PXQ_INLINE void resid_rows_to(const double* u, const double* v, double* out, Box b, const Stencil& a, int lo, int hi,
                              int i3, double* buf) {
  rolling_line_sums(u, b, i3, lo, hi, 0, b.n1, buf, [&](int i2, const double* u1, const double* u2) {
    resid_line(u + b.at(0, i2, i3), v + b.at(0, i2, i3), out + static_cast<std::size_t>(i2) * b.n1, u1, u2, b.n1, a);
  });
}

// The same, in place in r.
PXQ_INLINE void resid_rows(const double* u, const double* v, double* r, Box b, const Stencil& a, int lo, int hi, int i3,
                           double* buf) {
  resid_rows_to(u, v, r + b.at(0, 0, i3), b, a, lo, hi, i3, buf);
}

// u (+)= the smoothing of r for points [lo, hi) of one interior row.
template <bool Assign>
PXQ_INLINE void smooth_row(const double* r, double* u, Box b, const Stencil& c, int i2, int i3, int lo, int hi,
                           double* buf) {
  double* r1 = buf;
  double* r2 = buf + b.n1;
  line_sums(r, b, i2, i3, lo - 1, hi + 1, r1, r2);
  smooth_line<Assign>(r + b.at(0, i2, i3), u + b.at(0, i2, i3), r1, r2, lo, hi, c);
}

// The same for the consecutive interior rows i2 = r0 .. r1 - 1 of a plane of u (`uc`), from
// that plane of r and the planes below and above it given apart (`rm`, `rc`, `rp`; b.n1 x
// b.n2 each), the line sums rolled from row to row; `buf` holds 5 n1 doubles.
template <bool Assign>
PXQ_INLINE void smooth_rows_from(const double* rm, const double* rc, const double* rp, double* uc, Box b,
                                 const Stencil& c, int r0, int r1, int lo, int hi, double* buf) {
  const std::size_t n = static_cast<std::size_t>(b.n1);
  rolling_line_sums_from(rm, rc, rp, b.n1, r0, r1, lo - 1, hi + 1, buf,
                         [&](int i2, const double* r1s, const double* r2s) {
                           smooth_line<Assign>(rc + i2 * n, uc + i2 * n, r1s, r2s, lo, hi, c);
                         });
}

// The same for plane i3 of the blocks r and u.
template <bool Assign>
PXQ_INLINE void smooth_rows(const double* r, double* u, Box b, const Stencil& c, int r0, int r1, int i3, int lo, int hi,
                            double* buf) {
  smooth_rows_from<Assign>(r + b.at(0, 0, i3 - 1), r + b.at(0, 0, i3), r + b.at(0, 0, i3 + 1), u + b.at(0, 0, i3), b, c,
                           r0, r1, lo, hi, buf);
}

// s = P r on coarse row j2 into `sc` from three fine planes (n1 x n2 each, halo included):
// `pm`, `pc`, `pp` the planes 2 j3 - 1, 2 j3 and 2 j3 + 1; `buf` holds 2 f.n1 doubles.
PXQ_INLINE void restrict_row_from(const double* pm, const double* pc, const double* pp, Box f, double* sc, Box c,
                                  int j2, double* buf) {
  double* x1 = buf;
  double* y1 = buf + f.n1;
  const int i2 = 2 * j2;
  const std::size_t row = static_cast<std::size_t>(f.n1);
  const double* rm = pc + (i2 - 1) * row;
  const double* rp = pc + (i2 + 1) * row;
  const double* rb = pm + i2 * row;
  const double* rt = pp + i2 * row;
  const double* rmb = pm + (i2 - 1) * row;
  const double* rmt = pp + (i2 - 1) * row;
  const double* rpb = pm + (i2 + 1) * row;
  const double* rpt = pp + (i2 + 1) * row;
  const double* rc = pc + i2 * row;
  for (int j1 = 1; j1 < c.n1; ++j1) {
    const int i = 2 * j1 - 1;
    x1[i] = rm[i] + rp[i] + rb[i] + rt[i];
    y1[i] = rmb[i] + rmt[i] + rpb[i] + rpt[i];
  }
  for (int j1 = 1; j1 < c.n1 - 1; ++j1) {
    const int i = 2 * j1;
    const double y2 = rmb[i] + rmt[i] + rpb[i] + rpt[i];
    const double x2 = rm[i] + rp[i] + rb[i] + rt[i];
    sc[j1] = 0.5 * rc[i] + 0.25 * (rc[i - 1] + rc[i + 1] + x2) + 0.125 * (x1[i - 1] + x1[i + 1] + y2) +
             0.0625 * (y1[i - 1] + y1[i + 1]);
  }
}

// s = P r on coarse row (j2, j3) from the fine block; `buf` holds 2 f.n1 doubles.
PXQ_INLINE void restrict_row(const double* r, Box f, double* s, Box c, int j2, int j3, double* buf) {
  const int i3 = 2 * j3;
  restrict_row_from(r + f.at(0, 0, i3 - 1), r + f.at(0, 0, i3), r + f.at(0, 0, i3 + 1), f, s + c.at(0, j2, j3), c, j2,
                    buf);
}

// One fine row of the interpolation from the coarse line x (n points): the even points
// (+)= even x(i), the odd ones (+)= odd (x(i) + x(i + 1)). The line and the row never overlap,
// so the compiler vectorises the interleaved stores.
template <bool Assign>
PXQ_INLINE void prolong_line(const double* __restrict x, double* __restrict u, double even, double odd, int n) {
  for (std::ptrdiff_t i1 = 0; i1 < n - 1; ++i1) {
    const double e = even * x[i1], o = odd * (x[i1] + x[i1 + 1]);
    u[2 * i1] = Assign ? e : u[2 * i1] + e;
    u[2 * i1 + 1] = Assign ? o : u[2 * i1 + 1] + o;
  }
}

// interp from coarse row (c2, c3) (halo included, up to n-2) into the four fine rows it
// covers, added (or, Assign, assigned); `buf` holds 3 c.n1 doubles.
template <bool Assign>
PXQ_INLINE void prolong_row(const double* z, Box c, double* u, Box f, int c2, int c3, double* buf) {
  double* z1 = buf;
  double* z2 = buf + c.n1;
  double* z3 = buf + 2 * std::ptrdiff_t{c.n1};
  const double* z00 = z + c.at(0, c2, c3);
  const double* z10 = z + c.at(0, c2 + 1, c3);
  const double* z01 = z + c.at(0, c2, c3 + 1);
  const double* z11 = z + c.at(0, c2 + 1, c3 + 1);
#pragma omp simd
  for (int i1 = 0; i1 < c.n1; ++i1) {
    z1[i1] = z10[i1] + z00[i1];
    z2[i1] = z01[i1] + z00[i1];
    z3[i1] = z11[i1] + z01[i1] + z1[i1];
  }
  prolong_line<Assign>(z00, u + f.at(0, 2 * c2, 2 * c3), 1.0, 0.5, c.n1);
  prolong_line<Assign>(z1, u + f.at(0, 2 * c2 + 1, 2 * c3), 0.5, 0.25, c.n1);
  prolong_line<Assign>(z2, u + f.at(0, 2 * c2, 2 * c3 + 1), 0.5, 0.25, c.n1);
  prolong_line<Assign>(z3, u + f.at(0, 2 * c2 + 1, 2 * c3 + 1), 0.25, 0.125, c.n1);
}

}  // namespace
}  // namespace pxq::kernels::mg_body
