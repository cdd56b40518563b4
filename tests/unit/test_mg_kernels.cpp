// The MG operators: every executor (OpenMP with 1 and 2 threads, tiled with blocks of rows
// that do and do not divide the planes, Kokkos) against the frozen reference, on small
// blocks of uneven sizes with random halos; the fused passes against the sweeps they
// replace; and the reference with a periodic halo against the stencils written in global,
// wrapped indices.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "executors.hpp"
#include "expect_close.hpp"
#include "pxq/comm/halo.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/mg_ops.hpp"

namespace {

using pxq::kernels::Backend;
using pxq::kernels::Box;
using pxq::kernels::MgOps;
using pxq::kernels::Stencil;

const Stencil kA{{-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0}};
const Stencil kC{{-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0, 0.0}};

std::vector<double> random_field(const Box& b, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<double> v(b.size());
  for (auto& x : v) x = val(gen);
  return v;
}

std::vector<Exec> executors() {
  return with_backends<pxq::kernels::MgFamily>({{"openmp", 1, 0, "flat"},
                                                {"openmp", 2, 0, "hybrid"},
                                                {"openmp", 1, 200, "tiled 200 B (one row per block)"},
                                                {"openmp", 2, 1000, "tiled 1000 B, 2 threads"},
                                                {"openmp", 2, 5000, "tiled 5000 B, 2 threads"}},
                                               {{"openmp", 2, 0, ""}, {"openmp", 2, 1000, " tiled"}});
}

std::string dims(const Box& b) {
  return std::to_string(b.n1) + "x" + std::to_string(b.n2) + "x" + std::to_string(b.n3);
}

// Blocks (with halo): cubes, uneven boxes, thin ones (one or two interior points on an axis).
const std::vector<Box> kBoxes = {{10, 10, 10}, {13, 9, 7}, {6, 11, 5}, {3, 8, 9}, {9, 4, 3}, {34, 18, 12}};

// The coarse block under a fine one of even interior extents.
Box coarse_of(const Box& f) { return {(f.n1 - 2) / 2 + 2, (f.n2 - 2) / 2 + 2, (f.n3 - 2) / 2 + 2}; }
const std::vector<Box> kFineBoxes = {{10, 10, 10}, {18, 6, 10}, {4, 8, 6}, {34, 18, 12}};

// Runs check(ops, reference, block, what) for every executor and block.
template <class Check>
void for_every_block(const std::vector<Box>& boxes, Check&& check) {
  const auto ref = pxq::kernels::make_mg_ops_reference();
  for (const auto& ex : executors()) {
    const auto ops = pxq::kernels::make_mg_ops(ex.backend, ex.threads, ex.tile_bytes);
    for (const Box& b : boxes) check(*ops, *ref, b, ex.name + " " + dims(b));
  }
}

TEST(MgKernels, ResidAndPsinvMatchTheReference) {
  for_every_block(kBoxes, [](const MgOps& ops, const MgOps& ref, const Box& b, const std::string& what) {
    const auto u = random_field(b, 1), v = random_field(b, 2);
    auto r_ref = random_field(b, 3), r = r_ref;
    ref.resid(u.data(), v.data(), r_ref.data(), b, kA);
    ops.resid(u.data(), v.data(), r.data(), b, kA);
    expect_close(r, r_ref, "resid " + what);
    // In place, as NAS does on the coarser levels: r = r - A u.
    auto w_ref = v, w = v;
    ref.resid(u.data(), w_ref.data(), w_ref.data(), b, kA);
    ops.resid(u.data(), w.data(), w.data(), b, kA);
    expect_close(w, w_ref, "resid in place " + what);
    auto s_ref = u, s = u;
    ref.psinv(v.data(), s_ref.data(), b, kC);
    ops.psinv(v.data(), s.data(), b, kC);
    expect_close(s, s_ref, "psinv " + what);
    ref.psinv_assign(v.data(), s_ref.data(), b, kC);
    ops.psinv_assign(v.data(), s.data(), b, kC);
    expect_close(s, s_ref, "psinv_assign " + what);
    const auto n_ref = ref.norm2(v.data(), b), n = ops.norm2(v.data(), b);
    EXPECT_NEAR(n.first, n_ref.first, 1e-12 * n_ref.first) << what;
    EXPECT_EQ(n.second, n_ref.second) << what;
  });
}

// r only where the fused passes leave it specified (pxq::kernels::on_band, or
// on_band_wrapping_i1 for a block that wraps along i1).
void expect_close_on_band(const std::vector<double>& got, const std::vector<double>& want, const Box& b,
                          const std::string& what, bool wraps_i1 = false) {
  ASSERT_EQ(got.size(), want.size());
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1) {
        if (wraps_i1 ? !pxq::kernels::on_band_wrapping_i1(b, i2, i3) : !pxq::kernels::on_band(b, i1, i2, i3)) continue;
        const std::size_t i = b.at(i1, i2, i3);
        ASSERT_NEAR(got[i], want[i], 1e-12 * (1.0 + std::abs(want[i])))
            << what << " at " << i1 << "," << i2 << "," << i3;
      }
}

// A halo refresh of x: every halo point from `halo` (a neighbour's values, random here); for a
// block that wraps along i1, the halo along i2 and i3 only (the fused pass wrote the i1 halo
// of the interior rows), and for the sweeps it stands in for, r's i1 halo from each row's
// own ends first, as the planned exchange copies it.
void refresh_halo(std::vector<double>& x, const std::vector<double>& halo, const Box& b, bool wraps_i1,
                  bool copy_i1 = false) {
  if (copy_i1) pxq::kernels::wrap_rows_i1(x.data(), b);
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1) {
        const bool row_halo = i2 == 0 || i3 == 0 || i2 == b.n2 - 1 || i3 == b.n3 - 1;
        if (row_halo || (!wraps_i1 && (i1 == 0 || i1 == b.n1 - 1))) x[b.at(i1, i2, i3)] = halo[b.at(i1, i2, i3)];
      }
}

TEST(MgKernels, FusedResidualAndSmoothingEqualTheSweepsTheyReplace) {
  for (const bool wraps : {false, true}) {
    for_every_block(kBoxes, [&](const MgOps& ops, const MgOps& ref, const Box& b, const std::string& name) {
      const std::string what = name + (wraps ? " wrapping along i1" : "");
      const auto v = random_field(b, 5), halo = random_field(b, 6);
      // The sweeps: resid, a halo refresh, psinv.
      auto u_ref = random_field(b, 4), r_ref = random_field(b, 7);
      auto u = u_ref, r = r_ref;
      ref.resid(u_ref.data(), v.data(), r_ref.data(), b, kA);
      refresh_halo(r_ref, halo, b, wraps, wraps);
      ref.psinv(r_ref.data(), u_ref.data(), b, kC);
      if (wraps) pxq::kernels::wrap_rows_i1(u_ref.data(), b);  // the passes write u's i1 halo
      ops.resid_psinv_core(u.data(), v.data(), r.data(), b, kA, kC, wraps);
      refresh_halo(r, halo, b, wraps);
      ops.psinv_shell(r.data(), u.data(), b, kC, wraps);
      expect_close_on_band(r, r_ref, b, "fused r " + what, wraps);
      expect_close(u, u_ref, "fused u " + what);
    });
  }
}

TEST(MgKernels, RestrictionAndInterpolationMatchTheReference) {
  const auto ref = pxq::kernels::make_mg_ops_reference();
  for (const auto& ex : executors()) {
    const auto ops = pxq::kernels::make_mg_ops(ex.backend, ex.threads, ex.tile_bytes);
    for (const Box& f : kFineBoxes) {
      const Box c = coarse_of(f);
      const std::string what = ex.name + " fine " + dims(f);
      const auto r = random_field(f, 8);
      auto s_ref = random_field(c, 9), s = s_ref;
      ref->rprj3(r.data(), f, s_ref.data(), c);
      ops->rprj3(r.data(), f, s.data(), c);
      expect_close(s, s_ref, "rprj3 " + what);
      const auto z = random_field(c, 10);
      auto u_ref = random_field(f, 11), u = u_ref;
      ref->interp(z.data(), c, u_ref.data(), f);
      ops->interp(z.data(), c, u.data(), f);
      expect_close(u, u_ref, "interp " + what);
      ref->interp_assign(z.data(), c, u_ref.data(), f);
      ops->interp_assign(z.data(), c, u.data(), f);
      expect_close(u, u_ref, "interp_assign " + what);
    }
  }
}

// ---- the passes fused across levels (the finest level of a fused V-cycle) ----

// The executors, and three threads (slabs of fine planes whose edges fall on either half of a
// coarse plane).
std::vector<Exec> fused_executors() {
  auto all = executors();
  all.push_back({"openmp", 3, 0, "hybrid, 3 threads"});
  all.push_back({"openmp", 3, 3000, "tiled 3000 B, 3 threads"});
  return all;
}
// The last is large enough for three threads (4096 points or more per thread).
const std::vector<Box> kFusedBoxes = {{10, 10, 10}, {18, 6, 10}, {4, 8, 6}, {34, 18, 12}, {12, 10, 26}, {18, 10, 98}};

// r's halo along i1 and i2 from its own faces (one process along both), on every plane the
// restriction reads (1 to n3 - 1).
void periodic_rows(std::vector<double>& r, const Box& b) {
  for (int i3 = 1; i3 < b.n3; ++i3) {
    for (int i2 = 1; i2 < b.n2 - 1; ++i2) {
      r[b.at(0, i2, i3)] = r[b.at(b.n1 - 2, i2, i3)];
      r[b.at(b.n1 - 1, i2, i3)] = r[b.at(1, i2, i3)];
    }
    for (int i1 = 0; i1 < b.n1; ++i1) {
      r[b.at(i1, 0, i3)] = r[b.at(i1, b.n2 - 2, i3)];
      r[b.at(i1, b.n2 - 1, i3)] = r[b.at(i1, 1, i3)];
    }
  }
}

// fn(ops, fine block, coarse block, what) for every executor and fused block.
template <class Fn>
void for_each_fused_case(Fn&& fn) {
  for (const auto& ex : fused_executors()) {
    const auto ops = pxq::kernels::make_mg_ops(ex.backend, ex.threads, ex.tile_bytes);
    for (const Box& f : kFusedBoxes) fn(*ops, f, coarse_of(f), ex.name + " fine " + dims(f));
  }
}

TEST(MgKernels, FusedResidualAndRestrictionEqualTheSweepsTheyReplace) {
  const auto ref = pxq::kernels::make_mg_ops_reference();
  for_each_fused_case([&](const MgOps& ops, const Box& f, const Box& c, const std::string& what) {
    const auto u = random_field(f, 21), v = random_field(f, 22);
    // r's upper halo plane is the upper neighbour's plane 1 (random here); the rest is junk.
    auto r = random_field(f, 23), r_ref = r;
    // The sweeps: resid, r's halo (periodic along i1 and i2, the given plane along i3), rprj3.
    ref->resid(u.data(), v.data(), r_ref.data(), f, kA);
    periodic_rows(r_ref, f);
    auto s_ref = random_field(c, 24), s = s_ref;
    ref->rprj3(r_ref.data(), f, s_ref.data(), c);
    const auto n_ref = ref->norm2(r_ref.data(), f);
    const auto n = ops.resid_rprj3(u.data(), v.data(), r.data(), f, s.data(), c, kA);
    expect_close(s, s_ref, "resid_rprj3 " + what);
    // The residuals themselves differ in the last bits (the reference sums point by point).
    EXPECT_NEAR(n.first, n_ref.first, 1e-12 * n_ref.first) << what;
    EXPECT_NEAR(n.second, n_ref.second, 1e-13 * n_ref.second) << what;
  });
}

TEST(MgKernels, FusedInterpolationResidualAndSmoothingEqualTheSweepsTheyReplace) {
  const auto ref = pxq::kernels::make_mg_ops_reference();
  for_each_fused_case([&](const MgOps& ops, const Box& f, const Box& c, const std::string& what) {
    const auto z = random_field(c, 31), v = random_field(f, 32);
    auto u_ref = random_field(f, 33), r_ref = random_field(f, 34);
    auto u = u_ref, r = r_ref;
    ref->interp(z.data(), c, u_ref.data(), f);
    ref->resid_psinv_core(u_ref.data(), v.data(), r_ref.data(), f, kA, kC, false);
    ops.interp_resid_psinv_core(z.data(), c, u.data(), v.data(), r.data(), f, kA, kC, false);
    expect_close_on_band(r, r_ref, f, "fused r " + what);
    expect_close(u, u_ref, "fused u " + what);
  });
}

// Wrapping along i1, an executor may smooth the rows' ends in the pass: the pass, r's halo and
// the shell together against interp and NAS's sweeps.
TEST(MgKernels, FusedInterpolationResidualAndSmoothingWrappingAlongI1EqualTheSweeps) {
  const auto ref = pxq::kernels::make_mg_ops_reference();
  for_each_fused_case([&](const MgOps& ops, const Box& f, const Box& c, const std::string& what) {
    const auto z = random_field(c, 41), v = random_field(f, 42), halo = random_field(f, 45);
    auto u_ref = random_field(f, 43), r_ref = random_field(f, 44);
    auto u = u_ref, r = r_ref;
    ref->interp(z.data(), c, u_ref.data(), f);
    ref->resid(u_ref.data(), v.data(), r_ref.data(), f, kA);
    refresh_halo(r_ref, halo, f, true, true);
    ref->psinv(r_ref.data(), u_ref.data(), f, kC);
    pxq::kernels::wrap_rows_i1(u_ref.data(), f);
    ops.interp_resid_psinv_core(z.data(), c, u.data(), v.data(), r.data(), f, kA, kC, true);
    refresh_halo(r, halo, f, true);
    ops.psinv_shell(r.data(), u.data(), f, kC, true);
    expect_close_on_band(r, r_ref, f, "fused r " + what, true);
    expect_close(u, u_ref, "fused u " + what);
  });
}

// ---- the reference with a periodic halo against global, wrapped stencils ----

struct Periodic {
  int n1, n2, n3;
  int wrap(int i, int n) const { return ((i % n) + n) % n; }
  double at(const std::vector<double>& g, int i1, int i2, int i3) const {
    return g[(static_cast<std::size_t>(wrap(i3, n3)) * n2 + wrap(i2, n2)) * n1 + wrap(i1, n1)];
  }
};

// A block holding the whole periodic grid, its halo filled by the planned exchange with
// itself on every axis (no MPI call is made: every neighbour is this rank).
std::vector<double> to_block(const std::vector<double>& g, const Periodic& p, const Box& b) {
  std::vector<double> x(b.size(), 0.0);
  for (int i3 = 0; i3 < p.n3; ++i3)
    for (int i2 = 0; i2 < p.n2; ++i2)
      for (int i1 = 0; i1 < p.n1; ++i1) x[b.at(i1 + 1, i2 + 1, i3 + 1)] = p.at(g, i1, i2, i3);
  pxq::comm::HaloNeighbours self;
  pxq::comm::HaloPlan plan(MPI_COMM_NULL, 0, b.n1, b.n2, b.n3, self, 0);
  pxq::comm::PeerTraffic traffic(1);
  plan.exchange(x.data(), traffic);
  EXPECT_EQ(traffic.messages(), 0u);
  EXPECT_TRUE(plan.local_only());
  return x;
}

// Faces of 16,384 points or more are copied by the rank's threads (a hybrid run's finest
// levels): every halo point is still the wrapped interior point, with 3 threads on every axis.
TEST(MgKernels, LargePeriodicFacesCopiedByThreadsWrapEveryHaloPoint) {
  const Periodic p{128, 128, 128};
  const Box b{p.n1 + 2, p.n2 + 2, p.n3 + 2};
  std::vector<double> ug(static_cast<std::size_t>(p.n1) * p.n2 * p.n3);
  std::iota(ug.begin(), ug.end(), 0.0);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(3);
  const auto u = to_block(ug, p, b);
  omp_set_num_threads(threads);
  std::size_t wrong = 0;
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1) wrong += u[b.at(i1, i2, i3)] != p.at(ug, i1 - 1, i2 - 1, i3 - 1);
  EXPECT_EQ(wrong, 0u);
}

TEST(MgKernels, PeriodicHaloGivesTheWrappedStencils) {
  const Periodic p{6, 4, 8};
  const Box b{p.n1 + 2, p.n2 + 2, p.n3 + 2};
  std::vector<double> ug(static_cast<std::size_t>(p.n1 * p.n2 * p.n3));
  std::mt19937 gen(12);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (auto& x : ug) x = val(gen);
  const auto u = to_block(ug, p, b);
  // Every halo point (edges and corners too) is the wrapped interior point.
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1)
        ASSERT_EQ(u[b.at(i1, i2, i3)], p.at(ug, i1 - 1, i2 - 1, i3 - 1)) << i1 << "," << i2 << "," << i3;

  const auto ops = pxq::kernels::make_mg_ops("openmp", 1, 0);
  std::vector<double> zero(b.size(), 0.0), r(b.size(), 0.0);
  ops->resid(u.data(), zero.data(), r.data(), b, kA);
  for (int i3 = 0; i3 < p.n3; ++i3)
    for (int i2 = 0; i2 < p.n2; ++i2)
      for (int i1 = 0; i1 < p.n1; ++i1) {
        double au = 0.0;
        for (int d3 = -1; d3 <= 1; ++d3)
          for (int d2 = -1; d2 <= 1; ++d2)
            for (int d1 = -1; d1 <= 1; ++d1)
              au += kA.w[std::abs(d1) + std::abs(d2) + std::abs(d3)] * p.at(ug, i1 + d1, i2 + d2, i3 + d3);
        ASSERT_NEAR(r[b.at(i1 + 1, i2 + 1, i3 + 1)], -au, 1e-13) << i1 << "," << i2 << "," << i3;
      }

  // Restriction to the 3 x 2 x 4 coarse grid: coarse j sits on fine 2j + 1.
  const Box c{p.n1 / 2 + 2, p.n2 / 2 + 2, p.n3 / 2 + 2};
  std::vector<double> s(c.size(), 0.0);
  ops->rprj3(u.data(), b, s.data(), c);
  const double w[4] = {0.5, 0.25, 0.125, 0.0625};
  for (int j3 = 0; j3 < p.n3 / 2; ++j3)
    for (int j2 = 0; j2 < p.n2 / 2; ++j2)
      for (int j1 = 0; j1 < p.n1 / 2; ++j1) {
        double want = 0.0;
        for (int d3 = -1; d3 <= 1; ++d3)
          for (int d2 = -1; d2 <= 1; ++d2)
            for (int d1 = -1; d1 <= 1; ++d1)
              want += w[std::abs(d1) + std::abs(d2) + std::abs(d3)] *
                      p.at(ug, 2 * j1 + 1 + d1, 2 * j2 + 1 + d2, 2 * j3 + 1 + d3);
        ASSERT_NEAR(s[c.at(j1 + 1, j2 + 1, j3 + 1)], want, 1e-13);
      }
}

TEST(MgKernels, RowsPerBlockFollowsTheTile) {
  // 100 points per row, 5 streams: 4000 bytes per row of every stream.
  EXPECT_EQ(pxq::kernels::rows_per_block(40000, 100, 5, 50), 10);
  EXPECT_EQ(pxq::kernels::rows_per_block(100, 100, 5, 50), 1);       // never below one row
  EXPECT_EQ(pxq::kernels::rows_per_block(1 << 30, 100, 5, 50), 50);  // never above the plane
}

// What a tile costs at the edges of its blocks of rows, as the proxy declares it (EdgeRows).
TEST(MgKernels, EdgeRowsCountTheBlocksOfTheTile) {
  using pxq::kernels::MgPass;
  const pxq::kernels::Box box{130, 130, 66};  // 128 interior rows of 130 points
  const auto none = pxq::kernels::make_mg_ops("openmp", 2, 0);
  for (const MgPass pass : {MgPass::kResid, MgPass::kSmooth, MgPass::kRestrict, MgPass::kInterp, MgPass::kResidSmooth,
                            MgPass::kInterpResidSmooth, MgPass::kResidRestrict}) {
    const auto e = none->edge_rows(pass, box);
    EXPECT_EQ(e.read + e.written + e.computed, 0.0) << "untiled";
    const auto whole = pxq::kernels::make_mg_ops("openmp", 2, std::size_t{1} << 30)->edge_rows(pass, box);
    EXPECT_EQ(whole.read + whole.written + whole.computed, 0.0) << "one block holds the plane";
  }
  // 256 KiB over 7 streams of 130 points: 36 rows a block, 4 blocks, 3 edges; each edge reads
  // u's two rows and r's two stored rows again, and stores two rows of r.
  const auto tiled = pxq::kernels::make_mg_ops("openmp", 2, std::size_t{256} * 1024);
  const auto fused = tiled->edge_rows(MgPass::kResidSmooth, box);
  EXPECT_EQ(fused.read, 12.0);
  EXPECT_EQ(fused.written, 6.0);
  // The residual into the restriction: 18 coarse rows a block of 64, 3 edges, one fine row
  // computed again at each (3 rows of u and one of v read).
  const auto rr = tiled->edge_rows(MgPass::kResidRestrict, box);
  EXPECT_EQ(rr.computed, 3.0);
  EXPECT_EQ(rr.read, 12.0);
  // Every backend: the smaller the tile, the more it moves again.
  for (const auto& b : pxq::kernels::available_backends()) {
    if (!runs<pxq::kernels::MgFamily>(b)) continue;
    const auto big = pxq::kernels::make_mg_ops(b, 2, std::size_t{512} * 1024)->edge_rows(MgPass::kResid, box);
    const auto small = pxq::kernels::make_mg_ops(b, 2, std::size_t{64} * 1024)->edge_rows(MgPass::kResid, box);
    EXPECT_GT(small.read, big.read) << b;
    EXPECT_GT(big.read, 0.0) << b;
  }
}

}  // namespace
