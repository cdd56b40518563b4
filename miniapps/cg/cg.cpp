// The CG proxy: NAS CG's inverse power method. Each of `niter` outer iterations solves
// A z = x with 25 conjugate gradient iterations, then zeta = shift + 1 / (x.z) and
// x = z / ||z||. The matrix is spread over a 2-D process grid: a rank multiplies its block,
// the partial row sums are added along the process row in log2(npcols) pairwise exchanges,
// and the transpose partner hands over the piece that lines up with this rank's columns.
// Dot products are reduced with the same pairwise exchanges. All point to point, as NAS.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cg_problem.hpp"
#include "pxq/comm/peer_traffic.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/huge_array.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/cg_ops.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::cg {
namespace {

struct CgOptions : common::NasOptions {
  std::string matrix = "csr";  // csr (every entry, as NAS) or sym (the upper triangle, applied twice)

  void add_to(pxq::cli::App& cli) {
    common::add_nas_options(cli, *this, "cg", "No per-iteration lines");
    common::add_app_choice(cli, matrix, "cg", "matrix");
  }
};

using common::MpiWorld;

constexpr int kTransposeTag = 100;

// First touched by the rank's threads, so each thread's share lies on its own NUMA node.
struct Vectors {
  std::vector<double> x, z, p, q, r, w;
  Vectors(std::size_t n, int threads) {
    common::assign_huge(x, n, 1.0, threads);
    for (auto* v : {&z, &p, &q, &r, &w}) common::assign_huge(*v, n, 0.0, threads);
  }
};

// One rank's share of the solver: its matrix block, the grid's exchange schedule, and the
// kernels. The flat and hybrid variants run NAS's sequence of sweeps; the tiled variant
// fuses sweeps and multiplies with the column-blocked matrix.
class Solver {
 public:
  Solver(MPI_Comm comm, const CgGrid& g, const kernels::CsrMatrix& a, const kernels::BlockedCsr* blocked,
         const kernels::SymmetricCsr* symmetric, bool fused, const kernels::CgOps& ops, common::PhaseTimers& timers,
         comm::PeerTraffic& traffic)
      : comm_(comm),
        g_(g),
        a_(a),
        blocked_(blocked),
        symmetric_(symmetric),
        fused_(fused && blocked),
        ops_(ops),
        tm_(timers),
        traffic_(traffic) {}

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
      if (fused_) {
        rho = ops_.start_norm(x, q, z, r, p, nc);
      } else {
        ops_.start(x, q, z, r, p, nc);
        if (!blocked_) std::fill(v.w.begin(), v.w.end(), 0.0);
        rho = ops_.dot(r, r, nc);
      }
    });
    rho = reduce_scalar(rho);
    double pending_beta = 0.0;  // fused: p = r + beta p is applied inside the next SpMV
    for (int cgit = 1; cgit <= kCgIterations; ++cgit) {
      tm_.time("spmv", [&] {
        if (symmetric_)
          ops_.spmv_symmetric(*symmetric_, p, w);
        else if (!blocked_)
          ops_.spmv(a_, p, w);
        else if (cgit == 1 || !fused_)
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
        if (fused_) {
          rho = ops_.update_zr_norm(z, r, p, q, alpha, nc);
        } else {
          ops_.update_zr(z, r, p, q, alpha, nc);
          rho = ops_.dot(r, r, nc);
        }
      });
      rho = reduce_scalar(rho);
      const double beta = rho / rho0;
      if (fused_)
        pending_beta = beta;
      else
        tm_.time("vector", [&] { ops_.update_p(p, r, beta, nc); });
    }
    // ||x - A z||: r = A z, summed and transposed like q.
    tm_.time("spmv", [&] {
      if (symmetric_)
        ops_.spmv_symmetric(*symmetric_, z, w);
      else if (blocked_)
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
    tm_.time("vector", [&] { s = ops_.dot2(v.x.data(), v.z.data(), static_cast<std::size_t>(g_.ncols())); });
    double buf[2] = {s.first, s.second};
    reduce_scalars(buf, 2);
    return {buf[0], buf[1]};
  }

  void normalize(Vectors& v, double s) const {
    tm_.time("vector", [&] { ops_.scale(v.x.data(), s, v.z.data(), static_cast<std::size_t>(g_.ncols())); });
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
        comm::exchange(comm_, w + s.send_start, s.send_len, out + s.recv_start, s.recv_len, s.partner, tag++, traffic_);
      });
      tm_.time("vector",
               [&] { ops_.add(w + g_.send_start, out + g_.send_start, static_cast<std::size_t>(s.recv_len)); });
    }
    if (!g_.steps.empty()) {
      tm_.time("comm", [&] {
        comm::exchange(comm_, w + g_.send_start, g_.send_len, out, g_.exch_recv_len, g_.exch_proc, kTransposeTag,
                       traffic_);
      });
    } else {
      tm_.time("vector", [&] { std::copy(w, w + g_.exch_recv_len, out); });
    }
  }

  MPI_Comm comm_;
  const CgGrid& g_;
  const kernels::CsrMatrix& a_;
  const kernels::BlockedCsr* blocked_;
  const kernels::SymmetricCsr* symmetric_;  // --matrix sym: multiply with the upper triangle
  const bool fused_;                        // the vector sweeps fused (needs the column-blocked matrix)
  const kernels::CgOps& ops_;
  common::PhaseTimers& tm_;
  comm::PeerTraffic& traffic_;
};

// The bytes of one rank's matrix as one SpMV streams it: values, column indices, row offsets
// (per column window for the blocked form), and the diagonal of the upper triangle.
double matrix_bytes(const kernels::CsrMatrix& a) {
  return static_cast<double>(a.nnz()) * (sizeof(double) + sizeof(std::int32_t)) +
         (a.nrows + 1.0) * sizeof(std::int64_t);
}
double matrix_bytes(const kernels::BlockedCsr& a) {
  return static_cast<double>(a.val.size()) * (sizeof(double) + sizeof(std::int32_t)) +
         static_cast<double>(a.rowptr.size()) * sizeof(std::int64_t);
}
double matrix_bytes(const kernels::SymmetricCsr& a) {
  return static_cast<double>(a.val.size()) * (sizeof(double) + sizeof(std::int32_t)) +
         (a.n + 1.0) * sizeof(std::int64_t) + a.n * 8.0;
}

// NAS's matrix is symmetric by construction, but its two halves are summed in different
// orders: mirrored entries may differ in the last bits, never by more than this.
constexpr double kMirrorTolerance = 1e-12;

// --matrix: csr (NAS's) or sym. The upper triangle's mirror terms land in rows all over the
// matrix, so it needs the whole matrix on one rank, and it has no column windows to tile.
bool symmetric_matrix(const CgOptions& o, const MpiWorld& w, const common::Variant& v) {
  if (o.matrix == "csr") return false;
  if (w.size > 1)
    throw std::invalid_argument(
        "--matrix sym multiplies with the whole matrix's upper triangle, so it needs one rank, not " +
        std::to_string(w.size) + ": use threads instead (a layout such as 1x1x2)");
  if (v.tile.kind != tiling::TilePolicy::Kind::off || v.fused)
    throw std::invalid_argument(
        "--matrix sym has no column windows to tile or fuse: use --mode flat or hybrid (no --tile, no --fuse on)");
  return true;
}

// The CG proxy's steps in the common lifecycle.
class CgProxy final : public common::NasProxy<CgOptions, CgClass> {
 public:
  CgProxy(const MpiWorld& w, const common::Variant& v, const CgOptions& o)
      : NasProxy(w, v, o, cg_class(o.cls)),
        grid_(make_grid(cls_.na, w.size, w.rank)),
        symmetric_matrix_(symmetric_matrix(o, w, v)) {}

  // The tile is a window of the source vector (and a chunk of every vector sweep).
  std::size_t tile_buffer_bytes() const override { return static_cast<std::size_t>(grid_.ncols()) * sizeof(double); }

  void set_up(const common::RunStart& /*start*/) override {
    a_ = std::make_unique<kernels::CsrMatrix>(make_matrix(cls_, grid_));
    if (symmetric_matrix_) {
      symmetric_ = std::make_unique<kernels::SymmetricCsr>(kernels::upper_triangle(*a_, kMirrorTolerance));
      std::vector<std::int32_t>().swap(a_->col);  // the triangle stands for the matrix from here on: free it
      std::vector<double>().swap(a_->val);
    }
    // Tiled: column windows of the tile. Fused without a tile: one window (the whole vector).
    if (tile_.tiled || v_.fused)
      blocked_ = std::make_unique<kernels::BlockedCsr>(kernels::block_columns(
          *a_, tile_.tiled ? static_cast<int>(std::max<std::size_t>(1, tile_.elements)) : std::max(1, grid_.ncols())));
    ops_ = kernels::make_cg_ops(v_.backend, v_.threads, tile_.tiled ? tile_.bytes : 0);
    vec_ = std::make_unique<Vectors>(static_cast<std::size_t>(std::max(grid_.nrows(), grid_.ncols())) + 1, v_.threads);
    solver_ = std::make_unique<Solver>(w_.comm, grid_, *a_, blocked_.get(), symmetric_.get(), v_.fused, *ops_, timers_,
                                       traffic_);
  }

  // One iteration touches every page and warms the code, then x starts over.
  void warm_up() override {
    solver_->conj_grad(*vec_);
    const auto nz = solver_->norms(*vec_);
    solver_->normalize(*vec_, 1.0 / std::sqrt(nz.second));
    std::fill(vec_->x.begin(), vec_->x.end(), 1.0);
  }

  std::vector<std::string> phases() const override { return {"spmv", "comm", "vector"}; }

  void iterate() override {
    iterations_ << "\n   iteration           ||r||                 zeta\n";
    for (int it = 1; it <= cls_.niter; ++it) {
      const double rnorm = solver_->conj_grad(*vec_);
      const auto nz = solver_->norms(*vec_);
      zeta_ = cls_.shift + 1.0 / nz.first;
      if (!o_.quiet && w_.rank == 0)
        iterations_ << "    " << std::setw(5) << it << "       " << common::fmt("%20.14e", rnorm)
                    << common::fmt("%20.13f", zeta_) << "\n";
      solver_->normalize(*vec_, 1.0 / std::sqrt(nz.second));
    }
  }

  // Every rank computed zeta from the same reduced sums; rank 0's is reported.
  bool verify() override {
    // The matrix's entries over all ranks, for the summary.
    const double local = static_cast<double>(nnz());
    MPI_Reduce(&local, &nnz_total_, 1, MPI_DOUBLE, MPI_SUM, 0, w_.comm);
    error_ = std::fabs(zeta_ - cls_.zeta) / cls_.zeta;
    return error_ <= kZetaTolerance;
  }

  // Per SpMV: 2 flops per entry of the matrix; the cores load the matrix, gather x per entry
  // and write y (the upper triangle also scatters into y per entry; column windows update y
  // once per window); the compulsory bytes are the matrix, x and y once; a worker reuses x
  // (its window when tiled). Each row is started once per SpMV, once per window when tiled (its
  // row visits). The vector sweeps of one outer iteration: 25 x (dot p.q,
  // z += alpha p and r -= alpha q, dot r.r, p = r + beta p) and the outer start, norm and scale,
  // over this rank's columns.
  common::Work work() const override {
    const double calls = cls_.niter * (kCgIterations + 1.0);
    const double nr = grid_.nrows(), nc = grid_.ncols(), entries = nnz();
    double matrix = 0, core = 0, reused = nc * 8.0, visits = nr;
    if (symmetric_) {
      matrix = matrix_bytes(*symmetric_);
      // Per row: x read and its pair (x beside the row's sum) written, the sum read back and y
      // written; per stored entry: x read from the pair and the mirror's sum read and written.
      core = matrix + static_cast<double>(symmetric_->val.size()) * 24.0 + nr * 40.0;
      reused = 2.0 * nc * 8.0;
    } else if (blocked_) {
      matrix = matrix_bytes(*blocked_);
      core = matrix + entries * 8.0 + blocked_->nblocks * nr * 16.0;
      reused = std::min(nc, static_cast<double>(blocked_->window)) * 8.0 + nr * 8.0;
      visits = blocked_->nblocks * nr;
    } else {
      matrix = matrix_bytes(*a_);
      core = matrix + entries * 8.0 + nr * 8.0;
    }
    const double vectors = (nr + nc) * 8.0;
    common::PhaseWork spmv{"spmv",
                           2.0 * entries * calls,
                           core * calls,
                           (matrix + vectors) * calls,
                           matrix + vectors,
                           reused,
                           "the matrix once per SpMV, x gathered per entry, y written; compulsory: matrix, x and y"};
    spmv.metric = "spmv_gbs";
    spmv.kind = "gather";
    spmv.row_visits = visits * calls;
    spmv.memory_metric = true;
    const double per_iteration = v_.fused ? 64.0 : 96.0 + (blocked_ ? 0.0 : 8.0);
    const double sweeps = cls_.niter * (kCgIterations * per_iteration + 80.0) * nc;
    const double flops = cls_.niter * (kCgIterations * 10.0 + 10.0) * nc;
    common::PhaseWork vector{"vector",
                             flops,
                             sweeps,
                             sweeps,
                             6.0 * nc * 8.0,
                             6.0 * nc * 8.0,
                             "dot products and updates of this rank's columns, every vector streamed per sweep"};
    return {spmv, vector};
  }

  common::Summary summarize(const common::Measured& m, bool quiet) const override {
    common::Summary s;
    s.title = "CG";
    const auto nnz = static_cast<long long>(nnz_total_);
    s.head = {{"Class", std::string(1, cls_.name)},
              {"Size", std::to_string(cls_.na)},
              {"Iterations", std::to_string(cls_.niter)},
              {"Nonzeros", std::to_string(nnz)}};
    s.setup_what = "matrix generation";
    s.grid = std::to_string(grid_.nprows) + " x " + std::to_string(grid_.npcols);
    const int windows = blocked_ ? blocked_->nblocks : 1;
    s.tile_detail = std::to_string(windows) + " column window(s)";
    s.operations = nas_operation_count(cls_);
    const double spmv = m.phase("spmv");
    s.metrics = {{"Phases (max)", "spmv " + common::fmt("%.4f", spmv) + " s, comm " +
                                      common::fmt("%.4f", m.phase("comm")) + " s, vector " +
                                      common::fmt("%.4f", m.phase("vector")) + " s"}};
    if (v_.fused && *ops_->fused_note()) s.notes.push_back(v_.backend + ": " + ops_->fused_note());
    if (!quiet) s.preamble = iterations_.str();
    s.checks = common::reference_checks({"Zeta", zeta_}, {"Reference zeta", cls_.zeta}, error_, kZetaTolerance);
    s.size = class_size({{"na", cls_.na},
                         {"nonzer", cls_.nonzer},
                         {"niter", cls_.niter},
                         {"shift", cls_.shift},
                         {"nnz", nnz},
                         {"grid", {{"nprows", grid_.nprows}, {"npcols", grid_.npcols}}}});
    s.time = {{"spmv", spmv}, {"comm", m.phase("comm")}, {"vector", m.phase("vector")}};
    s.verification = {{"zeta", zeta_},
                      {"zeta_reference", cls_.zeta},
                      {"error", error_},
                      {"tolerance", kZetaTolerance},
                      {"method", "NAS CG zeta after niter outer iterations, relative error"}};
    if (symmetric_)
      s.metrics.push_back({"Matrix", "upper triangle: " + std::to_string(symmetric_->val.size()) +
                                         " stored entries off the diagonal, each applied twice"});
    s.variant_json = {{"column_windows", windows}, {"matrix", o_.matrix}};
    return s;
  }

 private:
  // The entries of the whole matrix this rank's part stands for.
  double nnz() const {
    return static_cast<double>(symmetric_ ? symmetric_->represented_nnz()
                               : blocked_ ? blocked_->val.size()
                                          : a_->nnz());
  }

  CgGrid grid_;
  std::unique_ptr<kernels::CsrMatrix> a_;
  std::unique_ptr<kernels::BlockedCsr> blocked_;
  std::unique_ptr<kernels::SymmetricCsr> symmetric_;
  bool symmetric_matrix_ = false;
  std::unique_ptr<kernels::CgOps> ops_;
  std::unique_ptr<Vectors> vec_;
  std::unique_ptr<Solver> solver_;
  std::ostringstream iterations_;
  double zeta_ = 0.0, error_ = 0.0;
  double nnz_total_ = 0;
};

}  // namespace
}  // namespace pxq::cg

PXQ_PROXY_MAIN(pxq::cg::CgProxy, pxq::cg::CgOptions, "cg",
               "pxq cg: NAS CG (inverse power method with conjugate gradient solves)")
