// The MG proxy: NAS MG's V-cycle multigrid for the discrete Poisson problem A u = v on a
// periodic 3-D grid, v being +1 and -1 charges at twenty points. Each of `nit` iterations
// runs one V-cycle (restrict the residual down to the coarsest level, smooth there, then
// interpolate, recompute the residual and smooth on the way up) and the finest residual;
// the L2 norm of the last residual is checked against NAS's value.
//
// The grid is split into blocks over a 3-D process grid; after every operator the block's
// halo is refreshed from the six face neighbours (comm::HaloPlan), except after the
// interpolation, which computes the fine halo itself from the coarse one, as NAS does.
// Levels too coarse to give every process a point are held whole by every rank.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "mg_problem.hpp"
#include "pxq/comm/halo.hpp"
#include "pxq/comm/mpi_check.hpp"
#include "pxq/comm/peer_traffic.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/huge_array.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/mg_ops.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::mg {
namespace {

struct MgOptions : common::NasOptions {
  void add_to(pxq::cli::App& cli) {
    common::add_nas_options(cli, *this, "mg", "No progress lines and no per-level table");
  }
};

using common::MpiWorld;
using kernels::Box;

// Per-level phases. Restriction and interpolation are booked on the finer level of the pair.
enum Phase { kSmooth, kResidual, kRestrict, kInterpolate, kHalo, kPhaseCount };
constexpr std::array<const char*, kPhaseCount> kPhaseNames{"smooth", "residual", "restrict", "interpolate", "halo"};
constexpr int kHaloTagStride = 8;

struct LevelData {
  Level geo;
  std::vector<double> u, r;
  std::unique_ptr<comm::HaloPlan> halo;
  std::array<std::string, kPhaseCount> keys;
};

class Multigrid {
 public:
  // The grids are first touched by the rank's `threads` threads (NUMA placement).
  Multigrid(MPI_Comm comm, const MgClass& cls, const std::vector<Level>& levels, const kernels::MgOps& ops, bool fused,
            int threads, common::PhaseTimers& timers, comm::PeerTraffic& traffic)
      : comm_(comm), cls_(cls), ops_(ops), fused_(fused), tm_(timers), traffic_(traffic) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    rank_ = rank;
    lv_.resize(levels.size());
    for (int k = 1; k <= cls.lt; ++k) {
      LevelData& L = lv_[static_cast<std::size_t>(k)];
      L.geo = levels[static_cast<std::size_t>(k)];
      const Box b = L.geo.box;
      common::assign_huge(L.u, b.size(), 0.0, threads);
      common::assign_huge(L.r, b.size(), 0.0, threads);
      L.halo = std::make_unique<comm::HaloPlan>(comm, rank, b.n1, b.n2, b.n3, L.geo.neighbours, kHaloTagStride * k);
      for (int p = 0; p < kPhaseCount; ++p) L.keys[static_cast<std::size_t>(p)] = level_key(k, kPhaseNames[p]);
    }
    common::assign_huge(v_, top().geo.box.size(), 0.0, threads);
    const LevelData& T = top();
    const comm::HaloNeighbours& nb = T.geo.neighbours;
    restrict_fused_ = fused_ && cls.lt >= 2 && T.geo.distributed && level(cls.lt - 1).geo.distributed &&
                      nb.lower[0] == rank && nb.upper[0] == rank && nb.lower[1] == rank && nb.upper[1] == rank;
  }

  static std::string level_key(int k, const char* phase) { return "L" + std::to_string(k) + "." + phase; }

  LevelData& top() { return lv_[static_cast<std::size_t>(cls_.lt)]; }
  const LevelData& level(int k) const { return lv_[static_cast<std::size_t>(k)]; }
  std::vector<double>& rhs() { return v_; }
  void refresh_rhs() { halo(cls_.lt, v_.data()); }
  void zero_top() {
    std::fill(top().u.begin(), top().u.end(), 0.0);
    top_restricted_ = false;
  }
  bool residual_restricts() const { return restrict_fused_; }

  // r = v - A u on the finest level, halo refreshed. Fused (one process along i1 and i2)
  // and with a V-cycle to follow (`vcycle_next`), the residual goes straight into that
  // V-cycle's restriction and its norm, and r is never stored: only its plane 1 is computed
  // first, for the lower neighbour's halo. The messages are NAS's either way.
  void residual(bool vcycle_next) {
    LevelData& T = top();
    const Box b = T.geo.box;
    if (!restrict_fused_ || !vcycle_next) {
      time(cls_.lt, kResidual, [&] { ops_.resid(T.u.data(), v_.data(), T.r.data(), b, kOperatorA); });
      halo(cls_.lt, T.r.data());
      return;
    }
    LevelData& C = lv_[static_cast<std::size_t>(cls_.lt - 1)];
    time(cls_.lt, kResidual, [&] { ops_.resid(T.u.data(), v_.data(), T.r.data(), Box{b.n1, b.n2, 3}, kOperatorA); });
    time(cls_.lt, kHalo, [&] { T.halo->exchange_axis(T.r.data(), 2, traffic_); });
    time(cls_.lt, kResidual, [&] {
      top_norm_ = ops_.resid_rprj3(T.u.data(), v_.data(), T.r.data(), b, C.r.data(), C.geo.box, kOperatorA);
    });
    halo(cls_.lt - 1, C.r.data());
    top_restricted_ = true;
  }

  // NAS mg3P: one V-cycle.
  void vcycle() {
    const int lt = cls_.lt;
    for (int k = top_restricted_ ? lt - 1 : lt; k >= 2; --k) restrict_down(k);
    top_restricted_ = false;
    // Coarsest level: u = C r.
    LevelData& B = lv_[1];
    time(1, kSmooth, [&] {
      if (fused_) {
        ops_.psinv_assign(B.r.data(), B.u.data(), B.geo.box, cls_.smoother);
      } else {
        ops_.zero(B.u.data(), B.geo.box);
        ops_.psinv(B.r.data(), B.u.data(), B.geo.box, cls_.smoother);
      }
    });
    halo(1, B.u.data());
    for (int k = 2; k < lt; ++k) {
      LevelData& L = lv_[static_cast<std::size_t>(k)];
      prolong_up(k, /*into_zero=*/true);
      resid_smooth(k, L.r.data());  // r = r - A u in place, as NAS
    }
    const LevelData& below = lv_[static_cast<std::size_t>(lt - 1)];
    if (fused_ && below.geo.distributed) {
      resid_smooth(lt, v_.data(), &below);  // the interpolation fused into the pass
    } else {
      prolong_up(lt, /*into_zero=*/false);
      resid_smooth(lt, v_.data());
    }
  }

  // NAS norm2u3 on the finest residual: {sqrt(sum r^2 / nx^3), max |r|}.
  std::pair<double, double> norm() {
    std::pair<double, double> local{0.0, 0.0};
    double sums[2] = {0.0, 0.0};
    tm_.time("norm", [&] {
      local = top_restricted_ ? top_norm_ : ops_.norm2(top().r.data(), top().geo.box);
      comm::check_mpi(MPI_Allreduce(&local.second, &sums[1], 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce (norm)");
      comm::check_mpi(MPI_Allreduce(&local.first, &sums[0], 1, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce (norm)");
    });
    const double n = static_cast<double>(cls_.nx) * cls_.nx * cls_.nx;
    return {std::sqrt(sums[0] / n), sums[1]};
  }

  int replicated_levels() const {
    int n = 0;
    for (int k = 1; k <= cls_.lt; ++k) n += level(k).geo.distributed ? 0 : 1;
    return n;
  }

 private:
  template <class Fn>
  void time(int k, Phase p, Fn&& fn) {
    tm_.time(lv_[static_cast<std::size_t>(k)].keys[static_cast<std::size_t>(p)], fn);
  }

  // x's halo refreshed; `i1_written`: a pass already wrote its i1 halo (this rank its own
  // neighbour along i1), so along i2 and i3 only.
  void halo(int k, double* x, bool i1_written = false) {
    LevelData& L = lv_[static_cast<std::size_t>(k)];
    time(k, kHalo, [&] {
      if (!i1_written) return L.halo->exchange(x, traffic_);
      L.halo->exchange_axis(x, 1, traffic_);
      L.halo->exchange_axis(x, 2, traffic_);
    });
  }

  // r = v - A u, r's halo, u = u + C r, u's halo. The tiled variant runs the residual and
  // the smoothing of the core in one pass before r's halo is refreshed, then smooths the
  // shell; that pass is booked as smoothing. Given `interp_from` (fused only), the pass
  // first adds the interpolation from that coarser level to u.
  void resid_smooth(int k, const double* v, const LevelData* interp_from = nullptr) {
    LevelData& L = lv_[static_cast<std::size_t>(k)];
    const Box b = L.geo.box;
    if (fused_) {
      // This rank its own neighbour along i1: r's and u's i1 halos are copies of their own
      // rows' ends, and the fused passes write them.
      const bool wraps_i1 = L.geo.neighbours.lower[0] == rank_ && L.geo.neighbours.upper[0] == rank_;
      time(k, kSmooth, [&] {
        if (interp_from != nullptr) {
          ops_.interp_resid_psinv_core(interp_from->u.data(), interp_from->geo.box, L.u.data(), v, L.r.data(), b,
                                       kOperatorA, cls_.smoother, wraps_i1);
        } else {
          ops_.resid_psinv_core(L.u.data(), v, L.r.data(), b, kOperatorA, cls_.smoother, wraps_i1);
        }
      });
      halo(k, L.r.data(), wraps_i1);  // wrapping along i1, the pass wrote r's i1 halo
      time(k, kSmooth, [&] { ops_.psinv_shell(L.r.data(), L.u.data(), b, cls_.smoother, wraps_i1); });
      halo(k, L.u.data(), wraps_i1);  // and the passes u's
      return;
    }
    time(k, kResidual, [&] { ops_.resid(L.u.data(), v, L.r.data(), b, kOperatorA); });
    halo(k, L.r.data());
    time(k, kSmooth, [&] { ops_.psinv(L.r.data(), L.u.data(), b, cls_.smoother); });
    halo(k, L.u.data());
  }

  // r(k-1) = P r(k), halo refreshed.
  void restrict_down(int k) {
    LevelData& F = lv_[static_cast<std::size_t>(k)];
    LevelData& C = lv_[static_cast<std::size_t>(k - 1)];
    if (C.geo.distributed || !F.geo.distributed) {
      time(k, kRestrict, [&] { ops_.rprj3(F.r.data(), F.geo.box, C.r.data(), C.geo.box); });
    } else {
      time(k, kRestrict, [&] { restrict_to_replicated(F, C); });
    }
    halo(k - 1, C.r.data());
  }

  // u(k) = (0 or u(k)) + Q u(k-1), halo included.
  void prolong_up(int k, bool into_zero) {
    LevelData& F = lv_[static_cast<std::size_t>(k)];
    const LevelData& C = lv_[static_cast<std::size_t>(k - 1)];
    time(k, kInterpolate, [&] {
      if (!C.geo.distributed && F.geo.distributed) {
        if (into_zero) std::fill(F.u.begin(), F.u.end(), 0.0);
        interp_from_replicated(C, F);
      } else if (into_zero && fused_) {
        ops_.interp_assign(C.u.data(), C.geo.box, F.u.data(), F.geo.box);
      } else {
        if (into_zero) ops_.zero(F.u.data(), F.geo.box);
        ops_.interp(C.u.data(), C.geo.box, F.u.data(), F.geo.box);
      }
    });
  }

  // The last distributed level hands its restriction to the first replicated one: each rank
  // computes the coarse points centred in its block, the sum over ranks assembles the grid.
  void restrict_to_replicated(const LevelData& F, LevelData& C) {
    const Box fb = F.geo.box, cb = C.geo.box;
    std::fill(C.r.begin(), C.r.end(), 0.0);
    std::array<std::vector<std::pair<int, int>>, 3> owned;  // (coarse index, fine block index)
    for (std::size_t ax = 0; ax < 3; ++ax)
      for (int f = 0; f < F.geo.extent[ax]; ++f) {
        const int g = F.geo.offset[ax] + f;
        if (g % 2 == 1) owned[ax].push_back({(g - 1) / 2 + 1, f + 1});
      }
    for (const auto& [j3, i3] : owned[2])
      for (const auto& [j2, i2] : owned[1])
        for (const auto& [j1, i1] : owned[0]) {
          C.r[cb.at(j1, j2, j3)] = kernels::smoother_at(F.r.data(), fb, i1, i2, i3, kernels::kRestriction);
        }
    comm::check_mpi(MPI_Allreduce(MPI_IN_PLACE, C.r.data(), static_cast<int>(C.r.size()), MPI_DOUBLE, MPI_SUM, comm_),
                    "MPI_Allreduce (coarse level)");
  }

  // The first distributed level from the whole coarse grid: every point of the block (halo
  // included) by the interpolation formula in global indices, periodic.
  void interp_from_replicated(const LevelData& C, LevelData& F) {
    const Box fb = F.geo.box, cb = C.geo.box;
    const int nc = C.geo.ng;
    auto axis = [&](std::size_t ax, int f, int c[2], double w[2]) {
      const int g = ((F.geo.offset[ax] + f - 1) % F.geo.ng + F.geo.ng) % F.geo.ng;
      if (g % 2 == 1) {
        c[0] = (g - 1) / 2 + 1;
        w[0] = 1.0;
        return 1;
      }
      c[0] = ((g / 2 - 1 + nc) % nc) + 1;
      c[1] = (g / 2) % nc + 1;
      w[0] = w[1] = 0.5;
      return 2;
    };
    for (int f3 = 0; f3 < fb.n3; ++f3)
      for (int f2 = 0; f2 < fb.n2; ++f2)
        for (int f1 = 0; f1 < fb.n1; ++f1) {
          int c1[2], c2[2], c3[2];
          double w1[2], w2[2], w3[2];
          const int m1 = axis(0, f1, c1, w1), m2 = axis(1, f2, c2, w2), m3 = axis(2, f3, c3, w3);
          double sum = 0.0;
          for (int a3 = 0; a3 < m3; ++a3)
            for (int a2 = 0; a2 < m2; ++a2)
              for (int a1 = 0; a1 < m1; ++a1) sum += w1[a1] * w2[a2] * w3[a3] * C.u[cb.at(c1[a1], c2[a2], c3[a3])];
          F.u[fb.at(f1, f2, f3)] += sum;
        }
  }

  MPI_Comm comm_;
  const MgClass& cls_;
  const kernels::MgOps& ops_;
  bool fused_;
  int rank_ = 0;
  bool restrict_fused_ = false;  // the finest residual fused with the restriction (residual())
  bool top_restricted_ = false;  // residual() has restricted it already
  std::pair<double, double> top_norm_{0.0, 0.0};
  common::PhaseTimers& tm_;
  comm::PeerTraffic& traffic_;
  std::vector<LevelData> lv_;
  std::vector<double> v_;
};

// NAS zran3: +1 at the 10 largest values of the random field, -1 at the 10 smallest. Every
// rank offers its own 10 + 10 candidates; all ranks pick the same winners from the lot.
Charges find_charges(MPI_Comm comm, const MgClass& cls, const Level& top, int nprocs) {
  const Extremes ex = local_extremes(cls, top);
  std::vector<double> mine(std::size_t{4} * kCharges);
  for (int i = 0; i < kCharges; ++i) {
    // Blocks with fewer than 10 points pad with values that can never win.
    const std::size_t si = static_cast<std::size_t>(i);
    const Candidate big = si < ex.largest.size() ? ex.largest[si] : Candidate{-1.0, -1};
    const Candidate small = si < ex.smallest.size() ? ex.smallest[si] : Candidate{2.0, -1};
    mine[4 * si + 0] = big.value;
    mine[4 * si + 1] = static_cast<double>(big.index);
    mine[4 * si + 2] = small.value;
    mine[4 * si + 3] = static_cast<double>(small.index);
  }
  std::vector<double> all(mine.size() * static_cast<std::size_t>(nprocs));
  comm::check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                                static_cast<int>(mine.size()), MPI_DOUBLE, comm),
                  "MPI_Allgather (charges)");
  std::vector<Candidate> largest, smallest;
  for (std::size_t i = 0; i < all.size(); i += 4) {
    if (all[i + 1] >= 0) largest.push_back({all[i], static_cast<std::int64_t>(all[i + 1])});
    if (all[i + 3] >= 0) smallest.push_back({all[i + 2], static_cast<std::int64_t>(all[i + 3])});
  }
  return select_charges(largest, smallest);
}

// The MG proxy's steps in the common lifecycle.
class MgProxy final : public common::NasProxy<MgOptions, MgClass> {
 public:
  MgProxy(const MpiWorld& w, const common::Variant& v, const MgOptions& o)
      : NasProxy(w, v, o, mg_class(o.cls)),
        grid_(make_proc_grid(cls_, w.size, w.rank)),
        levels_(make_levels(cls_, grid_)),
        finest_(levels_[static_cast<std::size_t>(cls_.lt)]) {}

  // The tile bounds the working set of a block of rows on the finest level's planes.
  std::size_t tile_buffer_bytes() const override { return finest_.box.size() * sizeof(double); }

  // The hierarchy and the right-hand side.
  void set_up(const common::RunStart& /*start*/) override {
    tile_bytes_ = tile_.tiled ? std::max<std::size_t>(sizeof(double), tile_.bytes) : 0;
    ops_ = kernels::make_mg_ops(v_.backend, v_.threads, tile_bytes_);
    mg_ = std::make_unique<Multigrid>(w_.comm, cls_, levels_, *ops_, v_.fused, v_.threads, timers_, traffic_);
    const Charges charges = find_charges(w_.comm, cls_, finest_, w_.size);
    place_charges(charges, finest_, cls_.nx, mg_->rhs().data());
    mg_->refresh_rhs();
  }

  // One iteration touches every page and warms the code; then u starts over (v is never
  // written, so it needs no regeneration).
  void warm_up() override {
    mg_->residual(true);
    mg_->vcycle();
    mg_->residual(false);
    mg_->zero_top();
  }

  std::vector<std::string> comm_phases() const override { return {"halo"}; }

  std::vector<std::string> phases() const override {
    std::vector<std::string> out{"norm"};
    for (int k = 1; k <= cls_.lt; ++k)
      for (const char* p : kPhaseNames) out.push_back(Multigrid::level_key(k, p));
    return out;
  }

  void iterate() override {
    mg_->residual(true);
    mg_->norm();
    for (int it = 1; it <= cls_.nit; ++it) {
      if (!o_.quiet && w_.rank == 0 && (it == 1 || it == cls_.nit || it % 5 == 0)) {
        std::printf("  iter %4d\n", it);
        std::fflush(stdout);
      }
      mg_->vcycle();
      mg_->residual(it < cls_.nit);
    }
    std::tie(rnm2_, rnmu_) = mg_->norm();
  }

  // Phase totals per rank, summed over the levels.
  void after_timing() override {
    for (const char* p : kPhaseNames) {
      double sum = 0.0;
      for (int k = 1; k <= cls_.lt; ++k) sum += timers_.get(Multigrid::level_key(k, p));
      timers_.add(p, sum);
    }
  }

  // Every rank computed rnm2 from the same reduced sum; rank 0's is reported.
  bool verify() override {
    error_ = std::fabs(rnm2_ - cls_.rnm2) / cls_.rnm2;
    return !std::isnan(error_) && error_ <= kRnm2Tolerance;
  }

  common::Summary summarize(const common::Measured& m, bool quiet) const override;
  common::Work work() const override;
  // A tile's edges on level k for `calls` calls of `pass` (kernels::EdgeRows): {the bytes moved
  // again, the flops computed again} where two blocks of rows meet, on every interior plane.
  std::pair<double, double> edge_work(int k, kernels::MgPass pass, double calls, double row_flops) const;

 private:
  std::string level_table(const common::Measured& m) const;
  nlohmann::json level_json(const common::Measured& m) const;

  ProcGrid grid_;
  std::vector<Level> levels_;
  const Level& finest_;
  std::size_t tile_bytes_ = 0;
  std::unique_ptr<kernels::MgOps> ops_;
  std::unique_ptr<Multigrid> mg_;
  double rnm2_ = 0.0, rnmu_ = 0.0, error_ = 0.0;
};

std::string MgProxy::level_table(const common::Measured& m) const {
  std::ostringstream out;
  out << "\n  level        grid   smooth  residual  restrict  interp     halo   (s, slowest rank)\n";
  for (int k = cls_.lt; k >= 1; --k) {
    const int ng = cls_.nx >> (cls_.lt - k);
    char head[32];
    std::snprintf(head, sizeof(head), "  %5d  %10s", k, (std::to_string(ng) + "^3").c_str());
    out << head;
    for (const char* p : kPhaseNames) out << common::fmt("  %8.4f", m.phase(Multigrid::level_key(k, p)));
    out << "\n";
  }
  out << "\n";
  return out.str();
}

nlohmann::json MgProxy::level_json(const common::Measured& m) const {
  nlohmann::json per_level = nlohmann::json::array();
  for (int k = cls_.lt; k >= 1; --k) {
    const Level& L = levels_[static_cast<std::size_t>(k)];
    nlohmann::json row = {
        {"level", k}, {"ng", L.ng}, {"distributed", L.distributed}, {"block", {L.extent[0], L.extent[1], L.extent[2]}}};
    for (const char* p : kPhaseNames) row[p] = m.phase(Multigrid::level_key(k, p));
    per_level.push_back(row);
  }
  return per_level;
}

// Per level and phase (as the timers book them), over the timed run: each sweep reads and
// writes its arrays once (8 B per point and array, halos included); the stencils reuse their
// planes from cache, so the bytes at the cores are counted as the compulsory ones. Flops per
// point: residual 15, smoothing 15, restriction 4 and interpolation 3 (per fine point).
// Tiled, each pass also moves (and the residual fused with the restriction computes) again
// the rows at the edges between its blocks of rows, as the executor declares them
// (MgOps::edge_rows): what a tile smaller than a plane costs, which a tile must win back.
common::Work MgProxy::work() const {
  const double nit = cls_.nit;
  const int lt = cls_.lt;
  const bool fused = v_.fused, restricts = mg_->residual_restricts();
  const bool interp_fused = fused && lt >= 2 && levels_[static_cast<std::size_t>(lt - 1)].distributed;
  common::Work out;
  const auto add = [&](int k, const char* phase, kernels::MgPass pass, double calls, double flops, double arrays) {
    if (calls <= 0) return;
    const double n = static_cast<double>(levels_[static_cast<std::size_t>(k)].box.size());
    const auto [edge_bytes, edge_flops] = edge_work(k, pass, calls, flops);
    const double bytes = calls * arrays * 8.0 * n + edge_bytes;
    // The restriction touches the fine r and the coarse s; the other operators the level's arrays.
    const bool restriction = std::string(phase) == "restrict";
    const double footprint = restriction ? arrays * 8.0 * n : (k == lt ? 3.0 : 2.0) * 8.0 * n;
    out.push_back({Multigrid::level_key(k, phase), calls * flops * n + edge_flops, bytes, bytes, footprint, footprint,
                   "every array of the sweep read or written once per call, halos included"});
    out.back().edge = edge_bytes;
    if (edge_bytes > 0) out.back().what += "; and the rows at the edges between the tile's blocks of rows again";
    if (restriction) out.back().kind = "restrict";
    if (std::string(phase) == "interpolate") out.back().kind = "interp";
  };
  for (int k = lt; k >= 1; --k) {
    const bool top = k == lt;
    // Residuals: unfused, one per V-cycle on levels 2..lt; on the finest one more per
    // iteration and one before the loop (fused: only those), restricted on the way when
    // fused with the restriction (u and v read, 1/8 written below).
    const double own = (!fused && k >= 2) ? nit : 0.0;
    const double extra = top ? nit + 1.0 : 0.0;
    const double fused_restrict = (top && restricts) ? nit : 0.0;
    add(k, "residual", kernels::MgPass::kResid, own + extra - fused_restrict, 15.0, 3.0);
    // Smoothing: once per V-cycle on every level; fused with the residual (and on the finest
    // level with the interpolation) on levels 2..lt.
    const double smooth_flops = (fused && k >= 2) ? 30.0 + (top && interp_fused ? 3.0 : 0.0) : 15.0;
    const double smooth_arrays = (fused && k >= 2) ? 4.0 + (top && interp_fused ? 0.125 : 0.0) : (k == 1 ? 4.0 : 3.0);
    const kernels::MgPass smooth_pass = !(fused && k >= 2)      ? kernels::MgPass::kSmooth
                                        : (top && interp_fused) ? kernels::MgPass::kInterpResidSmooth
                                                                : kernels::MgPass::kResidSmooth;
    add(k, "smooth", smooth_pass, nit, smooth_flops, smooth_arrays);
    if (k >= 2) {
      add(k, "restrict", kernels::MgPass::kRestrict, (top && restricts) ? 0.0 : nit, 4.0, 1.125);
      add(k, "interpolate", kernels::MgPass::kInterp, (top && interp_fused) ? 0.0 : nit, 3.0, top ? 2.125 : 1.125);
    }
  }
  // The residual fused with the restriction: u and v read, the coarse residual written. Of its
  // flops, the restriction's 4 per point run at the restriction's rate.
  if (restricts) {
    const double n = static_cast<double>(levels_[static_cast<std::size_t>(lt)].box.size());
    for (auto& p : out)
      if (p.phase == Multigrid::level_key(lt, "residual")) {
        const auto [edge_bytes, edge_flops] = edge_work(lt, kernels::MgPass::kResidRestrict, nit, 15.0);
        p.flops += nit * 19.0 * n + edge_flops;
        p.bytes += nit * 2.125 * 8.0 * n + edge_bytes;
        p.edge += edge_bytes;
        if (edge_bytes > 0) p.what += "; its edge rows computed again at the tile's blocks";
        p.memory = p.bytes;
        p.what += "; fused with the restriction: u and v read, r stored only for the coarse level";
        p.also_kind = "restrict";
        p.also_share = nit * 4.0 * n / p.flops;
      }
  }
  for (auto& p : out) {
    if (p.phase == Multigrid::level_key(lt, "residual")) {
      p.metric = "resid_gbs";
      p.memory_metric = true;
    }
    // Every operator is a stencil (the residual's and smoother's 27 points): their loads of
    // neighbouring planes and their arithmetic, not a stream, set their pace. The restriction's
    // 27-point full weighting of every other fine point is a kind of its own ("restrict"): it
    // runs at about half the residual's flop rate, and touches the fine r and the coarse s (9 B
    // per fine point), not the level's arrays. So is the interpolation ("interp": 3 flops per
    // fine point over 8 coarse neighbours, which run well under the residual's flop rate).
    if (p.kind != "restrict" && p.kind != "interp") p.kind = "stencil";
  }
  return out;
}

std::pair<double, double> MgProxy::edge_work(int k, kernels::MgPass pass, double calls, double row_flops) const {
  const kernels::Box b = levels_[static_cast<std::size_t>(k)].box;
  const kernels::EdgeRows e = ops_->edge_rows(pass, b);
  const double row = static_cast<double>(b.n1) * static_cast<double>(std::max(0, b.n3 - 2));
  return {calls * (e.read + e.written) * 8.0 * row, calls * e.computed * row_flops * row};
}

common::Summary MgProxy::summarize(const common::Measured& m, bool quiet) const {
  const int replicated = mg_->replicated_levels();
  const int rows = tile_.tiled ? kernels::rows_per_block(tile_bytes_, finest_.box.n1, 5, finest_.extent[1]) : 0;
  const std::string nx = std::to_string(cls_.nx);
  common::Summary s;
  s.title = "MG";
  s.head = {{"Class", std::string(1, cls_.name)},
            {"Size", nx + "x" + nx + "x" + nx},
            {"Iterations", std::to_string(cls_.nit)},
            {"Levels", std::to_string(cls_.lt) + " (" +
                           (replicated == 0 ? std::string("all distributed")
                                            : std::to_string(replicated) + " coarsest held whole by every rank") +
                           ")"}};
  s.setup_what = "right-hand side";
  s.grid = std::to_string(grid_.pi[0]) + " x " + std::to_string(grid_.pi[1]) + " x " + std::to_string(grid_.pi[2]);
  s.tile_detail = std::to_string(rows) + " row(s) per block on the finest level";
  s.operations = nas_operation_count(cls_);
  std::string phases;
  for (const char* p : {"smooth", "residual", "restrict", "interpolate", "halo", "norm"})
    phases += std::string(phases.empty() ? "" : ", ") + p + " " + common::fmt("%.4f", m.phase(p)) + " s";
  s.metrics = {{"Phases (max)", phases}};
  if (v_.fused)
    s.notes.push_back(
        "fused: each level's residual and smoothing run as one pass, booked as smooth (on the finest level with the "
        "interpolation from the level below)");
  if (mg_->residual_restricts())
    s.notes.push_back(
        "fused: the finest residual goes straight into the next V-cycle's restriction, booked as residual");
  if (!quiet) s.tables = level_table(m);
  s.checks = common::reference_checks({"L2 norm", rnm2_}, {"Reference norm", cls_.rnm2}, error_, kRnm2Tolerance);
  s.size = class_size({{"nx", cls_.nx},
                       {"ny", cls_.nx},
                       {"nz", cls_.nx},
                       {"nit", cls_.nit},
                       {"levels", cls_.lt},
                       {"replicated_levels", replicated},
                       {"grid", {grid_.pi[0], grid_.pi[1], grid_.pi[2]}}});
  s.time = {{"smooth", m.phase("smooth")},
            {"residual", m.phase("residual")},
            {"restrict", m.phase("restrict")},
            {"interpolate", m.phase("interpolate")},
            {"halo", m.phase("halo")},
            {"comm", m.phase("halo")},  // what reports show as communication: the halo refreshes
            {"norm", m.phase("norm")},
            {"levels", level_json(m)}};
  s.verification = {{"rnm2", rnm2_},
                    {"rnmu", rnmu_},
                    {"rnm2_reference", cls_.rnm2},
                    {"error", error_},
                    {"tolerance", kRnm2Tolerance},
                    {"method", "NAS MG L2 norm of the residual after nit V-cycles, relative error"}};
  s.variant_json = {{"rows_per_block", rows}};
  return s;
}

}  // namespace
}  // namespace pxq::mg

PXQ_PROXY_MAIN(pxq::mg::MgProxy, pxq::mg::MgOptions, "mg", "pxq mg: NAS MG (V-cycle multigrid on a periodic 3-D grid)")
