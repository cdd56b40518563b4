// OpenMP executor for the FT kernels: the batches of a pass are shared statically among the
// threads, each with its own batch buffer; copies are shared by rows, evolve by planes.
#include "pxq/kernels/ft_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "ft_batch.hpp"
#include "pxq/kernels/executor.hpp"
#include "pxq/tiling/chunks.hpp"

namespace pxq::kernels {
namespace {

class OpenMpFtOps final : public detail::FtExecutor {
 public:
  using FtExecutor::FtExecutor;

  void run_batches(Complex* src, Complex* dst, const FftPass& pass, const detail::BatchGeometry& g) const override {
    if (work_.size() < g.doubles * static_cast<std::size_t>(threads_))
      work_.assign(g.doubles * static_cast<std::size_t>(threads_), 0.0);
    double* work = work_.data();
#pragma omp parallel num_threads(threads_)
    {
      double* buf = work + g.doubles * static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < g.count; ++t) detail::run_batch(src, dst, pass, g, t, buf);
    }
  }

  void copy(const Complex* src, Complex* dst, const BlockCopy& c) const override {
    const std::int64_t rows = static_cast<std::int64_t>(c.count[0]) * c.count[1] * c.count[2];
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t t = 0; t < rows; ++t) detail::copy_row(src, dst, c, t);
  }

  void evolve(Complex* u0, Complex* u1, int n1, int n2, int n3, const double* f1, const double* f2,
              const double* f3) const override {
    const std::int64_t rows = static_cast<std::int64_t>(n2) * n3;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) detail::evolve_row(u0, u1, n1, n2, f1, f2, f3, r);
  }

 private:
  mutable std::vector<double> work_;  // one batch buffer per thread, grown on demand
};

}  // namespace

PXQ_JOIN(FtFamily, "openmp", (construct<FtOps, OpenMpFtOps>));

}  // namespace pxq::kernels
