// The FT proxy: NAS FT's spectral solution of a 3-D diffusion equation. The initial field
// (NAS's random stream) is transformed forward once; every iteration multiplies the spectrum
// by the evolution factors (cumulatively, as NAS does), transforms it back and takes a
// checksum of 1024 points, which must match NAS's to 1e-12 on every iteration.
//
// A 3-D FFT is three passes of 1-D FFTs, one per axis, with an all-to-all between passes
// wherever the next axis is split over processes (ft_problem.hpp has the layouts). The
// plan is a list of steps; this file runs them with MPI and times each one.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ft_problem.hpp"
#include "pxq/comm/mpi_check.hpp"
#include "pxq/comm/peer_traffic.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/huge_array.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::ft {
namespace {

struct FtOptions : common::NasOptions {
  std::string decomp = "auto";  // 1d, 2d or auto
  std::string fft = "pxq";      // who computes the 1-D FFTs: pxq or fftw

  void add_to(pxq::cli::App& cli) {
    common::add_nas_options(cli, *this, "ft", "No per-iteration lines and no per-step table");
    cli.add_option("--decomp", decomp,
                   "1d (slabs), 2d (pencils) or auto (NAS's choice: 1d up to nz processes, else 2d)");
    common::add_app_choice(cli, fft, "ft", "fft");
  }
};

using common::MpiWorld;

constexpr std::array<const char*, 4> kStepPhase{"fft", "pack", "alltoall", "evolve"};

const char* phase_of(const Step& s) { return kStepPhase[static_cast<std::size_t>(s.kind)]; }

// The plan's arrays and communicators on this rank, and the steps run with MPI.
class Transform {
 public:
  // The buffers are first touched by the rank's `threads` threads (NUMA placement).
  Transform(MPI_Comm world, const FtPlan& plan, const kernels::FtOps& ops, int threads, common::PhaseTimers& timers,
            comm::PeerTraffic& traffic)
      : plan_(plan), ops_(ops), tm_(timers), traffic_(traffic) {
    const FtGrid& g = plan.grid();
    for (std::size_t b = 0; b < buffers_.size(); ++b)
      if (plan.uses(static_cast<Buffer>(b)))
        common::assign_huge(buffers_[b], static_cast<std::size_t>(g.local_points()), Complex{}, threads);
    // Row: the p1 ranks sharing me2, ordered by me1; column: the p2 ranks sharing me1.
    comm::check_mpi(MPI_Comm_split(world, g.me2, g.me1, &row_), "MPI_Comm_split (row)");
    comm::check_mpi(MPI_Comm_split(world, g.me1, g.me2, &col_), "MPI_Comm_split (column)");
    for (int i = 0; i < g.p1; ++i) row_members_.push_back(g.row_member(i));
    for (int j = 0; j < g.p2; ++j) col_members_.push_back(g.column_member(j));
    for (int d = 0; d < 2; ++d)
      for (std::size_t k = 0; k < (d == 0 ? plan.forward() : plan.inverse()).size(); ++k)
        keys_[d].push_back(std::string(d == 0 ? "F" : "I") + std::to_string(k + 1));
  }
  ~Transform() {
    MPI_Comm_free(&row_);
    MPI_Comm_free(&col_);
  }
  Transform(const Transform&) = delete;
  Transform& operator=(const Transform&) = delete;

  Complex* buffer(Buffer b) { return buffers_[static_cast<std::size_t>(b)].data(); }
  void forward() { run(plan_.forward(), keys_[0]); }
  void inverse() { run(plan_.inverse(), keys_[1]); }
  const std::vector<std::string>& keys(bool fwd) const { return keys_[fwd ? 0 : 1]; }

 private:
  void run(const std::vector<Step>& steps, const std::vector<std::string>& keys) {
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const Step& s = steps[k];
      tm_.time(keys[k], [&] {
        switch (s.kind) {
          case Step::Kind::fft:
            ops_.fft(buffer(s.src), buffer(s.dst), s.pass);
            break;
          case Step::Kind::copy:
            ops_.copy(buffer(s.src), buffer(s.dst), s.copy);
            break;
          case Step::Kind::evolve:
            ops_.evolve(buffer(s.src), buffer(s.dst), s.n1, s.n2, s.n3, s.f1, s.f2, s.f3);
            break;
          case Step::Kind::alltoall:
            alltoall(s);
            break;
        }
      });
    }
  }

  // An all-to-all counts as one message of per_peer complex numbers to every other member.
  void alltoall(const Step& s) {
    if (s.per_peer > INT_MAX)
      throw std::runtime_error("all-to-all block of " + std::to_string(s.per_peer) +
                               " complex numbers exceeds MPI's int count: use more processes");
    const int count = static_cast<int>(s.per_peer);
    comm::check_mpi(MPI_Alltoall(buffer(Buffer::send), count, MPI_C_DOUBLE_COMPLEX, buffer(Buffer::recv), count,
                                 MPI_C_DOUBLE_COMPLEX, s.row_comm ? row_ : col_),
                    s.row_comm ? "MPI_Alltoall (row)" : "MPI_Alltoall (column)");
    const int me = plan_.grid().rank;
    for (int peer : s.row_comm ? row_members_ : col_members_)
      if (peer != me) traffic_.count(peer, static_cast<std::size_t>(s.per_peer) * sizeof(Complex));
  }

  const FtPlan& plan_;
  const kernels::FtOps& ops_;
  common::PhaseTimers& tm_;
  comm::PeerTraffic& traffic_;
  std::array<std::vector<Complex>, static_cast<std::size_t>(Buffer::count)> buffers_;
  MPI_Comm row_ = MPI_COMM_NULL, col_ = MPI_COMM_NULL;
  std::vector<int> row_members_, col_members_;
  std::array<std::vector<std::string>, 2> keys_;
};

std::string grid_text(const FtGrid& g) {
  if (g.nprocs == 1) return "1 x 1 (one process: no all-to-all)";
  if (g.decomp == "1d") return "1 x " + std::to_string(g.p2) + " (1d: slabs, one all-to-all over all processes)";
  const std::string grid = std::to_string(g.p1) + " x " + std::to_string(g.p2);
  if (g.p2 == 1) return grid + " (2d: pencils, all-to-all in rows of " + std::to_string(g.p1) + "; z is local)";
  return grid + " (2d: pencils, all-to-alls in rows of " + std::to_string(g.p1) + " and columns of " +
         std::to_string(g.p2) + ")";
}

// The FT proxy's steps in the common lifecycle.
class FtProxy final : public common::NasProxy<FtOptions, FtClass> {
 public:
  FtProxy(const MpiWorld& w, const common::Variant& v, const FtOptions& o)
      : NasProxy(w, v, o, ft_class(o.cls)),
        grid_(make_ft_grid(cls_.nx, cls_.ny, cls_.nz, o.decomp, w.size, w.rank)),
        engine_(kernels::parse_fft_engine(o.fft)) {}

  // The tile bounds one batch of lines (data and work space, real and imaginary).
  std::size_t tile_buffer_bytes() const override {
    return static_cast<std::size_t>(grid_.local_points()) * sizeof(Complex);
  }

  void set_up(const common::RunStart& start) override {
    const std::size_t tile_bytes = tile_.tiled ? std::max<std::size_t>(sizeof(double), tile_.bytes) : 0;
    ops_ = kernels::make_ft_ops(v_.backend, v_.threads, tile_bytes);
    plan_ = std::make_unique<FtPlan>(grid_, v_.fused, engine_);
    fft_ = std::make_unique<Transform>(w_.comm, *plan_, *ops_, v_.threads, timers_, traffic_);
    // Whether every member of the row (and of the column) communicator shares this rank's node:
    // there an all-to-all is copies through shared memory, which work() declares.
    const auto& p = start.placement;
    const auto on_node = [&](int peer) {
      return p.size() == static_cast<std::size_t>(w_.size) &&
             comm::classify(p[static_cast<std::size_t>(w_.rank)], p[static_cast<std::size_t>(peer)]) !=
                 comm::Channel::inter_node;
    };
    row_on_node_ = col_on_node_ = true;
    for (int i = 0; i < grid_.p1; ++i) row_on_node_ = row_on_node_ && on_node(grid_.row_member(i));
    for (int j = 0; j < grid_.p2; ++j) col_on_node_ = col_on_node_ && on_node(grid_.column_member(j));
  }

  // One untimed round touches every array and warms the code (NAS runs its set-up and the
  // forward transform once before timing); the timed run starts over from the beginning.
  void warm_up() override {
    initial_conditions(grid_, fft_->buffer(Buffer::a), v_.threads);
    fft_->forward();
    fft_->inverse();
  }

  std::vector<std::string> comm_phases() const override { return {"alltoall"}; }

  std::vector<std::string> phases() const override {
    std::vector<std::string> out;
    for (const bool fwd : {true, false})
      for (const auto& k : fft_->keys(fwd)) out.push_back(k);
    return out;
  }

  // Timed, as NAS times it: the initial conditions, the forward FFT and every iteration.
  void iterate() override {
    Complex* a = fft_->buffer(Buffer::a);
    timers_.time("setup", [&] { initial_conditions(grid_, a, v_.threads); });
    fft_->forward();
    for (int it = 1; it <= cls_.niter; ++it) {
      fft_->inverse();
      timers_.time("checksum", [&] { sums_.push_back(checksum(a)); });
      if (!o_.quiet && w_.rank == 0) {
        std::printf(" T = %4d     Checksum = %22.12E %22.12E\n", it, sums_.back().real(), sums_.back().imag());
        std::fflush(stdout);
      }
    }
  }

  // Phase totals per rank, summed over the steps.
  void after_timing() override {
    std::array<double, kStepPhase.size()> per_phase{};
    for (const bool fwd : {true, false}) {
      const auto& steps = fwd ? plan_->forward() : plan_->inverse();
      const auto& keys = fft_->keys(fwd);
      for (std::size_t k = 0; k < steps.size(); ++k)
        per_phase[static_cast<std::size_t>(steps[k].kind)] += timers_.get(keys[k]);
    }
    for (std::size_t p = 0; p < kStepPhase.size(); ++p) timers_.add(kStepPhase[p], per_phase[p]);
  }

  // Every rank holds the same reduced checksums.
  bool verify() override {
    bool passed = true;
    for (int it = 0; it < cls_.niter; ++it) {
      const Complex ref = cls_.checksum[static_cast<std::size_t>(it)];
      const double err = std::abs(sums_[static_cast<std::size_t>(it)] - ref) / std::abs(ref);
      errors_.push_back(err);
      if (std::isnan(err) || err > kChecksumTolerance) passed = false;
      max_error_ = std::max(max_error_, std::isnan(err) ? INFINITY : err);
    }
    return passed;
  }

  common::Summary summarize(const common::Measured& m, bool quiet) const override;
  common::Work work() const override;

 private:
  // Every rank's checksum of layout A, summed over the ranks and divided by nx ny nz.
  Complex checksum(const Complex* a) const {
    const Complex c = local_checksum(grid_, a);
    double both[2] = {c.real(), c.imag()};
    comm::check_mpi(MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_SUM, w_.comm), "MPI_Allreduce (checksum)");
    return Complex(both[0], both[1]) / (static_cast<double>(cls_.nx) * cls_.ny * cls_.nz);
  }
  std::string fft_text() const {
    return engine_ == kernels::FftEngine::fftw
               ? "FFTW " + kernels::fftw_version() + " (guru split-array plans, measured)"
               : "pxq's own (Stockham, radix 4)";
  }
  std::string step_table(const common::Measured& m) const;
  std::string checksum_table() const;
  nlohmann::json step_json(const common::Measured& m) const;
  nlohmann::json checksum_json() const;

  FtGrid grid_;
  kernels::FftEngine engine_;
  std::unique_ptr<kernels::FtOps> ops_;
  std::unique_ptr<FtPlan> plan_;
  std::unique_ptr<Transform> fft_;
  bool row_on_node_ = false, col_on_node_ = false;  // every member of the communicator on this node
  std::vector<Complex> sums_;
  std::vector<double> errors_;
  double max_error_ = 0.0;
};

// Per step (the forward ones once, the inverse ones every iteration), over this rank's
// points P (16 B each, twice that when the step writes another buffer than it reads): an FFT
// of length n does 5 log2(n) flops per point and reads and writes the batch once per radix-4
// pass at the cores, its source and destination once from memory, reusing the batch (the
// executor's lines per batch: NAS's fftblock untiled, sized by the tile tiled) between passes;
// a copy reads and writes every point;
// NAS's evolve multiplies by three real factors (4 flops) and reads and writes u0 and writes
// u1; an FFT with the evolve folded in does it on the way. An all-to-all among ranks of one
// node runs at the all-to-all kind's rate (MPI's own exchange through shared memory, measured
// with the node's ranks busy on buffers of this size: the send and receive buffers): the
// blocks sent to the other ranks, 16 B a point (its own block, copied to itself, rides along
// as in the kind's kernel). To another node the link binds, which the ceilings do not
// measure: such an all-to-all is not declared, and its time stays outside the model.
common::Work FtProxy::work() const {
  const double P = static_cast<double>(grid_.local_points());
  common::Work out;
  for (const bool fwd : {true, false}) {
    const double calls = fwd ? 1.0 : cls_.niter;
    const auto& steps = fwd ? plan_->forward() : plan_->inverse();
    const auto& keys = fft_->keys(fwd);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const Step& st = steps[k];
      const double held = P * (st.src == st.dst ? 16.0 : 32.0);
      common::PhaseWork w{keys[k], 0.0, 0.0, 0.0, held, held, st.what};
      if (st.kind == Step::Kind::fft) {
        const int n = st.pass.plan->size();
        const double log2n = std::log2(n);
        const bool evolve = st.pass.evolve.outer != nullptr;
        const bool rows = st.pass.src.line != 1 || st.pass.dst.line != 1;  // gathered by transposition
        w.flops = calls * P * (5.0 * log2n + (evolve ? 4.0 : 0.0));
        w.memory = calls * P * 32.0;
        w.bytes = w.memory + calls * P * 32.0 * std::ceil(log2n / 2.0);
        w.working_set = std::min(16.0 * n * std::min(ops_->batch_lines(n, rows), st.pass.line_count), held);
        w.kind = "fft";
      } else if (st.kind == Step::Kind::copy) {
        w.bytes = w.memory = calls * P * 32.0;
      } else if (st.kind == Step::Kind::evolve) {
        w.flops = calls * P * 4.0;
        w.bytes = w.memory = calls * P * 48.0;
        w.footprint = w.working_set = P * 48.0;
      } else {
        if (!(st.row_comm ? row_on_node_ : col_on_node_)) continue;
        const double peers = st.row_comm ? grid_.p1 : grid_.p2, block = static_cast<double>(st.per_peer) * 16.0;
        w.bytes = w.memory = calls * (peers - 1.0) * block;
        w.footprint = w.working_set = 2.0 * peers * block;
        w.kind = "alltoall";
        w.what = "an all-to-all within this node: the blocks sent to the other ranks, with MPI_Alltoall";
      }
      out.push_back(w);
    }
  }
  return out;
}

std::string FtProxy::step_table(const common::Measured& m) const {
  std::ostringstream out;
  out << "\n  step  what                                              seconds (slowest rank)\n";
  for (const bool fwd : {true, false}) {
    const auto& steps = fwd ? plan_->forward() : plan_->inverse();
    const auto& keys = fft_->keys(fwd);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      char line[160];
      std::snprintf(line, sizeof(line), "  %-4s  %-48s  %8.4f\n", keys[k].c_str(), steps[k].what.c_str(),
                    m.phase(keys[k]));
      out << line;
    }
  }
  return out.str();
}

std::string FtProxy::checksum_table() const {
  std::ostringstream out;
  out << "\n  iter            checksum (real, imag)                  reference                      error\n";
  for (int it = 0; it < cls_.niter; ++it) {
    const Complex s = sums_[static_cast<std::size_t>(it)], r = cls_.checksum[static_cast<std::size_t>(it)];
    char line[200];
    std::snprintf(line, sizeof(line), "  %4d  %20.12E %20.12E  %20.12E %20.12E  %9.2E\n", it + 1, s.real(), s.imag(),
                  r.real(), r.imag(), errors_[static_cast<std::size_t>(it)]);
    out << line;
  }
  return out.str();
}

nlohmann::json FtProxy::step_json(const common::Measured& m) const {
  nlohmann::json steps = nlohmann::json::array();
  for (const bool fwd : {true, false}) {
    const auto& list = fwd ? plan_->forward() : plan_->inverse();
    const auto& keys = fft_->keys(fwd);
    for (std::size_t k = 0; k < list.size(); ++k)
      steps.push_back(
          {{"step", keys[k]}, {"what", list[k].what}, {"phase", phase_of(list[k])}, {"seconds", m.phase(keys[k])}});
  }
  return steps;
}

nlohmann::json FtProxy::checksum_json() const {
  nlohmann::json checks = nlohmann::json::array();
  for (int it = 0; it < cls_.niter; ++it) {
    const Complex s = sums_[static_cast<std::size_t>(it)], r = cls_.checksum[static_cast<std::size_t>(it)];
    checks.push_back({{"iteration", it + 1},
                      {"checksum", {s.real(), s.imag()}},
                      {"reference", {r.real(), r.imag()}},
                      {"error", errors_[static_cast<std::size_t>(it)]}});
  }
  return checks;
}

common::Summary FtProxy::summarize(const common::Measured& m, bool quiet) const {
  const double a2a = m.phase("alltoall");
  const double a2a_share = m.total > 0 ? a2a / m.total : 0.0;
  const std::array<int, 3> lens{cls_.nx, cls_.ny, cls_.nz};
  std::string batches;
  for (std::size_t d = 0; d < 3; ++d)
    batches += (d ? ", " : "") + std::string(1, "xyz"[d]) + " " + std::to_string(ops_->batch_lines(lens[d], d == 0));
  common::Summary s;
  s.title = "FT";
  s.head = {{"Class", std::string(1, cls_.name)},
            {"Size", std::to_string(cls_.nx) + "x" + std::to_string(cls_.ny) + "x" + std::to_string(cls_.nz)},
            {"Iterations", std::to_string(cls_.niter)}};
  s.grid = grid_text(grid_);
  s.variant = {{"Lines per batch", batches + (tile_.tiled ? " (sized by the tile)" : " (NAS's fftblock)")},
               {"FFT", fft_text()}};
  s.operations = nas_operation_count(cls_);
  std::string phases;
  for (const char* p : {"fft", "pack", "alltoall", "evolve", "checksum", "setup"})
    phases += std::string(phases.empty() ? "" : ", ") + p + " " + common::fmt("%.4f", m.phase(p)) + " s";
  s.metrics = {{"Phases (max)", phases},
               {"All-to-all", common::fmt("%.1f", 100.0 * a2a_share) + "% of the time (slowest rank)"}};
  if (v_.fused)
    s.notes.push_back(
        "fused: FFTs write send buffers and read receive buffers directly (no pack/unpack); evolve is folded "
        "into the first inverse pass and booked as fft");
  s.tables = (quiet ? std::string() : step_table(m)) + checksum_table();
  s.checks = {{"Max error", common::fmt("%.3E", max_error_) + " (tolerance " + common::fmt("%.0e", kChecksumTolerance) +
                                ", relative, every iteration)"}};
  s.size = class_size({{"nx", cls_.nx},
                       {"ny", cls_.ny},
                       {"nz", cls_.nz},
                       {"niter", cls_.niter},
                       {"decomp", grid_.decomp},
                       {"grid", {grid_.p1, grid_.p2}}});
  s.time = {{"fft", m.phase("fft")},
            {"pack", m.phase("pack")},
            {"alltoall", a2a},
            {"comm", a2a},  // what reports show as communication: the all-to-alls
            {"evolve", m.phase("evolve")},
            {"checksum", m.phase("checksum")},
            {"setup", m.phase("setup")},
            {"steps", step_json(m)}};
  s.metrics_json = {{"alltoall_share", a2a_share}};
  s.verification = {{"checksums", checksum_json()},
                    {"max_error", max_error_},
                    {"tolerance", kChecksumTolerance},
                    {"method", "NAS FT checksum of 1024 points after every iteration, relative error of each"}};
  s.variant_json = {{"fft", kernels::fft_engine_name(engine_)},
                    {"fft_library", engine_ == kernels::FftEngine::fftw ? "FFTW " + kernels::fftw_version() : "pxq"},
                    {"lines_per_batch",
                     {{"x", ops_->batch_lines(cls_.nx, true)},
                      {"y", ops_->batch_lines(cls_.ny, false)},
                      {"z", ops_->batch_lines(cls_.nz, false)}}}};
  return s;
}

}  // namespace
}  // namespace pxq::ft

PXQ_PROXY_MAIN(pxq::ft::FtProxy, pxq::ft::FtOptions, "ft", "pxq ft: NAS FT (3-D FFT solution of a diffusion equation)")
