// Kokkos executor for the CG kernels on the OpenMP execution space. Vectors are wrapped as
// raw pointers (unmanaged), rows and elements are the parallel index. The fused sweeps fuse
// at element granularity (one pass doing all the operations), and the column-blocked SpMV
// runs one parallel loop over the rows per block.
#include <Kokkos_Core.hpp>
// The bodies' functions are called inside Kokkos kernels (portable.hpp).
#define PXQ_INLINE KOKKOS_INLINE_FUNCTION
#include <algorithm>
#include <memory>
#include <vector>

#include "cg_body.hpp"
#include "pxq/kernels/cg_ops.hpp"

namespace pxq::kernels {
namespace {

using Space = Kokkos::OpenMP;
using Policy = Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Static>, Kokkos::IndexType<std::int64_t>>;

KOKKOS_INLINE_FUNCTION double row_dot(const double* val, const std::int32_t* col, std::int64_t b, std::int64_t e,
                                      const double* x) {
  return cg_body::row_dot<true>(val, col, b, e, x);
}

Policy range(std::size_t n) { return Policy(0, static_cast<std::int64_t>(n)); }

class KokkosCgOps final : public CgOps {
 public:
  const char* fused_note() const override {
    return "vector sweeps are fused per element; the tile sets the SpMV column window";
  }
  void spmv(const CsrMatrix& a, const double* x, double* y) const override {
    const std::int64_t* rp = a.rowptr.data();
    const std::int32_t* col = a.col.data();
    const double* val = a.val.data();
    Kokkos::parallel_for(
        "pxq::cg::spmv", range(static_cast<std::size_t>(a.nrows)),
        KOKKOS_LAMBDA(const std::int64_t i) { y[i] = row_dot(val, col, rp[i], rp[i + 1], x); });
    Kokkos::fence();
  }
  // As the OpenMP executor: one part per thread of contiguous rows with about equal stored
  // entries, each summed into the part's own scratch pairs; then each part adds up its rows
  // of y from the scratch pairs of the parts at or before it.
  void spmv_symmetric(const SymmetricCsr& a, const double* x, double* y) const override {
    const int parts = std::max(1, Space().concurrency());
    const auto n = static_cast<std::size_t>(a.n);
    if (scratch_.size() < static_cast<std::size_t>(parts) * 2 * n)
      scratch_.resize(static_cast<std::size_t>(parts) * 2 * n);
    double* scratch = scratch_.data();
    const SymmetricCsr* m = &a;
    Kokkos::parallel_for(
        "pxq::cg::spmv_symmetric", Policy(0, parts), KOKKOS_LAMBDA(const std::int64_t p) {
          const int part = static_cast<int>(p);
          cg_body::symmetric_part(*m, x, scratch + static_cast<std::size_t>(p) * 2 * n,
                                  symmetric_part_begin(*m, part, parts), symmetric_part_begin(*m, part + 1, parts));
        });
    Kokkos::fence();
    Kokkos::parallel_for(
        "pxq::cg::spmv_symmetric_sum", Policy(0, parts), KOKKOS_LAMBDA(const std::int64_t p) {
          const int part = static_cast<int>(p);
          const auto lo = static_cast<std::size_t>(symmetric_part_begin(*m, part, parts));
          const auto hi = static_cast<std::size_t>(symmetric_part_begin(*m, part + 1, parts));
          for (std::size_t i = lo; i < hi; ++i) y[i] = cg_body::symmetric_sum(*m, x, scratch, n, part, i);
        });
    Kokkos::fence();
  }
  double dot(const double* x, const double* y, std::size_t n) const override {
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "pxq::cg::dot", range(n), KOKKOS_LAMBDA(const std::int64_t i, double& s) { s += cg_body::dot_term(x, y, i); },
        sum);
    return sum;
  }
  void update_zr(double* z, double* r, const double* p, const double* q, double alpha, std::size_t n) const override {
    Kokkos::parallel_for(
        "pxq::cg::update_zr", range(n),
        KOKKOS_LAMBDA(const std::int64_t i) { cg_body::update_zr(z, r, p, q, alpha, i); });
    Kokkos::fence();
  }
  void update_p(double* p, const double* r, double beta, std::size_t n) const override {
    Kokkos::parallel_for(
        "pxq::cg::update_p", range(n), KOKKOS_LAMBDA(const std::int64_t i) { cg_body::update_p(p, r, beta, i); });
    Kokkos::fence();
  }
  std::pair<double, double> dot2(const double* x, const double* z, std::size_t n) const override {
    // Once per outer iteration: two reductions keep the code portable across Kokkos versions.
    return {dot(x, z, n), dot(z, z, n)};
  }
  void scale(double* x, double s, const double* z, std::size_t n) const override {
    Kokkos::parallel_for(
        "pxq::cg::scale", range(n), KOKKOS_LAMBDA(const std::int64_t i) { cg_body::scale(x, s, z, i); });
    Kokkos::fence();
  }
  double dist2(const double* x, const double* y, std::size_t n) const override {
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "pxq::cg::dist2", range(n),
        KOKKOS_LAMBDA(const std::int64_t i, double& s) { s += cg_body::dist2_term(x, y, i); }, sum);
    return sum;
  }
  void add(double* w, const double* q, std::size_t n) const override {
    Kokkos::parallel_for("pxq::cg::add", range(n), KOKKOS_LAMBDA(const std::int64_t i) { cg_body::add(w, q, i); });
    Kokkos::fence();
  }
  void start(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const override {
    Kokkos::parallel_for(
        "pxq::cg::start", range(n), KOKKOS_LAMBDA(const std::int64_t i) { cg_body::start(x, q, z, r, p, i); });
    Kokkos::fence();
  }
  double start_norm(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const override {
    return sweep_norm("pxq::cg::start_norm", n, r, [=](std::int64_t i) { cg_body::start(x, q, z, r, p, i); });
  }
  double update_zr_norm(double* z, double* r, const double* p, const double* q, double alpha,
                        std::size_t n) const override {
    return sweep_norm("pxq::cg::update_zr_norm", n, r,
                      [=](std::int64_t i) { cg_body::update_zr(z, r, p, q, alpha, i); });
  }
  void spmv_blocked(const BlockedCsr& a, const double* x, double* y) const override {
    for (int blk = 0; blk < a.nblocks; ++blk) multiply_block(a, blk, x, y);
  }
  void update_p_spmv(const BlockedCsr& a, double* p, const double* r, double beta, double* y) const override {
    for (int blk = 0; blk < a.nblocks; ++blk) {
      Kokkos::parallel_for(
          "pxq::cg::update_p_window", Policy(a.block_begin(blk), a.block_end(blk)),
          KOKKOS_LAMBDA(const std::int64_t j) { cg_body::update_p(p, r, beta, j); });
      Kokkos::fence();
      multiply_block(a, blk, p, y);
    }
  }

 private:
  // One fused pass: update(i) on every element, and the sum of r[i]^2 after it.
  template <class Update>
  static double sweep_norm(const char* name, std::size_t n, const double* r, Update update) {
    double sum = 0.0;
    Kokkos::parallel_reduce(
        name, range(n),
        KOKKOS_LAMBDA(const std::int64_t i, double& s) {
          update(i);
          s += cg_body::dot_term(r, r, i);
        },
        sum);
    return sum;
  }

  static void multiply_block(const BlockedCsr& a, int blk, const double* x, double* y) {
    const std::int64_t* rp = a.block_rowptr(blk);
    const std::int32_t* col = a.col.data();
    const double* val = a.val.data();
    const bool first = blk == 0;
    Kokkos::parallel_for(
        "pxq::cg::spmv_block", range(static_cast<std::size_t>(a.nrows)), KOKKOS_LAMBDA(const std::int64_t i) {
          const double s = row_dot(val, col, rp[i], rp[i + 1], x);
          y[i] = first ? s : y[i] + s;
        });
    Kokkos::fence();
  }

  mutable std::vector<double> scratch_;  // spmv_symmetric: 2n pairs per part, kept between calls
};

}  // namespace

// Kokkos fuses CG's sweeps per element; the tile only sets the SpMV column window (cg.cpp).
std::unique_ptr<CgOps> make_cg_ops_kokkos(int, std::size_t) { return std::make_unique<KokkosCgOps>(); }

PXQ_JOIN(CgFamily, "kokkos", make_cg_ops_kokkos);

}  // namespace pxq::kernels
