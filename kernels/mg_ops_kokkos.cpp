// Kokkos executor for the MG operators on the OpenMP execution space: 3-D MDRange policies
// over (plane, row, point), each point computing its stencil from the face, edge and corner
// sums directly (no line buffers). Untiled, an MDRange tile is one whole plane (NAS's order);
// tiled, a tile is a slab of planes by a block of rows sized by the tile, so the planes a
// stencil reads stay in cache while the tile is swept.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <memory>

#include "backend_impls.hpp"
#include "pxq/kernels/executor.hpp"

namespace pxq::kernels {
namespace {

using Space = Kokkos::OpenMP;
using Range3 = Kokkos::MDRangePolicy<Space, Kokkos::Rank<3, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                     Kokkos::IndexType<int>>;
using Flat = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

struct Sums {
  double face, edge, corner;
};

KOKKOS_INLINE_FUNCTION Sums neighbour_sums(const double* x, const Box& b, int i1, int i2, int i3) {
  auto at = [&](int d1, int d2, int d3) { return x[b.at(i1 + d1, i2 + d2, i3 + d3)]; };
  const double face = at(-1, 0, 0) + at(1, 0, 0) + at(0, -1, 0) + at(0, 1, 0) + at(0, 0, -1) + at(0, 0, 1);
  const double edge = at(-1, -1, 0) + at(1, -1, 0) + at(-1, 1, 0) + at(1, 1, 0) + at(-1, 0, -1) + at(1, 0, -1) +
                      at(-1, 0, 1) + at(1, 0, 1) + at(0, -1, -1) + at(0, 1, -1) + at(0, -1, 1) + at(0, 1, 1);
  double corner = 0.0;
  for (int d3 = -1; d3 <= 1; d3 += 2)
    for (int d2 = -1; d2 <= 1; d2 += 2)
      for (int d1 = -1; d1 <= 1; d1 += 2) corner += at(d1, d2, d3);
  return {face, edge, corner};
}

class KokkosMgOps final : public MgOps, private ExecutorShape {
 public:
  using ExecutorShape::ExecutorShape;

  void resid(const double* u, const double* v, double* r, Box b, const Stencil& a) const override {
    const Stencil s = a;
    Kokkos::parallel_for(
        "pxq::mg::resid", interior(b, b.n1, 5), KOKKOS_LAMBDA(int i3, int i2, int i1) {
          const Sums n = neighbour_sums(u, b, i1, i2, i3);
          const std::size_t p = b.at(i1, i2, i3);
          r[p] = v[p] - s.w[0] * u[p] - s.w[1] * n.face - s.w[2] * n.edge - s.w[3] * n.corner;
        });
    Kokkos::fence();
  }
  void psinv(const double* r, double* u, Box b, const Stencil& c) const override { smooth(r, u, b, c, false); }
  void psinv_assign(const double* r, double* u, Box b, const Stencil& c) const override {
    zero(u, b);
    smooth(r, u, b, c, true);
  }
  void rprj3(const double* r, Box f, double* s, Box c) const override {
    Kokkos::parallel_for(
        "pxq::mg::rprj3", interior(c, 2 * f.n1, 4), KOKKOS_LAMBDA(int j3, int j2, int j1) {
          const int i1 = 2 * j1, i2 = 2 * j2, i3 = 2 * j3;
          const Sums n = neighbour_sums(r, f, i1, i2, i3);
          s[c.at(j1, j2, j3)] = 0.5 * r[f.at(i1, i2, i3)] + 0.25 * n.face + 0.125 * n.edge + 0.0625 * n.corner;
        });
    Kokkos::fence();
  }
  void interp(const double* z, Box c, double* u, Box f) const override { prolong(z, c, u, f, false); }
  void interp_assign(const double* z, Box c, double* u, Box f) const override { prolong(z, c, u, f, true); }

  // Two sweeps: Kokkos has no ordered plane pipeline; the split still lets the caller refresh
  // r's halo while the shell is all that is left.
  void resid_psinv_core(double* u, const double* v, double* r, Box b, const Stencil& a,
                        const Stencil& c) const override {
    resid(u, v, r, b, a);
    if (b.n1 < 5 || b.n2 < 5 || b.n3 < 5) return;
    const Stencil s = c;
    Kokkos::parallel_for(
        "pxq::mg::psinv_core", policy(2, b.n3 - 2, 2, b.n2 - 2, 2, b.n1 - 2, b.n1, 5),
        KOKKOS_LAMBDA(int i3, int i2, int i1) {
          const Sums n = neighbour_sums(r, b, i1, i2, i3);
          const std::size_t p = b.at(i1, i2, i3);
          u[p] += s.w[0] * r[p] + s.w[1] * n.face + s.w[2] * n.edge + s.w[3] * n.corner;
        });
    Kokkos::fence();
  }
  void psinv_shell(const double* r, double* u, Box b, const Stencil& c) const override {
    const Stencil s = c;
    Kokkos::parallel_for(
        "pxq::mg::psinv_shell", Flat(1, b.n3 - 1), KOKKOS_LAMBDA(std::int64_t p3) {
          const int i3 = static_cast<int>(p3);
          const bool face_plane = i3 == 1 || i3 == b.n3 - 2;
          for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
            const bool full = face_plane || i2 == 1 || i2 == b.n2 - 2;
            for (int i1 = 1; i1 < b.n1 - 1; i1 += (full || i1 == b.n1 - 2) ? 1 : b.n1 - 3)
              u[b.at(i1, i2, i3)] += smoother_at(r, b, i1, i2, i3, s);
          }
        });
    Kokkos::fence();
  }

  std::pair<double, double> norm2(const double* r, Box b) const override {
    double s = 0.0, m = 0.0;
    Kokkos::parallel_reduce(
        "pxq::mg::norm2", interior(b, b.n1, 1),
        KOKKOS_LAMBDA(int i3, int i2, int i1, double& acc) {
          const double x = r[b.at(i1, i2, i3)];
          acc += x * x;
        },
        s);
    Kokkos::parallel_reduce(
        "pxq::mg::normmax", interior(b, b.n1, 1),
        KOKKOS_LAMBDA(int i3, int i2, int i1, double& acc) {
          const double x = r[b.at(i1, i2, i3)];
          const double ax = x < 0 ? -x : x;
          if (ax > acc) acc = ax;
        },
        Kokkos::Max<double>(m));
    return {s, m};
  }
  void zero(double* u, Box b) const override {
    Kokkos::parallel_for(
        "pxq::mg::zero", Flat(0, static_cast<std::int64_t>(b.size())), KOKKOS_LAMBDA(std::int64_t i) { u[i] = 0.0; });
    Kokkos::fence();
  }

 private:
  void smooth(const double* r, double* u, Box b, const Stencil& c, bool assign) const {
    const Stencil s = c;
    Kokkos::parallel_for(
        "pxq::mg::psinv", interior(b, b.n1, 5), KOKKOS_LAMBDA(int i3, int i2, int i1) {
          const Sums n = neighbour_sums(r, b, i1, i2, i3);
          const std::size_t p = b.at(i1, i2, i3);
          const double du = s.w[0] * r[p] + s.w[1] * n.face + s.w[2] * n.edge + s.w[3] * n.corner;
          u[p] = assign ? du : u[p] + du;
        });
    Kokkos::fence();
  }

  // Coarse point (c1, c2, c3), halo included up to n-2, gives the 8 fine points 2c..2c+1.
  void prolong(const double* z, Box c, double* u, Box f, bool assign) const {
    Kokkos::parallel_for(
        "pxq::mg::interp", policy(0, c.n3 - 1, 0, c.n2 - 1, 0, c.n1 - 1, 2 * f.n1, 6),
        KOKKOS_LAMBDA(int c3, int c2, int c1) {
          auto zc = [&](int d1, int d2, int d3) { return z[c.at(c1 + d1, c2 + d2, c3 + d3)]; };
          for (int e3 = 0; e3 < 2; ++e3)
            for (int e2 = 0; e2 < 2; ++e2)
              for (int e1 = 0; e1 < 2; ++e1) {
                // Fine offset 0 coincides with the coarse point; offset 1 averages it with
                // its upper neighbour along that axis.
                double sum = 0.0;
                for (int k3 = 0; k3 <= e3; ++k3)
                  for (int k2 = 0; k2 <= e2; ++k2)
                    for (int k1 = 0; k1 <= e1; ++k1) sum += zc(k1, k2, k3);
                const double w = 1.0 / static_cast<double>(1 << (e1 + e2 + e3));
                double& dst = u[f.at(2 * c1 + e1, 2 * c2 + e2, 2 * c3 + e3)];
                dst = assign ? w * sum : dst + w * sum;
              }
        });
    Kokkos::fence();
  }

  Range3 interior(Box b, int row_points, int streams) const {
    return policy(1, b.n3 - 1, 1, b.n2 - 1, 1, b.n1 - 1, row_points, streams);
  }

  Range3 policy(int p0, int p1, int r0, int r1, int q0, int q1, int row_points, int streams) const {
    const int planes = std::max(1, p1 - p0), rows = std::max(1, r1 - r0), points = std::max(1, q1 - q0);
    int tile_planes = 1, tile_rows = rows;
    if (tile_bytes_ > 0) {
      tile_planes = (planes + threads_ - 1) / threads_;
      tile_rows = rows_per_block(tile_bytes_, row_points, streams, rows);
    }
    return Range3({p0, r0, q0}, {std::max(p0, p1), std::max(r0, r1), std::max(q0, q1)},
                  {tile_planes, tile_rows, points});
  }
};

}  // namespace

std::unique_ptr<MgOps> make_mg_ops_kokkos(int threads, std::size_t tile_bytes) {
  return std::make_unique<KokkosMgOps>(threads, tile_bytes);
}

}  // namespace pxq::kernels
