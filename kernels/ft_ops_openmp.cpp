// OpenMP executor for the FT kernels: the batches of a pass are shared statically among the
// threads, each with its own batch buffer; copies are shared by rows, evolve by planes.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "ft_batch.hpp"
#include "ft_ops_backends.hpp"

namespace pxq::kernels {
namespace {

class OpenMpFtOps final : public FtOps {
 public:
  OpenMpFtOps(int threads, std::size_t tile_bytes) : threads_(std::max(1, threads)), tile_bytes_(tile_bytes) {}

  int batch_lines(int n, bool rows) const override { return ft_batch_lines(tile_bytes_, n, rows); }

  void fft(Complex* src, Complex* dst, const FftPass& pass) const override {
    if (pass.outer_count <= 0 || pass.line_count <= 0) return;
    const int n = pass.plan->size();
    const int lines = std::min(batch_lines(n, detail::transposes(pass)), pass.line_count);
    const std::int64_t per_outer = detail::batches_per_outer(pass, lines);
    const std::int64_t batches = per_outer * pass.outer_count;
    const std::size_t per_thread = fft_batch_doubles(n, lines);
    if (work_.size() < per_thread * static_cast<std::size_t>(threads_))
      work_.assign(per_thread * static_cast<std::size_t>(threads_), 0.0);
    double* work = work_.data();
#pragma omp parallel num_threads(threads_)
    {
      double* buf = work + per_thread * static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < batches; ++t) {
        const int o = static_cast<int>(t / per_outer);
        const int x0 = static_cast<int>(t % per_outer) * lines;
        detail::transform_batch(src, dst, pass, o, x0, std::min(lines, pass.line_count - x0), buf);
      }
    }
  }

  void copy(const Complex* src, Complex* dst, const BlockCopy& c) const override {
    const std::int64_t rows = static_cast<std::int64_t>(c.count[0]) * c.count[1] * c.count[2];
    const std::size_t bytes = static_cast<std::size_t>(c.row) * sizeof(Complex);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t t = 0; t < rows; ++t) {
      const std::int64_t b = t % c.count[2];
      const std::int64_t a = (t / c.count[2]) % c.count[1];
      const std::int64_t p = t / (static_cast<std::int64_t>(c.count[2]) * c.count[1]);
      std::memcpy(dst + p * c.dst_stride[0] + a * c.dst_stride[1] + b * c.dst_stride[2],
                  src + p * c.src_stride[0] + a * c.src_stride[1] + b * c.src_stride[2], bytes);
    }
  }

  void evolve(Complex* u0, Complex* u1, int n1, int n2, int n3, const double* f1, const double* f2,
              const double* f3) const override {
    const std::int64_t rows = static_cast<std::int64_t>(n2) * n3;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const double f = f3[r / n2] * f2[r % n2];
      double* a = reinterpret_cast<double*>(u0 + r * n1);
      double* b = reinterpret_cast<double*>(u1 + r * n1);
      for (int i = 0; i < n1; ++i) {
        const double g = f * f1[i];
        a[2 * i] *= g;
        a[2 * i + 1] *= g;
        b[2 * i] = a[2 * i];
        b[2 * i + 1] = a[2 * i + 1];
      }
    }
  }

 private:
  int threads_;
  std::size_t tile_bytes_;
  mutable std::vector<double> work_;  // one batch buffer per thread, grown on demand
};

}  // namespace

int ft_batch_lines(std::size_t tile_bytes, int n, bool rows) {
  if (tile_bytes == 0) return kNasFftBlock;
  int lines = 1;
  while (fft_batch_doubles(n, 2 * lines) * sizeof(double) <= tile_bytes) lines *= 2;
  return rows ? std::min(lines, kTransposeLines) : lines;
}

std::unique_ptr<FtOps> make_ft_ops_openmp(int threads, std::size_t tile_bytes) {
  return std::make_unique<OpenMpFtOps>(threads, tile_bytes);
}

}  // namespace pxq::kernels
