// The CG proxy: NAS CG's inverse power method. Each of `niter` outer iterations solves
// A z = x with 25 conjugate gradient iterations, then zeta = shift + 1 / (x.z) and
// x = z / ||z||. The matrix is spread over a 2-D process grid: a rank multiplies its block,
// the partial row sums are added along the process row in log2(npcols) pairwise exchanges,
// and the transpose partner hands over the piece that lines up with this rank's columns.
// Dot products are reduced with the same pairwise exchanges. All point to point, as NAS.
#include "cg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cg_problem.hpp"
#include "pxq/comm/peer_traffic.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/cg_ops.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::cg {
namespace {

using common::MpiWorld;

constexpr int kTransposeTag = 100;

struct Vectors {
  std::vector<double> x, z, p, q, r, w;
  explicit Vectors(std::size_t n) : x(n, 1.0), z(n, 0.0), p(n, 0.0), q(n, 0.0), r(n, 0.0), w(n, 0.0) {}
};

// One rank's share of the solver: its matrix block, the grid's exchange schedule, and the
// kernels. The flat and hybrid variants run NAS's sequence of sweeps; the tiled variant
// fuses sweeps and multiplies with the column-blocked matrix.
class Solver {
 public:
  Solver(MPI_Comm comm, const CgGrid& g, const kernels::CsrMatrix& a,
         const kernels::BlockedCsr* blocked, const kernels::CgOps& ops,
         common::PhaseTimers& timers, comm::PeerTraffic& traffic)
      : comm_(comm), g_(g), a_(a), blocked_(blocked), ops_(ops), tm_(timers), traffic_(traffic) {}

  // NAS conj_grad: returns ||x - A z|| after 25 iterations.
  double conj_grad(Vectors& v) const {
    const std::size_t nc = static_cast<std::size_t>(g_.ncols());
    double* x = v.x.data();
    double* z = v.z.data();
    double* p = v.p.data();
    double* q = v.q.data();
    double* r = v.r.data();
    double* w = v.w.data();
    double rho = 0.0;
    tm_.time("vector", [&] {
      if (blocked_) {
        rho = ops_.start_norm(x, q, z, r, p, nc);
      } else {
        ops_.start(x, q, z, r, p, nc);
        std::fill(v.w.begin(), v.w.end(), 0.0);
        rho = ops_.dot(r, r, nc);
      }
    });
    rho = reduce_scalar(rho);
    double pending_beta = 0.0;  // tiled: p = r + beta p is applied inside the next SpMV
    for (int cgit = 1; cgit <= kCgIterations; ++cgit) {
      tm_.time("spmv", [&] {
        if (!blocked_)
          ops_.spmv(a_, p, w);
        else if (cgit == 1)
          ops_.spmv_blocked(*blocked_, p, w);
        else
          ops_.update_p_spmv(*blocked_, p, r, pending_beta, w);
      });
      row_sum_transpose(w, q);
      double d = 0.0;
      tm_.time("vector", [&] {
        if (!blocked_)  // NAS clears w here; the tiled variant never reads it before writing
          std::fill(v.w.begin(), v.w.begin() + std::max(g_.nrows(), g_.ncols()), 0.0);
        d = ops_.dot(p, q, nc);
      });
      d = reduce_scalar(d);
      const double alpha = rho / d;
      const double rho0 = rho;
      tm_.time("vector", [&] {
        if (blocked_) {
          rho = ops_.update_zr_norm(z, r, p, q, alpha, nc);
        } else {
          ops_.update_zr(z, r, p, q, alpha, nc);
          rho = ops_.dot(r, r, nc);
        }
      });
      rho = reduce_scalar(rho);
      const double beta = rho / rho0;
      if (blocked_)
        pending_beta = beta;
      else
        tm_.time("vector", [&] { ops_.update_p(p, r, beta, nc); });
    }
    // ||x - A z||: r = A z, summed and transposed like q.
    tm_.time("spmv", [&] {
      if (blocked_)
        ops_.spmv_blocked(*blocked_, z, w);
      else
        ops_.spmv(a_, z, w);
    });
    row_sum_transpose(w, r);
    double sum = 0.0;
    tm_.time("vector", [&] { sum = ops_.dist2(x, r, nc); });
    return std::sqrt(reduce_scalar(sum));
  }

  // {x.z, z.z} over all columns.
  std::pair<double, double> norms(const Vectors& v) const {
    std::pair<double, double> s;
    tm_.time("vector",
             [&] { s = ops_.dot2(v.x.data(), v.z.data(), static_cast<std::size_t>(g_.ncols())); });
    double buf[2] = {s.first, s.second};
    reduce_scalars(buf, 2);
    return {buf[0], buf[1]};
  }

  void normalize(Vectors& v, double s) const {
    tm_.time("vector", [&] {
      ops_.scale(v.x.data(), s, v.z.data(), static_cast<std::size_t>(g_.ncols()));
    });
  }

 private:
  // Sum over the process row, pairwise, as NAS: `count` doubles at once.
  void reduce_scalars(double* values, int count) const {
    if (g_.scalar_partners.empty()) return;
    tm_.time("comm", [&] {
      double other[2];
      int tag = 1;
      for (int partner : g_.scalar_partners) {
        comm::exchange(comm_, values, count, other, count, partner, tag++, traffic_);
        for (int i = 0; i < count; ++i) values[i] += other[i];
      }
    });
  }
  double reduce_scalar(double value) const {
    reduce_scalars(&value, 1);
    return value;
  }

  // w holds this rank's partial row sums; afterwards `out` holds the full sums for this
  // rank's columns. `out` doubles as the receive buffer, as in NAS.
  void row_sum_transpose(double* w, double* out) const {
    int tag = 1;
    for (const ReduceStep& s : g_.steps) {
      tm_.time("comm", [&] {
        comm::exchange(comm_, w + s.send_start, s.send_len, out + s.recv_start, s.recv_len,
                       s.partner, tag++, traffic_);
      });
      tm_.time("vector", [&] {
        ops_.add(w + g_.send_start, out + g_.send_start, static_cast<std::size_t>(s.recv_len));
      });
    }
    if (!g_.steps.empty()) {
      tm_.time("comm", [&] {
        comm::exchange(comm_, w + g_.send_start, g_.send_len, out, g_.exch_recv_len, g_.exch_proc,
                       kTransposeTag, traffic_);
      });
    } else {
      tm_.time("vector", [&] { std::copy(w, w + g_.exch_recv_len, out); });
    }
  }

  MPI_Comm comm_;
  const CgGrid& g_;
  const kernels::CsrMatrix& a_;
  const kernels::BlockedCsr* blocked_;
  const kernels::CgOps& ops_;
  common::PhaseTimers& tm_;
  comm::PeerTraffic& traffic_;
};

// Bytes one SpMV must move at least: the matrix (values, column indices, row offsets),
// the result, and the source vector once.
double spmv_bytes(const kernels::CsrMatrix& a) {
  return static_cast<double>(a.nnz()) * (sizeof(double) + sizeof(std::int32_t)) +
         (a.nrows + 1.0) * sizeof(std::int64_t) + a.nrows * 8.0 + a.ncols * 8.0;
}

}  // namespace

void add_cg_options(CLI::App& app, CgOptions& o) {
  app.add_option("--class", o.cls, "NAS problem class: S, W, A, B or C");
  app.add_flag("--quiet", o.quiet, "No per-iteration lines");
}

int run_cg(const MpiWorld& w, const common::CommonOptions& co, const CgOptions& o) {
  // ---- validate everything before any MPI work ----
  const common::Variant variant = common::resolve_variant(co);
  const CgClass& cls = cg_class(o.cls);
  const CgGrid grid = make_grid(cls.na, w.size, w.rank);
  // The tile is a window of the source vector (and a chunk of every vector sweep).
  const common::RunStart start = common::start_run(
      w, co, variant, static_cast<std::size_t>(grid.ncols()) * sizeof(double), "cg_spmv");
  const tiling::TileResolution& tile = start.tile;
  const auto& placement = start.placement;
  const common::LayoutFacts& facts = start.facts;
  const int T = variant.threads;

  // ---- set-up: this rank's block of the matrix ----
  const double t_setup0 = common::synced_time(w.comm);
  const kernels::CsrMatrix a = make_matrix(cls, grid);
  std::unique_ptr<kernels::BlockedCsr> blocked;
  if (tile.tiled)
    blocked = std::make_unique<kernels::BlockedCsr>(
        kernels::block_columns(a, static_cast<int>(std::max<std::size_t>(1, tile.elements))));
  const auto ops = kernels::make_cg_ops(variant.backend, T, tile.tiled ? tile.elements : 0);
  Vectors v(static_cast<std::size_t>(std::max(grid.nrows(), grid.ncols())) + 1);
  double setup = MPI_Wtime() - t_setup0;
  MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, w.comm);

  common::PhaseTimers timers;
  comm::PeerTraffic traffic(w.size);
  const Solver solver(w.comm, grid, a, blocked.get(), *ops, timers, traffic);

  // One untimed iteration touches every page and warms the code, then x starts over.
  {
    solver.conj_grad(v);
    const auto nz = solver.norms(v);
    solver.normalize(v, 1.0 / std::sqrt(nz.second));
  }
  std::fill(v.x.begin(), v.x.end(), 1.0);
  timers.reset();
  traffic.reset();
  for (const char* phase : {"spmv", "comm", "vector"}) timers.add(phase, 0.0);

  std::ostringstream iterations;
  iterations << "\n   iteration           ||r||                 zeta\n";
  double zeta = 0.0;
  const double t0 = common::synced_time(w.comm);
  for (int it = 1; it <= cls.niter; ++it) {
    const double rnorm = solver.conj_grad(v);
    const auto nz = solver.norms(v);
    zeta = cls.shift + 1.0 / nz.first;
    if (!o.quiet && w.rank == 0) {
      char line[96];
      std::snprintf(line, sizeof(line), "    %5d       %20.14e%20.13f\n", it, rnorm, zeta);
      iterations << line;
    }
    solver.normalize(v, 1.0 / std::sqrt(nz.second));
  }
  const double local_total = MPI_Wtime() - t0;
  double total = 0.0;
  MPI_Allreduce(&local_total, &total, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  const auto phases = timers.max_over_ranks(w.comm);

  // Matrix and SpMV traffic over all ranks.
  double local_stats[2] = {static_cast<double>(a.nnz()), spmv_bytes(a)};
  double stats[2] = {0, 0};
  MPI_Reduce(local_stats, stats, 2, MPI_DOUBLE, MPI_SUM, 0, w.comm);
  const nlohmann::json messages = traffic.summarize(w.comm, placement);

  // Every rank computed zeta from the same reduced sums; rank 0's is reported.
  const double error = std::fabs(zeta - cls.zeta) / cls.zeta;
  const bool passed = error <= kZetaTolerance;
  if (w.rank != 0) return passed ? common::kExitOk : common::kExitVerificationFailed;

  // ---- report (rank 0) ----
  const double mops = nas_operation_count(cls) / total / 1e6;
  const double spmv_calls = static_cast<double>(cls.niter) * (kCgIterations + 1);
  const double spmv_gbs =
      phases.at("spmv") > 0 ? stats[1] * spmv_calls / phases.at("spmv") / 1e9 : 0.0;
  std::vector<std::string> notes = common::start_notes(start);
  if (variant.backend == kernels::Backend::kokkos && tile.tiled)
    notes.push_back("kokkos: vector sweeps are fused per element; the tile sets the SpMV column window");

  const std::string tile_text =
      tile.tiled ? tiling::format_bytes(tile.bytes) + " (" + tile.source + ", " +
                       std::to_string(blocked->nblocks) + " column window(s))"
                 : std::string("off");
  std::ostringstream out;
  if (!o.quiet) out << iterations.str();
  char zline[160];
  std::snprintf(zline, sizeof(zline), " Zeta            = %20.13E\n Reference zeta  = %20.13E\n Error           = %20.13E (tolerance %.0e)\n",
                zeta, cls.zeta, error, kZetaTolerance);
  out << "\n CG Benchmark Completed.\n"
      << " Class           = " << cls.name << "\n"
      << " Size            = " << cls.na << "\n"
      << " Iterations      = " << cls.niter << "\n"
      << " Nonzeros        = " << static_cast<long long>(stats[0]) << "\n"
      << " Time in seconds = " << common::fmt("%.4f", total) << "\n"
      << " Setup seconds   = " << common::fmt("%.4f", setup) << " (matrix generation, untimed)\n"
      << " Total processes = " << w.size << "\n"
      << " Process grid    = " << grid.nprows << " x " << grid.npcols << "\n"
      << " Layout          = " << facts.nodes << "x" << facts.ranks_per_node << "x" << T << " ("
      << facts.observed_nodes << " node(s) observed, " << co.alloc << ")\n"
      << " Threads/process = " << T << "\n"
      << " Variant         = " << variant.mode << ", backend " << kernels::backend_name(variant.backend)
      << "\n"
      << " Tile            = " << tile_text << "\n"
      << " Mop/s total     = " << common::fmt("%.2f", mops) << "\n"
      << " Mop/s/process   = " << common::fmt("%.2f", mops / w.size) << "\n"
      << " Operation type  = floating point\n"
      << " Phases (max)    = spmv " << common::fmt("%.4f", phases.at("spmv")) << " s, comm "
      << common::fmt("%.4f", phases.at("comm")) << " s, vector " << common::fmt("%.4f", phases.at("vector")) << " s\n"
      << " SpMV bandwidth  = " << common::fmt("%.2f", spmv_gbs) << " GB/s (matrix + vectors, all ranks)\n"
      << " MPI             = " << messages["messages"].get<std::uint64_t>() << " messages, "
      << common::fmt("%.3f", messages["bytes"].get<std::uint64_t>() / 1e6) << " MB\n";
  for (const auto& n : notes) out << " Note            = " << n << "\n";
  out << zline << " Verification    = " << (passed ? "SUCCESSFUL" : "UNSUCCESSFUL") << "\n";
  std::fputs(out.str().c_str(), stdout);
  std::fflush(stdout);

  if (!co.json_path.empty()) {
    nlohmann::json rec = common::record_frame("cg", passed, co, variant, start, w.size, notes);
    rec.update(nlohmann::json{
        {"size",
         {{"class", std::string(1, cls.name)},
          {"na", cls.na},
          {"nonzer", cls.nonzer},
          {"niter", cls.niter},
          {"shift", cls.shift},
          {"nnz", static_cast<long long>(stats[0])},
          {"grid", {{"nprows", grid.nprows}, {"npcols", grid.npcols}}}}},
        {"time",
         {{"total", total},
          {"spmv", phases.at("spmv")},
          {"comm", phases.at("comm")},
          {"vector", phases.at("vector")},
          {"setup", setup}}},
        {"metrics",
         {{"mops_total", mops},
          {"mops_per_process", mops / w.size},
          {"spmv_gbs", spmv_gbs},
          {"mpi_bytes", messages["bytes"]},
          {"mpi_messages", messages["messages"]}}},
        {"messages", messages},
        {"verification",
         {{"passed", passed},
          {"zeta", zeta},
          {"zeta_reference", cls.zeta},
          {"error", error},
          {"tolerance", kZetaTolerance},
          {"method", "NAS CG zeta after niter outer iterations, relative error"}}}});
    rec["variant"]["column_windows"] = blocked ? blocked->nblocks : 1;
    common::append_record(co.json_path, rec);
  }
  return passed ? common::kExitOk : common::kExitVerificationFailed;
}

}  // namespace pxq::cg
