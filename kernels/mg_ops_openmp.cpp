// OpenMP executor for the MG operators: NAS's loops (one row at a time, with the partial
// sums of the neighbouring rows kept in two line buffers so each point costs 15 flops, not
// 27 multiply-adds), the planes split over the threads in contiguous slabs. Flat runs are
// this code with one thread.
//
// Tiled: each thread walks its slab in blocks of rows. For one block of rows it sweeps all
// its planes before moving on, so the three input planes a stencil reads stay in cache
// between consecutive planes (a block of rows of three planes, plus the other streams, is
// about a tile). Untiled, a block is the whole plane: NAS's order.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "backend_impls.hpp"
#include "pxq/kernels/executor.hpp"
#include "pxq/tiling/chunks.hpp"

namespace pxq::kernels {
namespace {

// Below this many interior points a level is swept by one thread: the parallel region would
// cost more than the work (the coarsest levels of the V-cycle).
constexpr std::size_t kMinPointsPerThread = 4096;

// Rows of a plane a sweep keeps in flight per input/output stream: the stencil input reads
// three planes, the right-hand side and the output one each.
constexpr int kStencilStreams = 5;
constexpr int kRestrictStreams = 4;  // three fine planes read, one coarse plane written
constexpr int kInterpStreams = 6;    // two coarse planes read, four fine rows written per row
constexpr int kFusedStreams = 7;     // three planes of u and of r, one of v

struct Range {
  int begin, end;
};
inline Range thread_range(int lo, int hi, int t, int nt) {
  const int n = hi - lo;
  const int base = n / nt, extra = n % nt;
  const int b = lo + t * base + std::min(t, extra);
  return {b, b + base + (t < extra ? 1 : 0)};
}

class OpenMpMgOps final : public MgOps, private ExecutorShape {
 public:
  using ExecutorShape::ExecutorShape;

  void resid(const double* u, const double* v, double* r, Box b, const Stencil& a) const override {
    sweep(b, b.n1, kStencilStreams, 2 * b.n1,
          [&](int i2, int i3, double* buf) { resid_row(u, v, r, b, a, i2, i3, buf); });
  }

  void psinv(const double* r, double* u, Box b, const Stencil& c) const override { smooth<false>(r, u, b, c); }
  void psinv_assign(const double* r, double* u, Box b, const Stencil& c) const override {
    zero_halo(u, b);
    smooth<true>(r, u, b, c);
  }

  void rprj3(const double* r, Box f, double* s, Box c) const override {
    sweep(c, 2 * f.n1, kRestrictStreams, 2 * f.n1, [&](int j2, int j3, double* buf) {
      double* x1 = buf;
      double* y1 = buf + f.n1;
      const int i2 = 2 * j2, i3 = 2 * j3;
      const double* rm = r + f.at(0, i2 - 1, i3);
      const double* rp = r + f.at(0, i2 + 1, i3);
      const double* rb = r + f.at(0, i2, i3 - 1);
      const double* rt = r + f.at(0, i2, i3 + 1);
      const double* rmb = r + f.at(0, i2 - 1, i3 - 1);
      const double* rmt = r + f.at(0, i2 - 1, i3 + 1);
      const double* rpb = r + f.at(0, i2 + 1, i3 - 1);
      const double* rpt = r + f.at(0, i2 + 1, i3 + 1);
      const double* rc = r + f.at(0, i2, i3);
      for (int j1 = 1; j1 < c.n1; ++j1) {
        const int i = 2 * j1 - 1;
        x1[i] = rm[i] + rp[i] + rb[i] + rt[i];
        y1[i] = rmb[i] + rmt[i] + rpb[i] + rpt[i];
      }
      double* sc = s + c.at(0, j2, j3);
      for (int j1 = 1; j1 < c.n1 - 1; ++j1) {
        const int i = 2 * j1;
        const double y2 = rmb[i] + rmt[i] + rpb[i] + rpt[i];
        const double x2 = rm[i] + rp[i] + rb[i] + rt[i];
        sc[j1] = 0.5 * rc[i] + 0.25 * (rc[i - 1] + rc[i + 1] + x2) + 0.125 * (x1[i - 1] + x1[i + 1] + y2) +
                 0.0625 * (y1[i - 1] + y1[i + 1]);
      }
    });
  }

  void interp(const double* z, Box c, double* u, Box f) const override { prolong<false>(z, c, u, f); }
  void interp_assign(const double* z, Box c, double* u, Box f) const override { prolong<true>(z, c, u, f); }

  void resid_psinv_core(double* u, const double* v, double* r, Box b, const Stencil& a,
                        const Stencil& c) const override {
    const int planes = b.n3 - 2, rows = b.n2 - 2;
    if (planes <= 0 || rows <= 0 || b.n1 < 3) return;
    const int rpb = tile_bytes_ == 0 ? rows : rows_per_block(tile_bytes_, b.n1, kFusedStreams, rows);
    // Core rows [lo, hi] of plane i3 smoothed; nothing outside the core.
    auto smooth_rows = [&](int i3, int lo, int hi, double* buf) {
      if (i3 < 2 || i3 > b.n3 - 3) return;
      for (int i2 = std::max(2, lo); i2 <= std::min(b.n2 - 3, hi); ++i2)
        smooth_row<false>(r, u, b, c, i2, i3, 2, b.n1 - 2, buf);
    };
    auto body = [&](int t, int nt) {
      std::vector<double> buf(2 * static_cast<std::size_t>(b.n1));
      const Range rg = thread_range(1, b.n3 - 1, t, nt);
      // Block by block of rows, plane by plane: the residual of plane i3, then the smoothing
      // of plane i3 - 1, whose r neighbours are all computed and whose u no residual still to
      // come reads. A block's last row waits for the next block's first (it needs that r),
      // and a slab's first and last planes wait for the neighbouring slabs (the barrier).
      for (int r0 = 1; r0 < b.n2 - 1; r0 += rpb) {
        const int r1 = std::min(b.n2 - 1, r0 + rpb);
        const int lo = r0 == 1 ? 1 : r0 - 1, hi = r1 == b.n2 - 1 ? r1 - 1 : r1 - 2;
        for (int i3 = rg.begin; i3 < rg.end; ++i3) {
          for (int i2 = r0; i2 < r1; ++i2) resid_row(u, v, r, b, a, i2, i3, buf.data());
          if (i3 - 1 > rg.begin) smooth_rows(i3 - 1, lo, hi, buf.data());
        }
      }
      if (nt > 1) {
#pragma omp barrier
      }
      if (rg.end > rg.begin) smooth_rows(rg.begin, 1, b.n2 - 2, buf.data());
      if (rg.end - 1 > rg.begin) smooth_rows(rg.end - 1, 1, b.n2 - 2, buf.data());
    };
    const int nt = std::min(threads_for(b.size()), planes);
    if (nt == 1) return body(0, 1);
#pragma omp parallel num_threads(nt)
    body(omp_get_thread_num(), omp_get_num_threads());
  }

  void psinv_shell(const double* r, double* u, Box b, const Stencil& c) const override {
    const int nt = std::min(threads_for(b.size() / std::max(1, b.n1)), std::max(1, b.n3 - 2));
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      std::vector<double> buf(2 * static_cast<std::size_t>(b.n1));
      const Range rg = thread_range(1, b.n3 - 1, omp_get_thread_num(), omp_get_num_threads());
      for (int i3 = rg.begin; i3 < rg.end; ++i3) {
        const bool face_plane = i3 == 1 || i3 == b.n3 - 2;
        for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
          if (face_plane || i2 == 1 || i2 == b.n2 - 2) {
            smooth_row<false>(r, u, b, c, i2, i3, 1, b.n1 - 1, buf.data());
          } else {
            u[b.at(1, i2, i3)] += smoother_at(r, b, 1, i2, i3, c);
            if (b.n1 - 2 > 1) u[b.at(b.n1 - 2, i2, i3)] += smoother_at(r, b, b.n1 - 2, i2, i3, c);
          }
        }
      }
    }
  }

  std::pair<double, double> norm2(const double* r, Box b) const override {
    double s = 0.0, m = 0.0;
    const int nt = threads_for(b.size());
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(+ : s) reduction(max : m)
    {
      const Range rg = thread_range(1, b.n3 - 1, omp_get_thread_num(), omp_get_num_threads());
      for (int i3 = rg.begin; i3 < rg.end; ++i3)
        for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
          const double* x = r + b.at(0, i2, i3);
#pragma omp simd reduction(+ : s) reduction(max : m)
          for (int i1 = 1; i1 < b.n1 - 1; ++i1) {
            s += x[i1] * x[i1];
            m = std::max(m, std::fabs(x[i1]));
          }
        }
    }
    return {s, m};
  }

  void zero(double* u, Box b) const override {
    const int nt = threads_for(b.size());
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      const Range rg = thread_range(0, b.n3, omp_get_thread_num(), omp_get_num_threads());
      std::fill(u + b.at(0, 0, rg.begin), u + b.at(0, 0, rg.end), 0.0);
    }
  }

 private:
  template <bool Assign>
  void smooth(const double* r, double* u, Box b, const Stencil& c) const {
    sweep(b, b.n1, kStencilStreams, 2 * b.n1,
          [&](int i2, int i3, double* buf) { smooth_row<Assign>(r, u, b, c, i2, i3, 1, b.n1 - 1, buf); });
  }

  // NAS's line buffers for row (i2, i3) over points [lo, hi): s1 = the 4 face neighbours
  // off the row (i2 +- 1, i3 +- 1), s2 = the 4 edge neighbours off it (both offsets).
  static void line_sums(const double* x, Box b, int i2, int i3, int lo, int hi, double* s1, double* s2) {
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

  // r = v - A u along one interior row; a[1] = 0 as in NAS.
  static void resid_row(const double* u, const double* v, double* r, Box b, const Stencil& a, int i2, int i3,
                        double* buf) {
    const double a0 = a.w[0], a2 = a.w[2], a3 = a.w[3];
    double* u1 = buf;
    double* u2 = buf + b.n1;
    line_sums(u, b, i2, i3, 0, b.n1, u1, u2);
    const double* uc = u + b.at(0, i2, i3);
    const double* vc = v + b.at(0, i2, i3);
    double* rc = r + b.at(0, i2, i3);
#pragma omp simd
    for (int i1 = 1; i1 < b.n1 - 1; ++i1)
      rc[i1] = vc[i1] - a0 * uc[i1] - a2 * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) - a3 * (u2[i1 - 1] + u2[i1 + 1]);
  }

  // u (+)= c0 r + c1 (faces) + c2 (edges) for points [lo, hi) of one interior row; c[3] = 0
  // as in NAS.
  template <bool Assign>
  static void smooth_row(const double* r, double* u, Box b, const Stencil& c, int i2, int i3, int lo, int hi,
                         double* buf) {
    const double c0 = c.w[0], c1 = c.w[1], c2 = c.w[2];
    double* r1 = buf;
    double* r2 = buf + b.n1;
    line_sums(r, b, i2, i3, lo - 1, hi + 1, r1, r2);
    const double* rc = r + b.at(0, i2, i3);
    double* uc = u + b.at(0, i2, i3);
#pragma omp simd
    for (int i1 = lo; i1 < hi; ++i1) {
      const double du = c0 * rc[i1] + c1 * (rc[i1 - 1] + rc[i1 + 1] + r1[i1]) + c2 * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
      uc[i1] = Assign ? du : uc[i1] + du;
    }
  }

  // interp: every fine point from the coarse block, two fine planes per coarse plane.
  template <bool Assign>
  void prolong(const double* z, Box c, double* u, Box f) const {
    // Coarse planes [0, n3-1) and rows [0, n2-1): sweep() walks [1, n-1), so shift by one.
    const Box shifted{c.n1, c.n2 + 1, c.n3 + 1};
    sweep(shifted, 2 * f.n1, kInterpStreams, 3 * c.n1, [&](int row, int plane, double* buf) {
      const int c2 = row - 1, c3 = plane - 1;
      double* z1 = buf;
      double* z2 = buf + c.n1;
      double* z3 = buf + 2 * c.n1;
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
      double* u00 = u + f.at(0, 2 * c2, 2 * c3);
      double* u10 = u + f.at(0, 2 * c2 + 1, 2 * c3);
      double* u01 = u + f.at(0, 2 * c2, 2 * c3 + 1);
      double* u11 = u + f.at(0, 2 * c2 + 1, 2 * c3 + 1);
      auto put = [](double& dst, double val) { dst = Assign ? val : dst + val; };
      for (int i1 = 0; i1 < c.n1 - 1; ++i1) {
        put(u00[2 * i1], z00[i1]);
        put(u00[2 * i1 + 1], 0.5 * (z00[i1 + 1] + z00[i1]));
        put(u10[2 * i1], 0.5 * z1[i1]);
        put(u10[2 * i1 + 1], 0.25 * (z1[i1] + z1[i1 + 1]));
        put(u01[2 * i1], 0.5 * z2[i1]);
        put(u01[2 * i1 + 1], 0.25 * (z2[i1] + z2[i1 + 1]));
        put(u11[2 * i1], 0.25 * z3[i1]);
        put(u11[2 * i1 + 1], 0.125 * (z3[i1] + z3[i1 + 1]));
      }
    });
  }

  // The six faces of a block set to zero.
  static void zero_halo(double* u, Box b) {
    std::fill(u, u + b.at(0, 0, 1), 0.0);
    std::fill(u + b.at(0, 0, b.n3 - 1), u + b.size(), 0.0);
    for (int i3 = 1; i3 < b.n3 - 1; ++i3) {
      std::fill(u + b.at(0, 0, i3), u + b.at(0, 1, i3), 0.0);
      std::fill(u + b.at(0, b.n2 - 1, i3), u + b.at(0, 0, i3 + 1), 0.0);
      for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
        u[b.at(0, i2, i3)] = 0.0;
        u[b.at(b.n1 - 1, i2, i3)] = 0.0;
      }
    }
  }

  int threads_for(std::size_t points) const {
    if (threads_ == 1) return 1;
    return static_cast<int>(
        std::clamp<std::size_t>(points / kMinPointsPerThread, 1, static_cast<std::size_t>(threads_)));
  }

  // fn(i2, i3, scratch) for every interior row of `out` (planes and rows [1, n-1)), the
  // planes split over the threads. One output row touches `row_points` points of each of
  // `streams` streams: that sizes a tile's block of rows.
  template <class Fn>
  void sweep(Box out, int row_points, int streams, int scratch, Fn&& fn) const {
    const int planes = out.n3 - 2, rows = out.n2 - 2;
    if (planes <= 0 || rows <= 0) return;
    const int rpb = tile_bytes_ == 0 ? rows : rows_per_block(tile_bytes_, row_points, streams, rows);
    auto body = [&](int t, int nt) {
      std::vector<double> buf(static_cast<std::size_t>(scratch));
      const Range rg = thread_range(1, out.n3 - 1, t, nt);
      for (int r0 = 1; r0 < out.n2 - 1; r0 += rpb) {
        const int r1 = std::min(out.n2 - 1, r0 + rpb);
        for (int i3 = rg.begin; i3 < rg.end; ++i3)
          for (int i2 = r0; i2 < r1; ++i2) fn(i2, i3, buf.data());
      }
    };
    const std::size_t points =
        static_cast<std::size_t>(planes) * static_cast<std::size_t>(rows) * static_cast<std::size_t>(row_points);
    const int nt = std::min(threads_for(points), planes);
    if (nt == 1) return body(0, 1);
#pragma omp parallel num_threads(nt)
    body(omp_get_thread_num(), omp_get_num_threads());
  }
};

}  // namespace

std::unique_ptr<MgOps> make_mg_ops_openmp(int threads, std::size_t tile_bytes) {
  return std::make_unique<OpenMpMgOps>(threads, tile_bytes);
}

int rows_per_block(std::size_t tile_bytes, int n1, int streams, int n2_interior) {
  return tiling::rows_per_tile(tile_bytes, static_cast<std::size_t>(std::max(1, n1)) * sizeof(double), streams,
                               n2_interior);
}

}  // namespace pxq::kernels
