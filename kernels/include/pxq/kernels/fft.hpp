// Batched complex FFTs of power-of-two length, pxq's own: the Stockham autosort formulation
// in radix 4, with one radix-2 stage when log2 n is odd, applied to B lines at once.
//
// A batch is held split and interleaved by line: re[i*B + b] and im[i*B + b] are element i of
// line b. In a Stockham stage of sub-length L and stride s, butterfly p reads four runs of
// s*B contiguous doubles and writes four such runs, with the same three twiddle factors for
// the whole run; so every inner loop has unit stride and no shuffles, whatever B is, and the
// output comes out in natural order without a bit-reversal pass.
//
// Forward is X(k) = sum_j x(j) e^{-2 pi i jk/n}, inverse uses e^{+...}; neither scales.
#pragma once

#include <cstddef>
#include <vector>

namespace pxq::kernels {

enum class FftDirection { forward, inverse };

class FftPlan {
 public:
  // Throws std::invalid_argument unless n is a power of two (n >= 1).
  explicit FftPlan(int n);

  int size() const { return n_; }

  // Transforms the B lines held in (re, im), using (wre, wim) of the same size as work space.
  // Returns true when the result ended up in the work arrays, false when in (re, im).
  bool run(double* re, double* im, double* wre, double* wim, int lines, FftDirection dir) const;

 private:
  struct Stage {
    int radix;            // 4 or 2
    int butterflies;      // L / radix
    int stride;           // s: lines of length L interleaved so far, times the radix of earlier stages
    std::size_t twiddle;  // offset of this stage's factors in tw_
  };
  int n_;
  std::vector<Stage> stages_;
  std::vector<double> tw_;  // per radix-4 butterfly p: w^p, w^2p, w^3p as (re, im), w = e^{-2 pi i/L}
};

// The doubles a batch of `lines` lines of length n needs: data and work, real and imaginary.
inline std::size_t fft_batch_doubles(int n, int lines) {
  return 4 * static_cast<std::size_t>(n) * static_cast<std::size_t>(lines);
}

}  // namespace pxq::kernels
