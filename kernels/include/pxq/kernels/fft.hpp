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
//
// A plan can instead hand its batches to FFTW (FftEngine::fftw, in builds that found FFTW),
// through FFTW's split-array guru interface, one FFTW plan per batch width, made on first use
// (the proxies' untimed warm-up round makes them). FFTW wants each line contiguous, so its
// batches are line-major: element i of line b at re[b*n + i] and im[b*n + i] (line_major()).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace pxq::kernels {

enum class FftDirection { forward, inverse };

// Who computes the 1-D transforms: pxq's own Stockham code, or FFTW.
enum class FftEngine { pxq, fftw };

// "pxq" or "fftw".
const char* fft_engine_name(FftEngine e);
// Parses "pxq" or "fftw"; throws std::invalid_argument naming the choices otherwise, and for
// "fftw" in a build without FFTW (saying how to get it).
FftEngine parse_fft_engine(const std::string& name);
// Whether this build carries FFTW, and its version ("" without it).
bool fftw_available();
std::string fftw_version();

class FftwBatches;  // FFTW's plans for one length (fft_fftw.cpp)
struct FftwBatchesDeleter {
  void operator()(FftwBatches* p) const;
};
using FftwBatchesPtr = std::unique_ptr<FftwBatches, FftwBatchesDeleter>;

class FftPlan {
 public:
  // Throws std::invalid_argument unless n is a power of two (n >= 1), or for FFTW in a build
  // without it.
  explicit FftPlan(int n, FftEngine engine = FftEngine::pxq);

  int size() const { return n_; }
  FftEngine engine() const { return engine_; }
  // A batch's layout: element i of line b at [b*n + i] (true: FFTW) or [i*B + b] (pxq's own).
  bool line_major() const { return engine_ == FftEngine::fftw; }
  // Where element i of line b of a batch of `lines` lines sits in (re, im).
  std::size_t at(int i, int b, int lines) const {
    return line_major() ? static_cast<std::size_t>(b) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(i)
                        : static_cast<std::size_t>(i) * static_cast<std::size_t>(lines) + static_cast<std::size_t>(b);
  }

  // Transforms the B lines held in (re, im) (laid out as at() says), using (wre, wim) of the
  // same size as work space.
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
  FftEngine engine_;
  FftwBatchesPtr fftw_;  // FftEngine::fftw only
  std::vector<Stage> stages_;
  std::vector<double> tw_;  // per radix-4 butterfly p: w^p, w^2p, w^3p as (re, im), w = e^{-2 pi i/L}
};

// The doubles a batch of `lines` lines of length n needs: data and work, real and imaginary.
inline std::size_t fft_batch_doubles(int n, int lines) {
  return 4 * static_cast<std::size_t>(n) * static_cast<std::size_t>(lines);
}

// A batch buffer holds its four arrays (data and work, real and imaginary) this many doubles
// apart beyond their length: with power-of-two lengths they would start at the same cache
// set, and a radix-4 stage's 16 streams would fight over one set's ways (NAS pads its
// fftblock for the same reason).
inline constexpr std::size_t kFftBatchPad = 64 + 8;
inline std::size_t fft_batch_part(int n, int lines) {
  return static_cast<std::size_t>(n) * static_cast<std::size_t>(lines) + kFftBatchPad;
}
// The doubles to allocate for one batch buffer: the four arrays with their padding.
inline std::size_t fft_batch_buffer_doubles(int n, int lines) { return 4 * fft_batch_part(n, lines); }

}  // namespace pxq::kernels
