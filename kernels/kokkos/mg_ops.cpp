// Kokkos executor for the MG operators on the OpenMP execution space. It runs MG's one body
// (mg_body.hpp: NAS's row operators with line buffers), one team per row with the line
// buffers in the team's scratch. Untiled, the rows go plane by plane (NAS's order); tiled,
// block of rows by block of rows, each block swept over all planes, so the planes a stencil
// reads stay in cache (the OpenMP executor's order).
#include <Kokkos_Core.hpp>
// The bodies' functions are called inside Kokkos kernels (portable.hpp).
#define PXQ_INLINE KOKKOS_INLINE_FUNCTION
#include <algorithm>
#include <cmath>
#include <memory>

#include "mg_body.hpp"
#include "pxq/kernels/executor.hpp"
#include "pxq/kernels/mg_ops.hpp"

namespace pxq::kernels {
namespace {

using Space = Kokkos::OpenMP;
using Teams = Kokkos::TeamPolicy<Space>;
using Flat = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

// Row-points and streams of one output row, which size a tile's block of rows (as OpenMP's).
constexpr int kStencilStreams = 5, kRestrictStreams = 4, kInterpStreams = 6;

// {sum of squares, largest magnitude} over the interior, row by row: the functor form of
// parallel_reduce, whose array value reduces both in one pass.
struct RowNorms {
  using value_type = double[];
  using size_type = unsigned;
  const unsigned value_count = 2;
  const double* r;
  Box b;
  int rows2;  // interior rows per plane
  RowNorms(const double* r_, Box b_, int rows2_) : r(r_), b(b_), rows2(rows2_) {}

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t row, value_type acc) const {
    const int i2 = 1 + static_cast<int>(row % rows2), i3 = 1 + static_cast<int>(row / rows2);
    const double* x = r + b.at(0, i2, i3);
    double s = 0.0, m = 0.0;
#pragma omp simd reduction(+ : s) reduction(max : m)
    for (int i1 = 1; i1 < b.n1 - 1; ++i1) {
      s += x[i1] * x[i1];
      m = m > std::fabs(x[i1]) ? m : std::fabs(x[i1]);
    }
    acc[0] += s;
    if (m > acc[1]) acc[1] = m;
  }
  KOKKOS_INLINE_FUNCTION void join(volatile value_type dst, const volatile value_type src) const {
    dst[0] += src[0];
    if (src[1] > dst[1]) dst[1] = src[1];
  }
  KOKKOS_INLINE_FUNCTION void init(value_type v) const { v[0] = v[1] = 0.0; }
};

class KokkosMgOps final : public MgOps, private ExecutorShape {
 public:
  using ExecutorShape::ExecutorShape;

  // Per edge between two blocks of rows and per plane, as rows() walks them: a stencil reads
  // its input's row on each side of the block again (2 rows), the restriction 1.5 fine rows a
  // fine plane, the interpolation half a fine row's worth of coarse rows. The fused passes
  // are two sweeps here (the core smoothed over rows 2..n-3), the residual fused with the
  // restriction the residual and the restriction one after the other.
  EdgeRows edge_rows(MgPass pass, Box f) const override {
    const int rows = f.n2 - 2, coarse = rows / 2;
    const double stencil = 2.0 * block_edges(tile_bytes_, f.n1, kStencilStreams, rows);
    const double restriction = 1.5 * block_edges(tile_bytes_, 2 * f.n1, kRestrictStreams, coarse);
    const double interp = 0.5 * block_edges(tile_bytes_, 2 * f.n1, kInterpStreams, coarse + 1);
    const double core = 2.0 * block_edges(tile_bytes_, f.n1, kStencilStreams, rows - 2);
    switch (pass) {
      case MgPass::kResid:
      case MgPass::kSmooth:
        return {stencil, 0.0, 0.0};
      case MgPass::kRestrict:
        return {restriction, 0.0, 0.0};
      case MgPass::kInterp:
        return {interp, 0.0, 0.0};
      case MgPass::kResidSmooth:
        return {stencil + core, 0.0, 0.0};
      case MgPass::kInterpResidSmooth:
        return {interp + stencil + core, 0.0, 0.0};
      case MgPass::kResidRestrict:
        return {stencil + restriction, 0.0, 0.0};
    }
    return {};
  }

  void resid(const double* u, const double* v, double* r, Box b, const Stencil& a) const override {
    rows("pxq::mg::resid", b, b.n1, kStencilStreams, 2 * b.n1,
         [=](int i2, int i3, double* buf) { mg_body::resid_row(u, v, r, b, a, i2, i3, buf); });
  }
  void psinv(const double* r, double* u, Box b, const Stencil& c) const override {
    rows("pxq::mg::psinv", b, b.n1, kStencilStreams, 2 * b.n1,
         [=](int i2, int i3, double* buf) { mg_body::smooth_row<false>(r, u, b, c, i2, i3, 1, b.n1 - 1, buf); });
  }
  void psinv_assign(const double* r, double* u, Box b, const Stencil& c) const override {
    zero(u, b);
    rows("pxq::mg::psinv_assign", b, b.n1, kStencilStreams, 2 * b.n1,
         [=](int i2, int i3, double* buf) { mg_body::smooth_row<true>(r, u, b, c, i2, i3, 1, b.n1 - 1, buf); });
  }
  void rprj3(const double* r, Box f, double* s, Box c) const override {
    rows("pxq::mg::rprj3", c, 2 * f.n1, kRestrictStreams, 2 * f.n1,
         [=](int j2, int j3, double* buf) { mg_body::restrict_row(r, f, s, c, j2, j3, buf); });
  }
  void interp(const double* z, Box c, double* u, Box f) const override { prolong<false>(z, c, u, f); }
  void interp_assign(const double* z, Box c, double* u, Box f) const override { prolong<true>(z, c, u, f); }

  // Two sweeps: Kokkos has no ordered plane pipeline; the split still lets the caller refresh
  // r's halo while the shell is all that is left. The core: planes, rows and points 2..n-3
  // (wrapping along i1, r's i1 halo is written first, plane by plane).
  void resid_psinv_core(double* u, const double* v, double* r, Box b, const Stencil& a, const Stencil& c,
                        bool wraps_i1) const override {
    resid(u, v, r, b, a);
    if (wraps_i1) {
      Kokkos::parallel_for(
          "pxq::mg::wrap_i1", Flat(1, b.n3 - 1), KOKKOS_LAMBDA(std::int64_t p3) {
            const int i3 = static_cast<int>(p3);
            for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
              r[b.at(0, i2, i3)] = r[b.at(b.n1 - 2, i2, i3)];
              r[b.at(b.n1 - 1, i2, i3)] = r[b.at(1, i2, i3)];
            }
          });
      Kokkos::fence();
    }
    if (b.n1 < 5 || b.n2 < 5 || b.n3 < 5) return;
    const Box core{b.n1, b.n2 - 2, b.n3 - 2};  // rows() walks [1, n-1): shifted by one
    rows("pxq::mg::psinv_core", core, b.n1, kStencilStreams, 2 * b.n1, [=](int i2, int i3, double* buf) {
      mg_body::smooth_row<false>(r, u, b, c, i2 + 1, i3 + 1, 2, b.n1 - 2, buf);
    });
  }
  // Wrapping along i1, each row is given its u halo along i1 once its shell points are done.
  void psinv_shell(const double* r, double* u, Box b, const Stencil& c, bool wraps_i1) const override {
    const Stencil s = c;
    Kokkos::parallel_for(
        "pxq::mg::psinv_shell", Flat(1, b.n3 - 1), KOKKOS_LAMBDA(std::int64_t p3) {
          const int i3 = static_cast<int>(p3);
          const bool face_plane = i3 == 1 || i3 == b.n3 - 2;
          for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
            const bool full = face_plane || i2 == 1 || i2 == b.n2 - 2;
            for (int i1 = 1; i1 < b.n1 - 1; i1 += (full || i1 == b.n1 - 2) ? 1 : b.n1 - 3)
              u[b.at(i1, i2, i3)] += smoother_at(r, b, i1, i2, i3, s);
            if (wraps_i1) {
              u[b.at(0, i2, i3)] = u[b.at(b.n1 - 2, i2, i3)];
              u[b.at(b.n1 - 1, i2, i3)] = u[b.at(1, i2, i3)];
            }
          }
        });
    Kokkos::fence();
  }

  // One pass over the interior rows: each row's sum of squares and largest magnitude in one
  // vectorised loop, both reduced at once (Kokkos's array reduction).
  std::pair<double, double> norm2(const double* r, Box b) const override {
    const int rows2 = std::max(0, b.n2 - 2), rows3 = std::max(0, b.n3 - 2);
    double sm[2] = {0.0, 0.0};
    if (rows2 > 0 && rows3 > 0 && b.n1 > 2)
      Kokkos::parallel_reduce("pxq::mg::norm2", Flat(0, static_cast<std::int64_t>(rows2) * rows3),
                              RowNorms{r, b, rows2}, sm);
    return {sm[0], sm[1]};
  }
  void zero(double* u, Box b) const override {
    Kokkos::parallel_for(
        "pxq::mg::zero", Flat(0, static_cast<std::int64_t>(b.size())), KOKKOS_LAMBDA(std::int64_t i) { u[i] = 0.0; });
    Kokkos::fence();
  }

 private:
  // interp: every fine point from the coarse block, two fine planes per coarse plane.
  template <bool Assign>
  void prolong(const double* z, Box c, double* u, Box f) const {
    // Coarse planes [0, n3-1) and rows [0, n2-1): rows() walks [1, n-1), so shift by one.
    const Box shifted{c.n1, c.n2 + 1, c.n3 + 1};
    rows("pxq::mg::interp", shifted, 2 * f.n1, kInterpStreams, 3 * c.n1,
         [=](int row, int plane, double* buf) { mg_body::prolong_row<Assign>(z, c, u, f, row - 1, plane - 1, buf); });
  }

  // fn(i2, i3, scratch) for every interior row of `out` (rows and planes [1, n-1)), one team
  // per row with `scratch` doubles of its own. Tiled, the league walks block of rows by block
  // of rows, each over every plane; untiled, plane by plane.
  template <class Fn>
  void rows(const char* name, Box out, int row_points, int streams, int scratch, Fn fn) const {
    const int planes = out.n3 - 2, rows = out.n2 - 2;
    if (planes <= 0 || rows <= 0) return;
    const int rpb = tile_bytes_ == 0 ? rows : rows_per_block(tile_bytes_, row_points, streams, rows);
    const int blocks = (rows + rpb - 1) / rpb;
    const std::size_t bytes = static_cast<std::size_t>(scratch) * sizeof(double);
    Kokkos::parallel_for(
        name, Teams(blocks * planes * rpb, 1).set_scratch_size(1, Kokkos::PerTeam(static_cast<int>(bytes))),
        KOKKOS_LAMBDA(const Teams::member_type& team) {
          const int l = team.league_rank();
          const int block = l / (planes * rpb), rest = l % (planes * rpb);
          const int i3 = 1 + rest / rpb, i2 = 1 + block * rpb + rest % rpb;
          if (i2 <= rows) fn(i2, i3, static_cast<double*>(team.team_scratch(1).get_shmem(bytes)));
        });
    Kokkos::fence();
  }
};

}  // namespace

PXQ_JOIN(MgFamily, "kokkos", (construct<MgOps, KokkosMgOps>));

}  // namespace pxq::kernels
