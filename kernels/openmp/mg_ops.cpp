// OpenMP executor for the MG operators: NAS's loops (one row at a time, with the partial
// sums of the neighbouring rows kept in two line buffers so each point costs 15 flops, not
// 27 multiply-adds), the planes split over the threads in contiguous slabs. Flat runs are
// this code with one thread.
//
// Tiled: each thread walks its slab in blocks of rows. For one block of rows it sweeps all
// its planes before moving on, so the three input planes a stencil reads stay in cache
// between consecutive planes (a block of rows of three planes, plus the other streams, is
// about a tile). Untiled, a block is the whole plane: NAS's order.
#include "pxq/kernels/mg_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "mg_body.hpp"
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
constexpr int kRestrictStreams = 4;       // three fine planes read, one coarse plane written
constexpr int kInterpStreams = 6;         // two coarse planes read, four fine rows written per row
constexpr int kFusedStreams = 7;          // three planes of u and of r, one of v
constexpr int kResidRestrictStreams = 7;  // three planes of u and of the window of r, one of v

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

  // Per edge between two blocks of rows and per plane, as the loops below walk them:
  // - a stencil sweep reads its input's row on each side of the block again (2 rows);
  // - the restriction's first coarse row reads again the fine row the block below read last,
  //   on three fine planes a coarse plane (1.5 fine rows a fine plane); the interpolation a
  //   coarse row of two coarse planes (a coarse row is half a fine one: 0.5);
  // - the fused pass reads u's two rows at the edge again, loads the two rows of r the block
  //   below stored for it and stores its own last two (4 read, 2 written);
  // - the residual fused with the restriction computes the fine row at each edge again
  //   (3 rows of u and one of v read again, 1 computed).
  EdgeRows edge_rows(MgPass pass, Box f) const override {
    const int rows = f.n2 - 2, coarse = rows / 2;
    switch (pass) {
      case MgPass::kResid:
      case MgPass::kSmooth:
        return {2.0 * block_edges(tile_bytes_, f.n1, kStencilStreams, rows), 0.0, 0.0};
      case MgPass::kRestrict:
        return {1.5 * block_edges(tile_bytes_, 2 * f.n1, kRestrictStreams, coarse), 0.0, 0.0};
      case MgPass::kInterp:
        return {0.5 * block_edges(tile_bytes_, 2 * f.n1, kInterpStreams, coarse + 1), 0.0, 0.0};
      case MgPass::kResidSmooth:
      case MgPass::kInterpResidSmooth: {
        double edges = block_edges(tile_bytes_, f.n1, kFusedStreams, rows);
        if (pass == MgPass::kInterpResidSmooth && tile_bytes_ != 0) {
          int rpb = rows_per_block(tile_bytes_, f.n1, kFusedStreams, rows);
          rpb = std::min(rows, rpb + rpb % 2);
          edges = static_cast<double>(edges_between(rows, rpb));
        }
        return {4.0 * edges, 2.0 * edges, 0.0};
      }
      case MgPass::kResidRestrict: {
        if (tile_bytes_ == 0 || coarse <= 0) return {};
        const int cpb = std::max(1, rows_per_block(tile_bytes_, f.n1, kResidRestrictStreams, rows) / 2);
        const double edges = static_cast<double>(edges_between(coarse, cpb));
        return {4.0 * edges, 0.0, edges};
      }
    }
    return {};
  }

  void resid(const double* u, const double* v, double* r, Box b, const Stencil& a) const override {
    sweep(b, b.n1, kStencilStreams, 5 * b.n1,
          [&](int lo, int hi, int i3, double* buf) { mg_body::resid_rows(u, v, r, b, a, lo, hi, i3, buf); });
  }

  void psinv(const double* r, double* u, Box b, const Stencil& c) const override { smooth<false>(r, u, b, c); }
  void psinv_assign(const double* r, double* u, Box b, const Stencil& c) const override {
    zero_halo(u, b);
    smooth<true>(r, u, b, c);
  }

  void rprj3(const double* r, Box f, double* s, Box c) const override {
    sweep(c, 2 * f.n1, kRestrictStreams, 2 * f.n1, [&](int lo, int hi, int j3, double* buf) {
      for (int j2 = lo; j2 < hi; ++j2) mg_body::restrict_row(r, f, s, c, j2, j3, buf);
    });
  }

  void interp(const double* z, Box c, double* u, Box f) const override { prolong<false>(z, c, u, f); }
  void interp_assign(const double* z, Box c, double* u, Box f) const override { prolong<true>(z, c, u, f); }

  void resid_psinv_core(double* u, const double* v, double* r, Box b, const Stencil& a, const Stencil& c,
                        bool wraps_i1) const override {
    pipeline(nullptr, Box{}, u, v, r, b, a, c, wraps_i1);
  }

  void interp_resid_psinv_core(const double* z, Box cb, double* u, const double* v, double* r, Box b, const Stencil& a,
                               const Stencil& c, bool wraps_i1) const override {
    if (b.n3 - 2 <= 0 || b.n2 - 2 < 2 || b.n1 < 3 || b.n2 % 2 != 0 || b.n3 % 2 != 0)
      return MgOps::interp_resid_psinv_core(z, cb, u, v, r, b, a, c, wraps_i1);
    pipeline(z, cb, u, v, r, b, a, c, wraps_i1);
  }

  // With `wraps_i1` the core's rows were smoothed end to end (pipeline): only the face
  // planes and the first and last rows are left, each given its i1 halo once smoothed.
  void psinv_shell(const double* r, double* u, Box b, const Stencil& c, bool wraps_i1) const override {
    const int nt = std::min(threads_for(b.size() / std::max(1, b.n1)), std::max(1, b.n3 - 2));
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      std::vector<double> buf(2 * static_cast<std::size_t>(b.n1));
      const Range rg = thread_range(1, b.n3 - 1, omp_get_thread_num(), omp_get_num_threads());
      for (int i3 = rg.begin; i3 < rg.end; ++i3) {
        const bool face_plane = i3 == 1 || i3 == b.n3 - 2;
        for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
          if (face_plane || i2 == 1 || i2 == b.n2 - 2) {
            mg_body::smooth_row<false>(r, u, b, c, i2, i3, 1, b.n1 - 1, buf.data());
            if (wraps_i1) {
              u[b.at(0, i2, i3)] = u[b.at(b.n1 - 2, i2, i3)];
              u[b.at(b.n1 - 1, i2, i3)] = u[b.at(1, i2, i3)];
            }
          } else if (!wraps_i1) {
            u[b.at(1, i2, i3)] += smoother_at(r, b, 1, i2, i3, c);
            if (b.n1 - 2 > 1) u[b.at(b.n1 - 2, i2, i3)] += smoother_at(r, b, b.n1 - 2, i2, i3, c);
          }
        }
      }
    }
  }

  // Coarse plane by coarse plane: the three fine planes of r its restriction reads are
  // computed into a window (the middle two new, the first carried over from the previous
  // coarse plane), their i1 and i2 halos copied in the window, and never stored. Each thread
  // takes a slab of coarse planes and computes the one fine plane below it again; tiled, the
  // slab is walked in blocks of coarse rows (each computing one fine row below it again).
  std::pair<double, double> resid_rprj3(const double* u, const double* v, double* r, Box f, double* s, Box c,
                                        const Stencil& a) const override {
    if (c.n3 < 3 || c.n2 < 3 || c.n1 < 3) return MgOps::resid_rprj3(u, v, r, f, s, c, a);
    const std::size_t plane = static_cast<std::size_t>(f.n1) * static_cast<std::size_t>(f.n2);
    const int coarse_rows = c.n2 - 2;
    const int cpb = tile_bytes_ == 0
                        ? coarse_rows
                        : std::max(1, rows_per_block(tile_bytes_, f.n1, kResidRestrictStreams, f.n2 - 2) / 2);
    // One thread's slab; returns its share of the norm.
    auto body = [&](int t, int nt) {
      double sum = 0.0, big = 0.0;
      std::vector<double> win(3 * plane), buf(5 * static_cast<std::size_t>(f.n1));
      // Fine rows [lo, hi] of plane i3 of r into `dst` (a plane), rows below `owned` counted in
      // the norm when `count`. Row n2 - 1 is the halo: row 1 again.
      auto fill = [&](int i3, double* dst, bool count, int lo, int hi, int owned) {
        const int top = std::min(hi, f.n2 - 2);  // the interior rows, computed in one run
        if (i3 != f.n3 - 1 && top >= lo) mg_body::resid_rows_to(u, v, dst, f, a, lo, top + 1, i3, buf.data());
        for (int i2 = lo; i2 <= hi; ++i2) {
          double* row = dst + std::ptrdiff_t{i2} * f.n1;
          const int src = i2 == f.n2 - 1 ? 1 : i2;
          if (i3 == f.n3 - 1) {
            std::copy(r + f.at(0, src, i3), r + f.at(0, src + 1, i3), row);
          } else if (i2 > top) {
            mg_body::resid_row_to(u, v, row, f, a, src, i3, buf.data());
          }
          if (count && i2 < owned) {
#pragma omp simd reduction(+ : sum) reduction(max : big)
            for (int i1 = 1; i1 < f.n1 - 1; ++i1) {
              sum += row[i1] * row[i1];
              big = std::max(big, std::fabs(row[i1]));
            }
          }
          row[0] = row[f.n1 - 2];
          row[f.n1 - 1] = row[1];
        }
      };
      const Range rg = thread_range(1, c.n3 - 1, t, nt);
      for (int j2a = 1; j2a <= coarse_rows && rg.end > rg.begin; j2a += cpb) {
        const int j2b = std::min(coarse_rows + 1, j2a + cpb);
        const int lo = 2 * j2a - 1, hi = 2 * j2b - 1, owned = std::min(hi, f.n2 - 1);
        double* pm = win.data();
        double* pc = pm + plane;
        double* pp = pc + plane;
        fill(2 * rg.begin - 1, pm, true, lo, hi, owned);
        for (int j3 = rg.begin; j3 < rg.end; ++j3) {
          fill(2 * j3, pc, true, lo, hi, owned);
          fill(2 * j3 + 1, pp, j3 + 1 < rg.end, lo, hi, owned);  // the next slab's first plane otherwise
          for (int j2 = j2a; j2 < j2b; ++j2)
            mg_body::restrict_row_from(pm, pc, pp, f, s + c.at(0, j2, j3), c, j2, buf.data());
          std::swap(pm, pp);
        }
      }
      return std::pair<double, double>{sum, big};
    };
    const int nt = std::min(threads_for(f.size()), c.n3 - 2);
    if (nt == 1) return body(0, 1);
    double sum = 0.0, big = 0.0;
#pragma omp parallel num_threads(nt) reduction(+ : sum) reduction(max : big)
    {
      const auto [s_t, m_t] = body(omp_get_thread_num(), omp_get_num_threads());
      sum += s_t;
      big = std::max(big, m_t);
    }
    return {sum, big};
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
    sweep(b, b.n1, kStencilStreams, 5 * b.n1, [&](int lo, int hi, int i3, double* buf) {
      mg_body::smooth_rows<Assign>(r, u, b, c, lo, hi, i3, 1, b.n1 - 1, buf);
    });
  }

  // resid_psinv_core and, given the coarse block z, interp_resid_psinv_core. Block by block
  // of rows, plane by plane: the residual of plane i3, then the smoothing of plane i3 - 1,
  // whose r neighbours are all computed and whose u no residual still to come reads. A
  // block's last row waits for the next block's first (it needs that r), and a slab's first
  // and last planes wait for the neighbouring slabs (the barrier).
  //
  // r goes into a window of three planes, and only what is read later is stored: the points
  // within two of the halo (refreshing r's halo and psinv_shell read them), a slab's first
  // and last two planes (the smoothing after the barrier) and a block's last two rows (the
  // next block's first smoothed row). On the finest level that spares a write of r and its
  // read for ownership, 16 of about 40 bytes a point.
  //
  // With z, the interpolation u = u + Q z runs ahead: each fine plane pair (a coarse plane)
  // and each block's rows up to one row beyond the block are interpolated just before the
  // first residual that reads them, so u is read and written once. Every fine point is
  // interpolated exactly once: the coarse planes under a slab's first plane and the one below
  // it, which two threads' residuals read, are interpolated whole by the upper slab's thread
  // before the pipelines start.
  //
  // With `wraps_i1` (the block its own neighbour along i1), each row of r in the window gets
  // its i1 halo from its own ends as soon as it is computed, the core's rows are smoothed end
  // to end (points 1 and n1 - 2 included) and then given their u halo along i1 too, and only
  // the rows of r within two of the halo along i2 or i3 are stored, halo included: no one
  // reads another row's ends, so no pass walks two cache lines of every row of r or u.
  void pipeline(const double* z, Box cb, double* u, const double* v, double* r, Box b, const Stencil& a,
                const Stencil& c, bool wraps_i1) const {
    const int planes = b.n3 - 2, rows = b.n2 - 2;
    if (planes <= 0 || rows <= 0 || b.n1 < 3) return;
    int rpb = tile_bytes_ == 0 ? rows : rows_per_block(tile_bytes_, b.n1, kFusedStreams, rows);
    if (z != nullptr) rpb = std::min(rows, rpb + rpb % 2);  // even: rows are interpolated in pairs
    // With z, three planes or more per slab, so no two slab edges share a coarse plane.
    const int nt = std::max(1, std::min(threads_for(b.size()), z != nullptr ? planes / 3 : planes));
    auto slab = [&](int t) { return thread_range(1, b.n3 - 1, t, nt); };
    auto edge = [&](int cc) {
      for (int t = 1; t < nt; ++t)
        if (cc == (slab(t).begin - 1) / 2 || cc == slab(t).begin / 2) return true;
      return false;
    };
    // The i1 halo of rows [r0, r1) of a plane (of r or u; n1 points a row) from the rows' own ends.
    auto wrap_rows = [&](double* x, int r0, int r1) {
      if (!wraps_i1) return;
      for (int i2 = r0; i2 < r1; ++i2) {
        double* row = x + static_cast<std::size_t>(i2) * static_cast<std::size_t>(b.n1);
        row[0] = row[b.n1 - 2];
        row[b.n1 - 1] = row[1];
      }
    };
    // Core rows [lo, hi] of plane i3 smoothed from r's planes i3 - 1, i3 and i3 + 1 (`rm`,
    // `rc`, `rp`: the window's or the block's); nothing outside the core.
    const int p0 = wraps_i1 ? 1 : 2, p1 = wraps_i1 ? b.n1 - 1 : b.n1 - 2;
    auto smooth_rows = [&](int i3, int lo, int hi, const double* rm, const double* rc, const double* rp, double* buf) {
      const int first = std::max(2, lo), end = std::min(b.n2 - 3, hi) + 1;
      if (i3 < 2 || i3 > b.n3 - 3 || end <= first) return;
      mg_body::smooth_rows_from<false>(rm, rc, rp, u + b.at(0, 0, i3), b, c, first, end, p0, p1, buf);
      wrap_rows(u + b.at(0, 0, i3), first, end);  // no residual reads this plane's u any more
    };
    auto smooth_stored = [&](int i3, double* buf) {  // a slab's edge plane, from the block
      smooth_rows(i3, 1, b.n2 - 2, r + b.at(0, 0, i3 - 1), r + b.at(0, 0, i3), r + b.at(0, 0, i3 + 1), buf);
    };
    const std::size_t plane = static_cast<std::size_t>(b.n1) * static_cast<std::size_t>(b.n2);
    auto body = [&](int t) {
      std::vector<double> buf(static_cast<std::size_t>(std::max(5 * b.n1, 3 * cb.n1)));
      const std::unique_ptr<double[]> win(new double[3 * plane]);  // every point read is written first
      auto wp = [&](int i3) { return win.get() + static_cast<std::size_t>(i3 % 3) * plane; };
      const Range rg = slab(t);
      // Rows [r0, r1) of plane i3 of r from the window, where they are read later.
      auto store = [&](int i3, int r0, int r1) {
        const double* src = wp(i3);
        double* dst = r + b.at(0, 0, i3);
        const bool whole = i3 <= std::max(2, rg.begin + 1) || i3 >= std::min(b.n3 - 3, rg.end - 2) || b.n1 < 8;
        for (int i2 = r0; i2 < r1; ++i2) {
          const std::size_t o = static_cast<std::size_t>(i2) * static_cast<std::size_t>(b.n1);
          if (whole || i2 <= 2 || i2 >= b.n2 - 3 || (i2 >= r1 - 2 && r1 < b.n2 - 1)) {
            const int h = wraps_i1 ? 1 : 0;  // the row's halo too, where it is set
            std::copy(src + o + 1 - h, src + o + b.n1 - 1 + h, dst + o + 1 - h);
          } else if (!wraps_i1) {  // the row's ends, for r's halo and the shell
            for (const int i1 : {1, 2, b.n1 - 3, b.n1 - 2}) dst[o + i1] = src[o + i1];
          }
        }
      };
      if (z != nullptr && t > 0 && rg.end > rg.begin)
        for (int cc = (rg.begin - 1) / 2; cc <= rg.begin / 2; ++cc)
          for (int c2 = 0; c2 < cb.n2 - 1; ++c2) mg_body::prolong_row<false>(z, cb, u, b, c2, cc, buf.data());
      if (z != nullptr && nt > 1) {
#pragma omp barrier
      }
      for (int r0 = 1; r0 < b.n2 - 1 && rg.end > rg.begin; r0 += rpb) {
        const int r1 = std::min(b.n2 - 1, r0 + rpb);
        const int lo = r0 == 1 ? 1 : r0 - 1, hi = r1 == b.n2 - 1 ? r1 - 1 : r1 - 2;
        const int ca = r0 == 1 ? 0 : (r0 + 1) / 2, cz = (r1 + 1) / 2;  // coarse rows: fine rows to r1
        int next = t == 0 ? 0 : (rg.begin - 1) / 2;
        for (int i3 = rg.begin; i3 < rg.end; ++i3) {
          for (; z != nullptr && next <= std::min((i3 + 1) / 2, rg.end / 2); ++next)
            if (!edge(next))
              for (int c2 = ca; c2 < cz; ++c2) mg_body::prolong_row<false>(z, cb, u, b, c2, next, buf.data());
          double* w = wp(i3);
          if (r0 > 1) {  // the previous block's last two rows, for this block's first smoothed row
            for (int i2 = r0 - 2; i2 < r0; ++i2)
              std::copy(r + b.at(1, i2, i3), r + b.at(b.n1 - 1, i2, i3), w + b.at(1, i2, 0));
            wrap_rows(w, r0 - 2, r0);
          }
          mg_body::resid_rows_to(u, v, w, b, a, r0, r1, i3, buf.data());
          wrap_rows(w, r0, r1);
          store(i3, r0, r1);
          if (i3 - 1 > rg.begin) smooth_rows(i3 - 1, lo, hi, wp(i3 - 2), wp(i3 - 1), w, buf.data());
        }
      }
      if (nt > 1) {
#pragma omp barrier
      }
      if (rg.end > rg.begin) smooth_stored(rg.begin, buf.data());
      if (rg.end - 1 > rg.begin) smooth_stored(rg.end - 1, buf.data());
    };
    if (nt == 1) return body(0);
#pragma omp parallel num_threads(nt)
    body(omp_get_thread_num());
  }

  // interp: every fine point from the coarse block, two fine planes per coarse plane.
  template <bool Assign>
  void prolong(const double* z, Box c, double* u, Box f) const {
    // Coarse planes [0, n3-1) and rows [0, n2-1): sweep() walks [1, n-1), so shift by one.
    const Box shifted{c.n1, c.n2 + 1, c.n3 + 1};
    sweep(shifted, 2 * f.n1, kInterpStreams, 3 * c.n1, [&](int lo, int hi, int plane, double* buf) {
      for (int row = lo; row < hi; ++row) mg_body::prolong_row<Assign>(z, c, u, f, row - 1, plane - 1, buf);
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

  // fn(lo, hi, i3, scratch) for every interior row of `out` (planes and rows [1, n-1)), in
  // runs of consecutive rows [lo, hi) of one plane, the planes split over the threads. One
  // output row touches `row_points` points of each of `streams` streams: that sizes a
  // tile's block of rows.
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
        for (int i3 = rg.begin; i3 < rg.end; ++i3) fn(r0, r1, i3, buf.data());
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

PXQ_JOIN(MgFamily, "openmp", (construct<MgOps, OpenMpMgOps>));

}  // namespace pxq::kernels
