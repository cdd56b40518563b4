// Internal: one batch of an FFT pass (gather with the optional evolve, transform, scatter),
// one row of a block copy and of evolve, shared by the OpenMP and Kokkos executors so both
// compute exactly the same thing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "pxq/kernels/executor.hpp"
#include "pxq/kernels/ft_ops.hpp"

namespace pxq::kernels::detail {

// Where element i of line b sits in a batch of nb lines of length n: line-major for FFTW's
// engine, interleaved by line for pxq's own (FftPlan::at, as a compile-time choice).
template <bool LineMajor>
inline std::size_t batch_at(int i, int b, int n, int nb) {
  return LineMajor ? static_cast<std::size_t>(b) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)
                   : static_cast<std::size_t>(i) * static_cast<std::size_t>(nb) + static_cast<std::size_t>(b);
}

// Gather line elements (i, b) from `base` (line b's element i at base + 2 (elem[i] + b line))
// into the batch. Lines adjacent (line == 1): elements outer, lines inner, so reads are
// sequential. Else pxq's layout transposes kTransposeLines lines at a time (the batch written
// in whole cache lines, those lines read as sequential streams); FFTW's copies line by line.
template <bool LineMajor>
inline void gather(const double* base, const std::int64_t* elem, std::int64_t line, int n, int nb, double* re,
                   double* im) {
  if (line == 1) {
    for (int i = 0; i < n; ++i) {
      const double* p = base + 2 * elem[i];
      for (int b = 0; b < nb; ++b) {
        re[batch_at<LineMajor>(i, b, n, nb)] = p[2 * std::ptrdiff_t{b}];
        im[batch_at<LineMajor>(i, b, n, nb)] = p[2 * std::ptrdiff_t{b} + 1];
      }
    }
    return;
  }
  const int step = LineMajor ? 1 : kTransposeLines;
  for (int b0 = 0; b0 < nb; b0 += step) {
    const int b1 = b0 + step < nb ? b0 + step : nb;
    for (int i = 0; i < n; ++i) {
      const double* p = base + 2 * elem[i];
      for (int b = b0; b < b1; ++b) {
        re[batch_at<LineMajor>(i, b, n, nb)] = p[2 * line * b];
        im[batch_at<LineMajor>(i, b, n, nb)] = p[2 * line * b + 1];
      }
    }
  }
}

// The reverse of gather.
template <bool LineMajor>
inline void scatter(const double* re, const double* im, double* base, const std::int64_t* elem, std::int64_t line,
                    int n, int nb) {
  if (line == 1) {
    for (int i = 0; i < n; ++i) {
      double* p = base + 2 * elem[i];
      for (int b = 0; b < nb; ++b) {
        p[2 * std::ptrdiff_t{b}] = re[batch_at<LineMajor>(i, b, n, nb)];
        p[2 * std::ptrdiff_t{b} + 1] = im[batch_at<LineMajor>(i, b, n, nb)];
      }
    }
    return;
  }
  const int step = LineMajor ? 1 : kTransposeLines;
  for (int b0 = 0; b0 < nb; b0 += step) {
    const int b1 = b0 + step < nb ? b0 + step : nb;
    for (int i = 0; i < n; ++i) {
      double* p = base + 2 * elem[i];
      for (int b = b0; b < b1; ++b) {
        p[2 * line * b] = re[batch_at<LineMajor>(i, b, n, nb)];
        p[2 * line * b + 1] = im[batch_at<LineMajor>(i, b, n, nb)];
      }
    }
  }
}

// The batch of lines (o, x0 .. x0+nb-1); `buf` holds fft_batch_buffer_doubles(n, nb) doubles.
template <bool LineMajor>
inline void transform_batch_as(Complex* src, Complex* dst, const FftPass& pass, int o, int x0, int nb, double* buf) {
  const int n = pass.plan->size();
  const std::size_t part = fft_batch_part(n, nb);
  double* re = buf;
  double* im = buf + part;
  double* wre = buf + 2 * part;
  double* wim = buf + 3 * part;
  const LineMap& s = pass.src;
  double* sbase = reinterpret_cast<double*>(src + o * s.outer + static_cast<std::int64_t>(x0) * s.line);
  const EvolveFactors& ev = pass.evolve;

  if (ev.active()) {  // NAS's evolve, in place in the source, on the way in
    const double fo = ev.outer[o];
    for (int i = 0; i < n; ++i) {
      const double fi = fo * ev.elem[i];
      for (int b = 0; b < nb; ++b) {
        double* p = sbase + 2 * (s.elem[i] + b * s.line);
        const double f = fi * ev.line[x0 + b];
        p[0] *= f;
        p[1] *= f;
        re[batch_at<LineMajor>(i, b, n, nb)] = p[0];
        im[batch_at<LineMajor>(i, b, n, nb)] = p[1];
      }
    }
  } else {
    gather<LineMajor>(sbase, s.elem, s.line, n, nb, re, im);
  }

  const bool in_work = pass.plan->run(re, im, wre, wim, nb, pass.dir);
  const LineMap& d = pass.dst;
  double* dbase = reinterpret_cast<double*>(dst + o * d.outer + static_cast<std::int64_t>(x0) * d.line);
  scatter<LineMajor>(in_work ? wre : re, in_work ? wim : im, dbase, d.elem, d.line, n, nb);
}

inline void transform_batch(Complex* src, Complex* dst, const FftPass& pass, int o, int x0, int nb, double* buf) {
  if (pass.plan->line_major())
    transform_batch_as<true>(src, dst, pass, o, x0, nb, buf);
  else
    transform_batch_as<false>(src, dst, pass, o, x0, nb, buf);
}

// Row t of a block copy (t < count[0] * count[1] * count[2]).
inline void copy_row(const Complex* src, Complex* dst, const BlockCopy& c, std::int64_t t) {
  const std::int64_t b = t % c.count[2];
  const std::int64_t a = (t / c.count[2]) % c.count[1];
  const std::int64_t p = t / (static_cast<std::int64_t>(c.count[2]) * c.count[1]);
  const Complex* from = src + p * c.src_stride[0] + a * c.src_stride[1] + b * c.src_stride[2];
  Complex* to = dst + p * c.dst_stride[0] + a * c.dst_stride[1] + b * c.dst_stride[2];
  for (std::int64_t i = 0; i < c.row; ++i) to[i] = from[i];
}

// Row r (= i3 * n2 + i2) of NAS's evolve on a block [n3][n2][n1].
inline void evolve_row(Complex* u0, Complex* u1, int n1, int n2, const double* f1, const double* f2, const double* f3,
                       std::int64_t r) {
  const double f = f3[r / n2] * f2[r % n2];
  double* a = reinterpret_cast<double*>(u0 + r * n1);
  double* b = reinterpret_cast<double*>(u1 + r * n1);
  for (std::ptrdiff_t i = 0; i < n1; ++i) {
    const double g = f * f1[i];
    a[2 * i] *= g;
    a[2 * i + 1] *= g;
    b[2 * i] = a[2 * i];
    b[2 * i + 1] = a[2 * i + 1];
  }
}

// Whether a pass gathers or scatters by transposition (lines whose elements are adjacent).
inline bool transposes(const FftPass& pass) { return pass.src.line != 1 || pass.dst.line != 1; }

// How a pass is cut into batches: `lines` lines each, `per_outer` batches per outer index,
// `count` in all; batch t covers lines (o, x0 .. x0 + width - 1).
struct BatchGeometry {
  int lines = 0;
  std::int64_t per_outer = 0, count = 0;
  std::size_t doubles = 0;  // one batch's buffer
  int outer(std::int64_t t) const { return static_cast<int>(t / per_outer); }
  int first(std::int64_t t) const { return static_cast<int>(t % per_outer) * lines; }
};

inline BatchGeometry batch_geometry(const FtOps& ops, const FftPass& pass) {
  BatchGeometry g;
  const int n = pass.plan->size();
  g.lines = std::min(ops.batch_lines(n, transposes(pass)), pass.line_count);
  g.per_outer = (pass.line_count + g.lines - 1) / g.lines;
  g.count = g.per_outer * pass.outer_count;
  g.doubles = fft_batch_buffer_doubles(n, g.lines);
  return g;
}

// Batch t of a pass cut by `g`, with `buf` holding g.doubles doubles.
inline void run_batch(Complex* src, Complex* dst, const FftPass& pass, const BatchGeometry& g, std::int64_t t,
                      double* buf) {
  const int x0 = g.first(t);
  transform_batch(src, dst, pass, g.outer(t), x0, std::min(g.lines, pass.line_count - x0), buf);
}

// What every FT executor shares: the lines per batch from the tile, and the cut of a pass
// into batches; an executor only runs the batches (run_batches) in its own parallel way.
class FtExecutor : public FtOps, protected ExecutorShape {
 public:
  using ExecutorShape::ExecutorShape;

  int batch_lines(int n, bool rows) const override { return ft_batch_lines(tile_bytes_, n, rows); }

  void fft(Complex* src, Complex* dst, const FftPass& pass) const override {
    if (pass.outer_count <= 0 || pass.line_count <= 0) return;
    run_batches(src, dst, pass, batch_geometry(*this, pass));
  }

 protected:
  // Every batch of `pass` cut by `g` (run_batch for t in 0 .. g.count-1).
  virtual void run_batches(Complex* src, Complex* dst, const FftPass& pass, const BatchGeometry& g) const = 0;
};

}  // namespace pxq::kernels::detail
