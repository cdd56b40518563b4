// Reference CG kernels: one thread, plain loops in NAS's order of summation. Built without
// vectorisation, so the executors are checked against an independent path.
#include <memory>

#include "cg_body.hpp"
#include "pxq/kernels/cg_ops.hpp"

namespace pxq::kernels {
namespace {

class ReferenceCgOps final : public CgOps {
 public:
  void spmv(const CsrMatrix& a, const double* x, double* y) const override {
    for (int i = 0; i < a.nrows; ++i) {
      y[i] = cg_body::row_dot<false>(a.val.data(), a.col.data(), a.rowptr[i], a.rowptr[i + 1], x);
    }
  }
  // Row by row in y itself: the diagonal term last, as the executors add it after the sums.
  void spmv_symmetric(const SymmetricCsr& a, const double* x, double* y) const override {
    const auto n = static_cast<std::size_t>(a.n);
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
        const auto j = static_cast<std::size_t>(a.col[static_cast<std::size_t>(k)]);
        sum += a.val[static_cast<std::size_t>(k)] * x[j];
        y[j] += a.val[static_cast<std::size_t>(k)] * x[i];
      }
      y[i] += sum;
    }
    for (std::size_t i = 0; i < n; ++i) y[i] = a.diag[i] * x[i] + y[i];
  }
  double dot(const double* x, const double* y, std::size_t n) const override {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += cg_body::dot_term(x, y, i);
    return sum;
  }
  void update_zr(double* z, double* r, const double* p, const double* q, double alpha, std::size_t n) const override {
    for (std::size_t i = 0; i < n; ++i) cg_body::update_zr(z, r, p, q, alpha, i);
  }
  void update_p(double* p, const double* r, double beta, std::size_t n) const override {
    for (std::size_t i = 0; i < n; ++i) cg_body::update_p(p, r, beta, i);
  }
  std::pair<double, double> dot2(const double* x, const double* z, std::size_t n) const override {
    double xz = 0.0, zz = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      xz += cg_body::dot_term(x, z, i);
      zz += cg_body::dot_term(z, z, i);
    }
    return {xz, zz};
  }
  void scale(double* x, double s, const double* z, std::size_t n) const override {
    for (std::size_t i = 0; i < n; ++i) cg_body::scale(x, s, z, i);
  }
  double dist2(const double* x, const double* y, std::size_t n) const override {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += cg_body::dist2_term(x, y, i);
    return sum;
  }
  void add(double* w, const double* q, std::size_t n) const override {
    for (std::size_t i = 0; i < n; ++i) cg_body::add(w, q, i);
  }
  void start(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const override {
    for (std::size_t i = 0; i < n; ++i) cg_body::start(x, q, z, r, p, i);
  }
  double start_norm(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const override {
    start(x, q, z, r, p, n);
    return dot(r, r, n);
  }
  double update_zr_norm(double* z, double* r, const double* p, const double* q, double alpha,
                        std::size_t n) const override {
    update_zr(z, r, p, q, alpha, n);
    return dot(r, r, n);
  }
  void spmv_blocked(const BlockedCsr& a, const double* x, double* y) const override {
    for (int i = 0; i < a.nrows; ++i) y[i] = 0.0;
    for (int b = 0; b < a.nblocks; ++b) {
      const std::int64_t* rp = a.block_rowptr(b);
      for (int i = 0; i < a.nrows; ++i) {
        y[i] += cg_body::row_dot<false>(a.val.data(), a.col.data(), rp[i], rp[i + 1], x);
      }
    }
  }
  void update_p_spmv(const BlockedCsr& a, double* p, const double* r, double beta, double* y) const override {
    update_p(p, r, beta, static_cast<std::size_t>(a.ncols));
    spmv_blocked(a, p, y);
  }
};

}  // namespace

std::unique_ptr<CgOps> make_cg_ops_reference() { return std::make_unique<ReferenceCgOps>(); }

}  // namespace pxq::kernels
