// The ring proxy's compute pass: one idea (an affine update of every element, K passes),
// one loop body, several executors. No MPI, no tiling decisions here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/family.hpp"

namespace pxq::kernels {

// x <- a*x + b, applied `flops` times per element per pass, `passes` passes per call.
// a = 1 - 2^-20 keeps values near their start for millions of updates, so the block's
// origin stays recognisable in the closed-form check.
struct RingParams {
  int passes = 8;
  int flops = 1;
  double a = 1.0 - 0x1p-20;
  double b = 0.5 * 0x1p-20;  // fixed point b / (1 - a) = 0.5
  // Elements per tile: each tile of a call's range gets all its passes before the next
  // tile starts (0: the whole range at once). A worker that walks its own tiles inside one
  // call needs no fork, join or barrier between tiles.
  std::size_t tile = 0;
};

// The loop body, written once: every executor calls this on its range. Elements are
// updated in strips of kStrip held in registers, so the compiler vectorises across the strip
// and the F dependent updates of one element overlap with those of its neighbours.
inline constexpr std::size_t kStrip = 64;

// The end of a pass: the compiler may not move loads or stores of x across it. Without it, gcc
// -O3 applies unroll-and-jam to the pass loop (-fopt-info: "applying unroll and jam with factor
// 2"), fusing two passes into one sweep, so an untiled block would stream K/2 times rather than
// the K times the proxy declares, and its tiles would be measured against a baseline the
// compiler had half-tiled already.
inline void end_of_pass(double* x) {
#if defined(__GNUC__) || defined(__clang__)
  asm volatile("" : : "r"(x) : "memory");
#else
  (void)x;
#endif
}

inline void ring_passes_tile(double* x, std::size_t n, const RingParams& p) {
  const double a = p.a, b = p.b;
  const int flops = p.flops;
  if (flops == 1) {  // the default: one streaming update, vectorised directly
    for (int pass = 0; pass < p.passes; ++pass) {
#pragma omp simd
      for (std::size_t i = 0; i < n; ++i) x[i] = a * x[i] + b;
      end_of_pass(x);
    }
    return;
  }
  const std::size_t full = n - n % kStrip;
  for (int pass = 0; pass < p.passes; ++pass) {
    for (std::size_t i = 0; i < full; i += kStrip) {
      double v[kStrip];
      for (std::size_t j = 0; j < kStrip; ++j) v[j] = x[i + j];
      for (int f = 0; f < flops; ++f)
        for (std::size_t j = 0; j < kStrip; ++j) v[j] = a * v[j] + b;
      for (std::size_t j = 0; j < kStrip; ++j) x[i + j] = v[j];
    }
    for (std::size_t i = full; i < n; ++i) {
      double v = x[i];
      for (int f = 0; f < flops; ++f) v = a * v + b;
      x[i] = v;
    }
    end_of_pass(x);
  }
}

// Every element gets the same updates whatever the tiling, so the tiles only reorder work.
inline void ring_passes(double* x, std::size_t n, const RingParams& p) {
  const std::size_t tile = p.tile == 0 ? n : p.tile;
  for (std::size_t b = 0; b < n; b += tile) ring_passes_tile(x + b, std::min(tile, n - b), p);
}

// Frozen reference path: the simplest correct form (element by element, one update at a
// time), never optimised; every variant is tested against it.
void ring_passes_reference(double* x, std::size_t n, const RingParams& p);

// Runs ring_passes on [begin, end) of each of `workers` blocks, one worker per thread of
// the chosen backend. blocks[w] is worker w's block.
inline constexpr char kRingFamily[] = "ring";
using RingFamily = Family<kRingFamily, void (*)(double* const* blocks, int workers, std::size_t begin, std::size_t end,
                                                const RingParams&)>;
inline void ring_passes_workers(const Backend& backend, double* const* blocks, int workers, std::size_t begin,
                                std::size_t end, const RingParams& p) {
  RingFamily::of(backend)(blocks, workers, begin, end, p);
}

// Closed form of m updates: x_m = scale * x_0 + shift.
struct AffinePower {
  double scale;
  double shift;
};
inline AffinePower affine_power(const RingParams& p, double m) {
  // a^m - 1 computed as expm1(m*log1p(a-1)) to avoid cancellation when a is close to 1.
  const double am1 = std::expm1(m * std::log1p(p.a - 1.0));
  return {am1 + 1.0, p.b * am1 / (p.a - 1.0)};
}

// Initial value of element i of the block that starts at ring position `origin`:
// distinct per origin, so a block that went to the wrong place is caught.
inline double ring_initial_value(long origin, std::size_t i) {
  return 1.0 + static_cast<double>(origin) + static_cast<double>(i % 1024) * 0x1p-10;
}

}  // namespace pxq::kernels
