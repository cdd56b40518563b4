// The FT proxy: NAS FT's spectral solution of a 3-D diffusion equation. The initial field
// (NAS's random stream) is transformed forward once; every iteration multiplies the spectrum
// by the evolution factors (cumulatively, as NAS does), transforms it back and takes a
// checksum of 1024 points, which must match NAS's to 1e-12 on every iteration.
//
// A 3-D FFT is three passes of 1-D FFTs, one per axis, with an all-to-all between passes
// wherever the next axis is split over processes (ft_problem.hpp has the layouts). The
// plan is a list of steps; this file runs them with MPI and times each one.
#include "ft.hpp"

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
#include "pxq/common/run_context.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::ft {
namespace {

using common::MpiWorld;

constexpr std::array<const char*, 4> kStepPhase{"fft", "pack", "alltoall", "evolve"};

const char* phase_of(const Step& s) { return kStepPhase[static_cast<std::size_t>(s.kind)]; }

// The plan's arrays and communicators on this rank, and the steps run with MPI.
class Transform {
 public:
  Transform(MPI_Comm world, const FtPlan& plan, const kernels::FtOps& ops, common::PhaseTimers& timers,
            comm::PeerTraffic& traffic)
      : plan_(plan), ops_(ops), tm_(timers), traffic_(traffic) {
    const FtGrid& g = plan.grid();
    for (std::size_t b = 0; b < buffers_.size(); ++b)
      if (plan.uses(static_cast<Buffer>(b))) buffers_[b].assign(static_cast<std::size_t>(g.local_points()), Complex{});
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
          case Step::Kind::fft: ops_.fft(buffer(s.src), buffer(s.dst), s.pass); break;
          case Step::Kind::copy: ops_.copy(buffer(s.src), buffer(s.dst), s.copy); break;
          case Step::Kind::evolve:
            ops_.evolve(buffer(s.src), buffer(s.dst), s.n1, s.n2, s.n3, s.f1, s.f2, s.f3);
            break;
          case Step::Kind::alltoall: alltoall(s); break;
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

}  // namespace

void add_ft_options(CLI::App& app, FtOptions& o) {
  app.add_option("--class", o.cls, "NAS problem class: S, W, A, B or C");
  app.add_option("--decomp", o.decomp,
                 "1d (slabs), 2d (pencils) or auto (NAS's choice: 1d up to nz processes, else 2d)");
  app.add_flag("--quiet", o.quiet, "No per-iteration lines and no per-step table");
}

int run_ft(const MpiWorld& w, const common::CommonOptions& co, const FtOptions& o) {
  // ---- validate everything before any MPI work ----
  const common::Variant variant = common::resolve_variant(co);
  const FtClass& cls = ft_class(o.cls);
  const FtGrid grid = make_ft_grid(cls.nx, cls.ny, cls.nz, o.decomp, w.size, w.rank);
  // The tile bounds one batch of lines (data and work space, real and imaginary).
  const common::RunStart start = common::start_run(
      w, co, variant, static_cast<std::size_t>(grid.local_points()) * sizeof(Complex), "ft_pencils");
  const tiling::TileResolution& tile = start.tile;
  const common::LayoutFacts& facts = start.facts;
  const int T = variant.threads;
  const std::size_t tile_bytes = tile.tiled ? std::max<std::size_t>(sizeof(double), tile.bytes) : 0;

  // ---- set-up ----
  const auto ops = kernels::make_ft_ops(variant.backend, T, tile_bytes);
  const FtPlan plan(grid, tile.tiled);
  common::PhaseTimers timers;
  comm::PeerTraffic traffic(w.size);
  Transform fft(w.comm, plan, *ops, timers, traffic);
  Complex* a = fft.buffer(Buffer::a);

  // Every rank's checksum of layout A, summed over the ranks and divided by nx ny nz.
  const double ntotal = static_cast<double>(cls.nx) * cls.ny * cls.nz;
  auto checksum = [&] {
    Complex c = local_checksum(grid, a);
    double both[2] = {c.real(), c.imag()};
    comm::check_mpi(MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_SUM, w.comm), "MPI_Allreduce (checksum)");
    return Complex(both[0], both[1]) / ntotal;
  };

  // One untimed round touches every array and warms the code (NAS runs its set-up and the
  // forward transform once before timing); the timed run starts over from the beginning.
  initial_conditions(grid, a, T);
  fft.forward();
  fft.inverse();
  timers.reset();
  traffic.reset();
  for (const bool fwd : {true, false})
    for (const auto& k : fft.keys(fwd)) timers.add(k, 0.0);

  // Timed, as NAS times it: the initial conditions, the forward FFT and every iteration.
  std::vector<Complex> sums;
  const double t0 = common::synced_time(w.comm);
  timers.time("setup", [&] { initial_conditions(grid, a, T); });
  fft.forward();
  for (int it = 1; it <= cls.niter; ++it) {
    fft.inverse();
    timers.time("checksum", [&] { sums.push_back(checksum()); });
    if (!o.quiet && w.rank == 0) {
      std::printf(" T = %4d     Checksum = %22.12E %22.12E\n", it, sums.back().real(), sums.back().imag());
      std::fflush(stdout);
    }
  }
  const double local_total = MPI_Wtime() - t0;
  double total = 0.0;
  MPI_Allreduce(&local_total, &total, 1, MPI_DOUBLE, MPI_MAX, w.comm);

  // Phase totals per rank (summed over steps), then the slowest rank's of each.
  std::array<double, kStepPhase.size()> per_phase{};
  for (const bool fwd : {true, false}) {
    const auto& steps = fwd ? plan.forward() : plan.inverse();
    const auto& keys = fft.keys(fwd);
    for (std::size_t k = 0; k < steps.size(); ++k)
      per_phase[static_cast<std::size_t>(steps[k].kind)] += timers.get(keys[k]);
  }
  for (std::size_t p = 0; p < kStepPhase.size(); ++p) timers.add(kStepPhase[p], per_phase[p]);
  const auto phases = timers.max_over_ranks(w.comm);
  const nlohmann::json messages = traffic.summarize(w.comm, start.placement);

  // Every rank holds the same reduced checksums.
  double max_error = 0.0;
  bool passed = true;
  std::vector<double> errors;
  for (int it = 0; it < cls.niter; ++it) {
    const Complex ref = cls.checksum[static_cast<std::size_t>(it)];
    const double err = std::abs(sums[static_cast<std::size_t>(it)] - ref) / std::abs(ref);
    errors.push_back(err);
    if (std::isnan(err) || err > kChecksumTolerance) passed = false;
    max_error = std::max(max_error, std::isnan(err) ? INFINITY : err);
  }
  if (w.rank != 0) return passed ? common::kExitOk : common::kExitVerificationFailed;

  // ---- report (rank 0) ----
  const double mops = nas_operation_count(cls) / total / 1e6;
  const double a2a = phases.at("alltoall");
  const double a2a_share = total > 0 ? a2a / total : 0.0;
  const std::array<int, 3> lens{cls.nx, cls.ny, cls.nz};
  std::string batches;
  for (std::size_t d = 0; d < 3; ++d)
    batches += (d ? ", " : "") + std::string(1, "xyz"[d]) + " " + std::to_string(ops->batch_lines(lens[d], d == 0));

  std::vector<std::string> notes = common::start_notes(start);
  if (tile.tiled)
    notes.push_back(
        "tiled: FFTs write send buffers and read receive buffers directly (no pack/unpack); evolve is folded "
        "into the first inverse pass and booked as fft");

  const std::string tile_text = tile.tiled ? tiling::format_bytes(tile.bytes) + " (" + tile.source + ")" : "off";
  std::ostringstream out;
  out << "\n FT Benchmark Completed.\n"
      << " Class           = " << cls.name << "\n"
      << " Size            = " << cls.nx << "x" << cls.ny << "x" << cls.nz << "\n"
      << " Iterations      = " << cls.niter << "\n"
      << " Time in seconds = " << common::fmt("%.4f", total) << "\n"
      << " Total processes = " << w.size << "\n"
      << " Process grid    = " << grid_text(grid) << "\n"
      << " Layout          = " << facts.nodes << "x" << facts.ranks_per_node << "x" << T << " ("
      << facts.observed_nodes << " node(s) observed, " << co.alloc << ")\n"
      << " Threads/process = " << T << "\n"
      << " Variant         = " << variant.mode << ", backend " << kernels::backend_name(variant.backend) << "\n"
      << " Tile            = " << tile_text << "\n"
      << " Lines per batch = " << batches << (tile.tiled ? " (sized by the tile)" : " (NAS's fftblock)") << "\n"
      << " Mop/s total     = " << common::fmt("%.2f", mops) << "\n"
      << " Mop/s/process   = " << common::fmt("%.2f", mops / w.size) << "\n"
      << " Operation type  = floating point\n"
      << " Phases (max)    = fft " << common::fmt("%.4f", phases.at("fft")) << " s, pack "
      << common::fmt("%.4f", phases.at("pack")) << " s, alltoall " << common::fmt("%.4f", a2a) << " s, evolve "
      << common::fmt("%.4f", phases.at("evolve")) << " s, checksum " << common::fmt("%.4f", phases.at("checksum"))
      << " s, setup " << common::fmt("%.4f", phases.at("setup")) << " s\n"
      << " All-to-all      = " << common::fmt("%.1f", 100.0 * a2a_share) << "% of the time (slowest rank)\n"
      << " MPI             = " << messages["messages"].get<std::uint64_t>() << " messages, "
      << common::fmt("%.3f", messages["bytes"].get<std::uint64_t>() / 1e6) << " MB\n";
  for (const auto& n : notes) out << " Note            = " << n << "\n";
  if (!o.quiet) {
    out << "\n  step  what                                              seconds (slowest rank)\n";
    for (const bool fwd : {true, false}) {
      const auto& steps = fwd ? plan.forward() : plan.inverse();
      const auto& keys = fft.keys(fwd);
      for (std::size_t k = 0; k < steps.size(); ++k) {
        char line[160];
        std::snprintf(line, sizeof(line), "  %-4s  %-48s  %8.4f\n", keys[k].c_str(), steps[k].what.c_str(),
                      phases.at(keys[k]));
        out << line;
      }
    }
  }
  out << "\n  iter            checksum (real, imag)                  reference                      error\n";
  for (int it = 0; it < cls.niter; ++it) {
    const Complex s = sums[static_cast<std::size_t>(it)], r = cls.checksum[static_cast<std::size_t>(it)];
    char line[200];
    std::snprintf(line, sizeof(line), "  %4d  %20.12E %20.12E  %20.12E %20.12E  %9.2E\n", it + 1, s.real(), s.imag(),
                  r.real(), r.imag(), errors[static_cast<std::size_t>(it)]);
    out << line;
  }
  out << " Max error       = " << common::fmt("%.3E", max_error) << " (tolerance "
      << common::fmt("%.0e", kChecksumTolerance) << ", relative, every iteration)\n"
      << " Verification    = " << (passed ? "SUCCESSFUL" : "UNSUCCESSFUL") << "\n";
  std::fputs(out.str().c_str(), stdout);
  std::fflush(stdout);

  if (!co.json_path.empty()) {
    nlohmann::json steps = nlohmann::json::array();
    for (const bool fwd : {true, false}) {
      const auto& list = fwd ? plan.forward() : plan.inverse();
      const auto& keys = fft.keys(fwd);
      for (std::size_t k = 0; k < list.size(); ++k)
        steps.push_back({{"step", keys[k]}, {"what", list[k].what}, {"phase", phase_of(list[k])},
                         {"seconds", phases.at(keys[k])}});
    }
    nlohmann::json checks = nlohmann::json::array();
    for (int it = 0; it < cls.niter; ++it) {
      const Complex s = sums[static_cast<std::size_t>(it)], r = cls.checksum[static_cast<std::size_t>(it)];
      checks.push_back({{"iteration", it + 1},
                        {"checksum", {s.real(), s.imag()}},
                        {"reference", {r.real(), r.imag()}},
                        {"error", errors[static_cast<std::size_t>(it)]}});
    }
    nlohmann::json rec = common::record_frame("ft", passed, co, variant, start, w.size, notes);
    rec.update(nlohmann::json{
        {"size",
         {{"class", std::string(1, cls.name)},
          {"nx", cls.nx},
          {"ny", cls.ny},
          {"nz", cls.nz},
          {"niter", cls.niter},
          {"decomp", grid.decomp},
          {"grid", {grid.p1, grid.p2}}}},
        {"time",
         {{"total", total},
          {"fft", phases.at("fft")},
          {"pack", phases.at("pack")},
          {"alltoall", a2a},
          {"comm", a2a},  // what reports show as communication: the all-to-alls
          {"evolve", phases.at("evolve")},
          {"checksum", phases.at("checksum")},
          {"setup", phases.at("setup")},
          {"steps", steps}}},
        {"metrics",
         {{"mops_total", mops},
          {"mops_per_process", mops / w.size},
          {"alltoall_share", a2a_share},
          {"mpi_bytes", messages["bytes"]},
          {"mpi_messages", messages["messages"]}}},
        {"messages", messages},
        {"verification",
         {{"passed", passed},
          {"checksums", checks},
          {"max_error", max_error},
          {"tolerance", kChecksumTolerance},
          {"method", "NAS FT checksum of 1024 points after every iteration, relative error of each"}}}});
    rec["variant"]["lines_per_batch"] = {{"x", ops->batch_lines(cls.nx, true)},
                                         {"y", ops->batch_lines(cls.ny, false)},
                                         {"z", ops->batch_lines(cls.nz, false)}};
    common::append_record(co.json_path, rec);
  }
  return passed ? common::kExitOk : common::kExitVerificationFailed;
}

}  // namespace pxq::ft
