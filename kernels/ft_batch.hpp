// Internal: one batch of an FFT pass (gather with the optional evolve, transform, scatter),
// shared by the OpenMP and Kokkos executors so both compute exactly the same thing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pxq/kernels/ft_ops.hpp"

namespace pxq::kernels::detail {

// The batch of lines (o, x0 .. x0+nb-1); `buf` holds fft_batch_doubles(n, nb) doubles.
inline void transform_batch(Complex* src, Complex* dst, const FftPass& pass, int o, int x0, int nb, double* buf) {
  const int n = pass.plan->size();
  const std::size_t len = static_cast<std::size_t>(n) * static_cast<std::size_t>(nb);
  double* re = buf;
  double* im = buf + len;
  double* wre = buf + 2 * len;
  double* wim = buf + 3 * len;
  const LineMap& s = pass.src;
  double* sbase = reinterpret_cast<double*>(src + o * s.outer + static_cast<std::int64_t>(x0) * s.line);
  const EvolveFactors& ev = pass.evolve;

  // Gather: element i of line b goes to re/im[i*nb + b].
  if (ev.active()) {
    const double fo = ev.outer[o];
    for (int i = 0; i < n; ++i) {
      const double fi = fo * ev.elem[i];
      for (int b = 0; b < nb; ++b) {
        double* p = sbase + 2 * (s.elem[i] + b * s.line);
        const double f = fi * ev.line[x0 + b];
        p[0] *= f;
        p[1] *= f;
        re[i * nb + b] = p[0];
        im[i * nb + b] = p[1];
      }
    }
  } else if (s.line == 1) {
    for (int i = 0; i < n; ++i) {
      const double* p = sbase + 2 * s.elem[i];
      for (int b = 0; b < nb; ++b) {
        re[i * nb + b] = p[2 * b];
        im[i * nb + b] = p[2 * b + 1];
      }
    }
  } else {
    // A transposition: kTransposeLines lines at a time, so the batch is written in whole
    // cache lines while those lines are read as sequential streams.
    for (int b0 = 0; b0 < nb; b0 += kTransposeLines) {
      const int b1 = b0 + kTransposeLines < nb ? b0 + kTransposeLines : nb;
      for (int i = 0; i < n; ++i) {
        const double* p = sbase + 2 * s.elem[i];
        for (int b = b0; b < b1; ++b) {
          re[i * nb + b] = p[2 * b * s.line];
          im[i * nb + b] = p[2 * b * s.line + 1];
        }
      }
    }
  }

  const bool in_work = pass.plan->run(re, im, wre, wim, nb, pass.dir);
  const double* rr = in_work ? wre : re;
  const double* ri = in_work ? wim : im;

  const LineMap& d = pass.dst;
  double* dbase = reinterpret_cast<double*>(dst + o * d.outer + static_cast<std::int64_t>(x0) * d.line);
  if (d.line == 1) {
    for (int i = 0; i < n; ++i) {
      double* p = dbase + 2 * d.elem[i];
      for (int b = 0; b < nb; ++b) {
        p[2 * b] = rr[i * nb + b];
        p[2 * b + 1] = ri[i * nb + b];
      }
    }
  } else {
    for (int b0 = 0; b0 < nb; b0 += kTransposeLines) {
      const int b1 = b0 + kTransposeLines < nb ? b0 + kTransposeLines : nb;
      for (int i = 0; i < n; ++i) {
        double* p = dbase + 2 * d.elem[i];
        for (int b = b0; b < b1; ++b) {
          p[2 * b * d.line] = rr[i * nb + b];
          p[2 * b * d.line + 1] = ri[i * nb + b];
        }
      }
    }
  }
}

// Whether a pass gathers or scatters by transposition (lines whose elements are adjacent).
inline bool transposes(const FftPass& pass) { return pass.src.line != 1 || pass.dst.line != 1; }

// Batches of a pass with `lines` lines per batch: per outer index, ceil(line_count / lines).
inline std::int64_t batches_per_outer(const FftPass& pass, int lines) {
  return (pass.line_count + lines - 1) / lines;
}

}  // namespace pxq::kernels::detail
