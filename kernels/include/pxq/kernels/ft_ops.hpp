// The FT proxy's local kernels, with no MPI: batches of 1-D FFTs over the lines of a 3-D
// block, the strided block copies that pack and unpack transposes, and NAS's evolve step.
//
// A pass transforms outer_count x line_count lines of length n. Lines are taken B at a time
// (B consecutive values of the line index within one outer index): gathered into a split
// re/im batch (FftPlan's layout), transformed, scattered. Where a line's elements live is a
// LineMap, separately for source and destination, so one pass can read one layout and write
// another: the FFT of the last axis before a transpose can write straight into the send
// buffer in the order each peer needs (packing while the data is in cache), and the FFT
// after a transpose can read straight from the receive buffer.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/family.hpp"
#include "pxq/kernels/fft.hpp"

namespace pxq::kernels {

using Complex = std::complex<double>;

// Line (o, x) of a pass, o < outer_count and x < line_count, has element i at
//   o * outer + x * line + elem[i]   (in complex elements from the array's start).
struct LineMap {
  std::int64_t outer = 0;
  std::int64_t line = 0;
  const std::int64_t* elem = nullptr;  // n offsets
};

// NAS's evolve fused into a pass: before the transform, source element (o, x, i) is
// multiplied in place by outer[o] * line[x] * elem[i]. All null: no evolve.
struct EvolveFactors {
  const double* outer = nullptr;
  const double* line = nullptr;
  const double* elem = nullptr;
  bool active() const { return outer != nullptr; }
};

struct FftPass {
  const FftPlan* plan = nullptr;  // the length n
  FftDirection dir = FftDirection::forward;
  int outer_count = 0;
  int line_count = 0;
  LineMap src, dst;
  EvolveFactors evolve;
};

// for p < count[0], a < count[1], b < count[2], c < row:
//   dst[p*dst_stride[0] + a*dst_stride[1] + b*dst_stride[2] + c] = src[(same with src_stride) + c]
struct BlockCopy {
  int count[3] = {1, 1, 1};
  std::int64_t src_stride[3] = {0, 0, 0};
  std::int64_t dst_stride[3] = {0, 0, 0};
  std::int64_t row = 0;
};

class FtOps {
 public:
  virtual ~FtOps() = default;

  // Lines this executor transforms together for length n: `rows` when the lines' elements
  // are adjacent (the gather is a transposition), else lines adjacent to each other.
  virtual int batch_lines(int n, bool rows) const = 0;

  // dst's lines = the transform of src's lines. src and dst may be the same array with the
  // same map (in place). With evolve factors, src is updated in place first.
  virtual void fft(Complex* src, Complex* dst, const FftPass& pass) const = 0;

  virtual void copy(const Complex* src, Complex* dst, const BlockCopy& c) const = 0;

  // NAS evolve on a block [n3][n2][n1], n1 fastest: u0 *= f3[i3] f2[i2] f1[i1]; u1 = u0.
  virtual void evolve(Complex* u0, Complex* u1, int n1, int n2, int n3, const double* f1, const double* f2,
                      const double* f3) const = 0;
};

// NAS FT's fftblock: the lines per batch of the untiled variants.
inline constexpr int kNasFftBlock = 16;

// Lines gathered together by transposition (one cache line of doubles): the most a tiled
// batch of rows takes, since a wider transposition stops fitting the cache.
inline constexpr int kTransposeLines = 8;

// Lines per batch: NAS's fftblock untiled (tile_bytes 0); tiled, the largest power of two B
// whose batch (fft_batch_doubles(n, B) doubles) fits in the tile, at least 1, and for rows
// at most kTransposeLines.
int ft_batch_lines(std::size_t tile_bytes, int n, bool rows);

// The executor for a backend: `threads` threads; `tile_bytes` 0 for NAS's fftblock, else
// batches sized by the tile. Throws std::invalid_argument for a backend this build lacks.
inline constexpr char kFtFamily[] = "FT";
// The executors of each backend that runs FT kernels (their files join it: family.hpp).
using FtFamily = Family<kFtFamily, std::unique_ptr<FtOps> (*)(int threads, std::size_t tile_bytes)>;

inline std::unique_ptr<FtOps> make_ft_ops(const Backend& backend, int threads, std::size_t tile_bytes) {
  return FtFamily::of(backend)(threads, tile_bytes);
}

}  // namespace pxq::kernels
