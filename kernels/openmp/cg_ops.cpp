// OpenMP executor for the CG kernels. Each thread owns one contiguous range of every
// vector (the same range in every operation, so a thread keeps re-using what it touched),
// and the rows of the matrix split the same way. Flat runs are this code with one thread.
// The fused sweeps walk each thread's range tile by tile: all of a tile's operations are
// done before the next tile is touched.
#include "pxq/kernels/cg_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "cg_body.hpp"
#include "pxq/tiling/chunks.hpp"

namespace pxq::kernels {
namespace {

struct Range {
  std::size_t begin, end;
};

// Thread t's share of [0, n): contiguous, sizes differing by at most one.
inline Range thread_range(std::size_t n, int t, int nthreads) {
  const std::size_t base = n / static_cast<std::size_t>(nthreads);
  const std::size_t extra = n % static_cast<std::size_t>(nthreads);
  const std::size_t tt = static_cast<std::size_t>(t);
  const std::size_t begin = tt * base + std::min(tt, extra);
  return {begin, begin + base + (tt < extra ? 1 : 0)};
}

// One row of y = A x, with several partial sums (cg_body.hpp).
inline double row_dot(const double* val, const std::int32_t* col, std::int64_t b, std::int64_t e, const double* x) {
  return cg_body::row_dot<true>(val, col, b, e, x);
}

class OpenMpCgOps final : public CgOps {
 public:
  // The tile in bytes, as every family takes it; the sweeps count it in doubles (at least one).
  OpenMpCgOps(int threads, std::size_t tile_bytes)
      : threads_(std::max(1, threads)),
        tile_(tile_bytes == 0 ? 0 : std::max<std::size_t>(1, tile_bytes / sizeof(double))) {}

  void spmv(const CsrMatrix& a, const double* x, double* y) const override {
    for_ranges(static_cast<std::size_t>(a.nrows), [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) y[i] = row_dot(a.val.data(), a.col.data(), a.rowptr[i], a.rowptr[i + 1], x);
    });
  }

  // Each thread takes contiguous rows holding about equal numbers of stored entries and sums
  // their products and mirror terms into its own scratch pairs (x beside each row's sum: a
  // mirror term lands in a later row, often another thread's); then each thread adds up its
  // rows of y from the scratch pairs of the threads at or before it.
  void spmv_symmetric(const SymmetricCsr& a, const double* x, double* y) const override {
    const auto n = static_cast<std::size_t>(a.n);
    if (scratch_.size() < static_cast<std::size_t>(threads_) * 2 * n)
      scratch_.resize(static_cast<std::size_t>(threads_) * 2 * n);
    double* scratch = scratch_.data();
    if (threads_ == 1) {  // one part, no fork
      cg_body::symmetric_part(a, x, scratch, 0, a.n);
      for (std::size_t i = 0; i < n; ++i) y[i] = cg_body::symmetric_sum(a, x, scratch, n, 0, i);
      return;
    }
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int lo = symmetric_part_begin(a, t, nt), hi = symmetric_part_begin(a, t + 1, nt);
      cg_body::symmetric_part(a, x, scratch + static_cast<std::size_t>(t) * 2 * n, lo, hi);
#pragma omp barrier
      for (auto i = static_cast<std::size_t>(lo); i < static_cast<std::size_t>(hi); ++i)
        y[i] = cg_body::symmetric_sum(a, x, scratch, n, t, i);
    }
  }

  double dot(const double* x, const double* y, std::size_t n) const override {
    return sum_ranges(n, [&](std::size_t b, std::size_t e) { return dot_range(x, y, b, e); });
  }

  void update_zr(double* z, double* r, const double* p, const double* q, double alpha, std::size_t n) const override {
    for_ranges(n, [&](std::size_t b, std::size_t e) { zr_range(z, r, p, q, alpha, b, e); });
  }

  void update_p(double* p, const double* r, double beta, std::size_t n) const override {
    for_ranges(n, [&](std::size_t b, std::size_t e) {
#pragma omp simd
      for (std::size_t i = b; i < e; ++i) cg_body::update_p(p, r, beta, i);
    });
  }

  std::pair<double, double> dot2(const double* x, const double* z, std::size_t n) const override {
    double xz = 0.0, zz = 0.0;
    auto body = [&](std::size_t b, std::size_t e, double& sxz, double& szz) {
#pragma omp simd reduction(+ : sxz, szz)
      for (std::size_t i = b; i < e; ++i) {
        sxz += cg_body::dot_term(x, z, i);
        szz += cg_body::dot_term(z, z, i);
      }
    };
    if (threads_ == 1) {
      body(0, n, xz, zz);
    } else {
#pragma omp parallel num_threads(threads_) reduction(+ : xz, zz)
      {
        const Range rg = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
        body(rg.begin, rg.end, xz, zz);
      }
    }
    return {xz, zz};
  }

  void scale(double* x, double s, const double* z, std::size_t n) const override {
    for_ranges(n, [&](std::size_t b, std::size_t e) {
#pragma omp simd
      for (std::size_t i = b; i < e; ++i) cg_body::scale(x, s, z, i);
    });
  }

  double dist2(const double* x, const double* y, std::size_t n) const override {
    return sum_ranges(n, [&](std::size_t b, std::size_t e) {
      double sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (std::size_t i = b; i < e; ++i) sum += cg_body::dist2_term(x, y, i);
      return sum;
    });
  }

  void add(double* w, const double* q, std::size_t n) const override {
    for_ranges(n, [&](std::size_t b, std::size_t e) {
#pragma omp simd
      for (std::size_t i = b; i < e; ++i) cg_body::add(w, q, i);
    });
  }

  void start(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const override {
    for_ranges(n, [&](std::size_t b, std::size_t e) { start_range(x, q, z, r, p, b, e); });
  }

  double start_norm(const double* x, double* q, double* z, double* r, double* p, std::size_t n) const override {
    return sum_tiles(n, [&](std::size_t b, std::size_t e) {
      start_range(x, q, z, r, p, b, e);
      return dot_range(r, r, b, e);
    });
  }

  double update_zr_norm(double* z, double* r, const double* p, const double* q, double alpha,
                        std::size_t n) const override {
    return sum_tiles(n, [&](std::size_t b, std::size_t e) {
      zr_range(z, r, p, q, alpha, b, e);
      return dot_range(r, r, b, e);  // the tile of r is still in L1/L2
    });
  }

  void spmv_blocked(const BlockedCsr& a, const double* x, double* y) const override {
    blocked(a, y, [](int, int) {}, x);
  }

  void update_p_spmv(const BlockedCsr& a, double* p, const double* r, double beta, double* y) const override {
    // The window update is split over the threads; the barrier at the end of the
    // worksharing loop makes the whole window ready before any thread multiplies with it.
    blocked(
        a, y,
        [&](int c0, int c1) {
#pragma omp for schedule(static)
          for (int j = c0; j < c1; ++j) cg_body::update_p(p, r, beta, static_cast<std::size_t>(j));
        },
        p);
  }

 private:
  static double dot_range(const double* x, const double* y, std::size_t b, std::size_t e) {
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (std::size_t i = b; i < e; ++i) sum += cg_body::dot_term(x, y, i);
    return sum;
  }
  static void zr_range(double* z, double* r, const double* p, const double* q, double alpha, std::size_t b,
                       std::size_t e) {
#pragma omp simd
    for (std::size_t i = b; i < e; ++i) cg_body::update_zr(z, r, p, q, alpha, i);
  }
  static void start_range(const double* x, double* q, double* z, double* r, double* p, std::size_t b, std::size_t e) {
#pragma omp simd
    for (std::size_t i = b; i < e; ++i) cg_body::start(x, q, z, r, p, i);
  }

  // fn(begin, end) on each thread's range.
  template <class Fn>
  void for_ranges(std::size_t n, Fn&& fn) const {
    if (threads_ == 1) return fn(std::size_t{0}, n);
#pragma omp parallel num_threads(threads_)
    {
      const Range rg = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
      fn(rg.begin, rg.end);
    }
  }

  // Sum of fn(begin, end) over the thread ranges.
  template <class Fn>
  double sum_ranges(std::size_t n, Fn&& fn) const {
    if (threads_ == 1) return fn(std::size_t{0}, n);
    double total = 0.0;
#pragma omp parallel num_threads(threads_) reduction(+ : total)
    {
      const Range rg = thread_range(n, omp_get_thread_num(), omp_get_num_threads());
      total += fn(rg.begin, rg.end);
    }
    return total;
  }

  // Sum of fn(begin, end) over the tiles of each thread's range.
  template <class Fn>
  double sum_tiles(std::size_t n, Fn&& fn) const {
    return sum_ranges(n, [&](std::size_t b, std::size_t e) {
      if (tile_ == 0) return fn(b, e);
      double s = 0.0;
      tiling::for_each_tile(e - b, tile_, [&](std::size_t t0, std::size_t t1) { s += fn(b + t0, b + t1); });
      return s;
    });
  }

  // y = A x block by block; prepare(c0, c1) runs (as a worksharing construct) before
  // block [c0, c1) is multiplied. A thread always gets the same rows, so y needs no
  // barrier between blocks.
  template <class Prepare>
  void blocked(const BlockedCsr& a, double* y, Prepare&& prepare, const double* x) const {
#pragma omp parallel num_threads(threads_)
    {
      const Range rows = thread_range(static_cast<std::size_t>(a.nrows), omp_get_thread_num(), omp_get_num_threads());
      for (int blk = 0; blk < a.nblocks; ++blk) {
        prepare(a.block_begin(blk), a.block_end(blk));
        const std::int64_t* rp = a.block_rowptr(blk);
        if (blk == 0) {
          for (std::size_t i = rows.begin; i < rows.end; ++i)
            y[i] = row_dot(a.val.data(), a.col.data(), rp[i], rp[i + 1], x);
        } else {
          for (std::size_t i = rows.begin; i < rows.end; ++i)
            y[i] += row_dot(a.val.data(), a.col.data(), rp[i], rp[i + 1], x);
        }
      }
    }
  }

  int threads_;
  std::size_t tile_;
  mutable std::vector<double> scratch_;  // spmv_symmetric: 2n pairs per thread, kept between calls
};

}  // namespace

PXQ_JOIN(CgFamily, "openmp", (construct<CgOps, OpenMpCgOps>));

}  // namespace pxq::kernels
