// The frozen MG reference: one thread, each operator written from its stencil definition,
// point by point (27 neighbours weighted by their distance class), not from NAS's
// line-buffered loops the executors use. Compiled without vectorisation.
#include <algorithm>
#include <cmath>
#include <memory>

#include "pxq/kernels/mg_ops.hpp"

namespace pxq::kernels {
namespace {

// Number of non-zero offsets: 0 centre, 1 face, 2 edge, 3 corner.
inline int distance_class(int d1, int d2, int d3) { return (d1 != 0) + (d2 != 0) + (d3 != 0); }

// sum over the 27 neighbours of (i1, i2, i3) of w[class] * x.
double stencil_sum(const double* x, Box b, int i1, int i2, int i3, const double w[4]) {
  double sum = 0.0;
  for (int d3 = -1; d3 <= 1; ++d3)
    for (int d2 = -1; d2 <= 1; ++d2)
      for (int d1 = -1; d1 <= 1; ++d1) sum += w[distance_class(d1, d2, d3)] * x[b.at(i1 + d1, i2 + d2, i3 + d3)];
  return sum;
}

template <class Fn>
void for_interior(Box b, Fn&& fn) {
  for (int i3 = 1; i3 < b.n3 - 1; ++i3)
    for (int i2 = 1; i2 < b.n2 - 1; ++i2)
      for (int i1 = 1; i1 < b.n1 - 1; ++i1) fn(i1, i2, i3);
}

// Interpolation weights along one axis: fine f = 2c coincides with coarse c; fine 2c + 1 is
// halfway between c and c + 1.
struct AxisWeights {
  int c[2];
  double w[2];
  int count;
};
AxisWeights axis_weights(int f) {
  if (f % 2 == 0) return {{f / 2, 0}, {1.0, 0.0}, 1};
  return {{(f - 1) / 2, (f + 1) / 2}, {0.5, 0.5}, 2};
}

class ReferenceMgOps final : public MgOps {
 public:
  void resid(const double* u, const double* v, double* r, Box b, const Stencil& a) const override {
    for_interior(b, [&](int i1, int i2, int i3) {
      const std::size_t p = b.at(i1, i2, i3);
      r[p] = v[p] - stencil_sum(u, b, i1, i2, i3, a.w);
    });
  }
  void psinv(const double* r, double* u, Box b, const Stencil& c) const override {
    for_interior(b, [&](int i1, int i2, int i3) { u[b.at(i1, i2, i3)] += stencil_sum(r, b, i1, i2, i3, c.w); });
  }
  void rprj3(const double* r, Box fine, double* s, Box coarse) const override {
    for_interior(coarse, [&](int j1, int j2, int j3) {
      s[coarse.at(j1, j2, j3)] = stencil_sum(r, fine, 2 * j1, 2 * j2, 2 * j3, kRestriction.w);
    });
  }
  void interp(const double* z, Box coarse, double* u, Box fine) const override {
    for (int f3 = 0; f3 < fine.n3; ++f3)
      for (int f2 = 0; f2 < fine.n2; ++f2)
        for (int f1 = 0; f1 < fine.n1; ++f1) u[fine.at(f1, f2, f3)] += interp_at(z, coarse, f1, f2, f3);
  }
  std::pair<double, double> norm2(const double* r, Box b) const override {
    double s = 0.0, m = 0.0;
    for_interior(b, [&](int i1, int i2, int i3) {
      const double x = r[b.at(i1, i2, i3)];
      s += x * x;
      m = std::max(m, std::fabs(x));
    });
    return {s, m};
  }
  void zero(double* u, Box b) const override { std::fill(u, u + b.size(), 0.0); }
  void psinv_assign(const double* r, double* u, Box b, const Stencil& c) const override {
    zero(u, b);
    psinv(r, u, b, c);
  }
  void interp_assign(const double* z, Box coarse, double* u, Box fine) const override {
    zero(u, fine);
    interp(z, coarse, u, fine);
  }
  // The core is always the points with no halo neighbour; wrapping along i1, r's i1 halo is
  // written before the core is smoothed.
  void resid_psinv_core(double* u, const double* v, double* r, Box b, const Stencil& a, const Stencil& c,
                        bool wraps_i1) const override {
    resid(u, v, r, b, a);
    if (wraps_i1) wrap_rows_i1(r, b);
    for_interior(b, [&](int i1, int i2, int i3) {
      if (!on_shell(b, i1, i2, i3)) u[b.at(i1, i2, i3)] += stencil_sum(r, b, i1, i2, i3, c.w);
    });
  }
  void psinv_shell(const double* r, double* u, Box b, const Stencil& c, bool wraps_i1) const override {
    for_interior(b, [&](int i1, int i2, int i3) {
      if (on_shell(b, i1, i2, i3)) u[b.at(i1, i2, i3)] += stencil_sum(r, b, i1, i2, i3, c.w);
    });
    if (wraps_i1) wrap_rows_i1(u, b);
  }

 private:
  static double interp_at(const double* z, Box coarse, int f1, int f2, int f3) {
    const AxisWeights a1 = axis_weights(f1), a2 = axis_weights(f2), a3 = axis_weights(f3);
    double sum = 0.0;
    for (int k3 = 0; k3 < a3.count; ++k3)
      for (int k2 = 0; k2 < a2.count; ++k2)
        for (int k1 = 0; k1 < a1.count; ++k1)
          sum += a1.w[k1] * a2.w[k2] * a3.w[k3] * z[coarse.at(a1.c[k1], a2.c[k2], a3.c[k3])];
    return sum;
  }
};

}  // namespace

double smoother_at(const double* r, Box b, int i1, int i2, int i3, const Stencil& c) {
  return stencil_sum(r, b, i1, i2, i3, c.w);
}

EdgeRows MgOps::edge_rows(MgPass /*pass*/, Box /*level*/) const { return {}; }

std::pair<double, double> MgOps::resid_rprj3(const double* u, const double* v, double* r, Box f, double* s, Box c,
                                             const Stencil& a) const {
  resid(u, v, r, f, a);
  // r's halo along i1 and i2, periodic, on every plane the restriction reads (the upper halo
  // plane's interior is the caller's).
  for (int i3 = 1; i3 < f.n3; ++i3) {
    for (int i2 = 1; i2 < f.n2 - 1; ++i2) {
      r[f.at(0, i2, i3)] = r[f.at(f.n1 - 2, i2, i3)];
      r[f.at(f.n1 - 1, i2, i3)] = r[f.at(1, i2, i3)];
    }
    std::copy(r + f.at(0, f.n2 - 2, i3), r + f.at(0, f.n2 - 1, i3), r + f.at(0, 0, i3));
    std::copy(r + f.at(0, 1, i3), r + f.at(0, 2, i3), r + f.at(0, f.n2 - 1, i3));
  }
  rprj3(r, f, s, c);
  return norm2(r, f);
}

void MgOps::interp_resid_psinv_core(const double* z, Box coarse, double* u, const double* v, double* r, Box b,
                                    const Stencil& a, const Stencil& c, bool wraps_i1) const {
  interp(z, coarse, u, b);
  resid_psinv_core(u, v, r, b, a, c, wraps_i1);
}

std::unique_ptr<MgOps> make_mg_ops_reference() { return std::make_unique<ReferenceMgOps>(); }

}  // namespace pxq::kernels
