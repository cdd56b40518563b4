// The batched Stockham FFT (see fft.hpp for the data layout).
//
// Radix-4 stage of sub-length L (m = L/4 butterflies) and stride s, butterfly p, element q of
// the stride (each element being B lines wide):
//   a = x[q + s p], b = x[q + s (p+m)], c = x[q + s (p+2m)], d = x[q + s (p+3m)]
//   y[q + s 4p]     = (a + c) + (b + d)
//   y[q + s (4p+1)] = w^p  ((a - c) -+ i (b - d))
//   y[q + s (4p+2)] = w^2p ((a + c) - (b + d))
//   y[q + s (4p+3)] = w^3p ((a - c) +- i (b - d))
// with w = e^{-+2 pi i/L} (upper signs forward). Then L /= 4, s *= 4 and x and y swap roles.
// For fixed p the q and line indices together are one contiguous run of s*B doubles.
#include "pxq/kernels/fft.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "fft_fftw.hpp"

namespace pxq::kernels {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

template <bool Inverse>
void radix4(const double* __restrict xr, const double* __restrict xi, double* __restrict yr, double* __restrict yi,
            int m, std::size_t run, const double* tw) {
  for (int p = 0; p < m; ++p) {
    const double* w = tw + 6 * std::ptrdiff_t{p};
    const double w1r = w[0], w1i = Inverse ? -w[1] : w[1];
    const double w2r = w[2], w2i = Inverse ? -w[3] : w[3];
    const double w3r = w[4], w3i = Inverse ? -w[5] : w[5];
    const std::size_t ia = static_cast<std::size_t>(p) * run, ib = ia + static_cast<std::size_t>(m) * run,
                      ic = ib + static_cast<std::size_t>(m) * run, id = ic + static_cast<std::size_t>(m) * run;
    const std::size_t o0 = 4 * ia, o1 = o0 + run, o2 = o1 + run, o3 = o2 + run;
    for (std::size_t j = 0; j < run; ++j) {
      const double apcr = xr[ia + j] + xr[ic + j], apci = xi[ia + j] + xi[ic + j];
      const double amcr = xr[ia + j] - xr[ic + j], amci = xi[ia + j] - xi[ic + j];
      const double bpdr = xr[ib + j] + xr[id + j], bpdi = xi[ib + j] + xi[id + j];
      const double bmdr = xr[ib + j] - xr[id + j], bmdi = xi[ib + j] - xi[id + j];
      // Forward: t1 = (a-c) - i(b-d), t3 = (a-c) + i(b-d); inverse the other way round.
      const double t1r = Inverse ? amcr - bmdi : amcr + bmdi, t1i = Inverse ? amci + bmdr : amci - bmdr;
      const double t3r = Inverse ? amcr + bmdi : amcr - bmdi, t3i = Inverse ? amci - bmdr : amci + bmdr;
      const double t2r = apcr - bpdr, t2i = apci - bpdi;
      yr[o0 + j] = apcr + bpdr;
      yi[o0 + j] = apci + bpdi;
      yr[o1 + j] = w1r * t1r - w1i * t1i;
      yi[o1 + j] = w1r * t1i + w1i * t1r;
      yr[o2 + j] = w2r * t2r - w2i * t2i;
      yi[o2 + j] = w2r * t2i + w2i * t2r;
      yr[o3 + j] = w3r * t3r - w3i * t3i;
      yi[o3 + j] = w3r * t3i + w3i * t3r;
    }
  }
}

// The last stage when log2 n is odd: L = 2, one butterfly, no twiddle.
void radix2(const double* __restrict xr, const double* __restrict xi, double* __restrict yr, double* __restrict yi,
            std::size_t run) {
  for (std::size_t j = 0; j < run; ++j) {
    const double ar = xr[j], ai = xi[j], br = xr[run + j], bi = xi[run + j];
    yr[j] = ar + br;
    yi[j] = ai + bi;
    yr[run + j] = ar - br;
    yi[run + j] = ai - bi;
  }
}

}  // namespace

FftPlan::FftPlan(int n, FftEngine engine) : n_(n), engine_(engine) {
  if (n < 1 || (n & (n - 1)) != 0)
    throw std::invalid_argument("FFT length " + std::to_string(n) + " is not a power of two");
  if (engine == FftEngine::fftw) {
    fftw_ = make_fftw_batches(n);
    return;
  }
  int L = n, s = 1;
  while (L >= 4) {
    const int m = L / 4;
    stages_.push_back({4, m, s, tw_.size()});
    for (int p = 0; p < m; ++p)
      for (int k = 1; k <= 3; ++k) {
        const double angle = -kTwoPi * static_cast<double>(k * p) / static_cast<double>(L);
        tw_.push_back(std::cos(angle));
        tw_.push_back(std::sin(angle));
      }
    L /= 4;
    s *= 4;
  }
  if (L == 2) stages_.push_back({2, 1, s, tw_.size()});
}

const char* fft_engine_name(FftEngine e) { return e == FftEngine::fftw ? "fftw" : "pxq"; }

FftEngine parse_fft_engine(const std::string& name) {
  if (name == "pxq") return FftEngine::pxq;
  if (name == "fftw") {
    if (!fftw_available())
      throw std::invalid_argument(
          "--fft fftw: this build has no FFTW; install it (apt-get install libfftw3-dev, or spack install fftw) "
          "and rebuild (./pxq build), or use --fft pxq");
    return FftEngine::fftw;
  }
  throw std::invalid_argument("unknown --fft '" + name + "': use pxq (pxq's own FFT) or fftw");
}

bool FftPlan::run(double* re, double* im, double* wre, double* wim, int lines, FftDirection dir) const {
  if (fftw_) return run_fftw(*fftw_, re, im, wre, wim, lines, dir);
  double* xr = re;
  double* xi = im;
  double* yr = wre;
  double* yi = wim;
  for (const Stage& st : stages_) {
    const std::size_t run = static_cast<std::size_t>(st.stride) * static_cast<std::size_t>(lines);
    if (st.radix == 2) {
      radix2(xr, xi, yr, yi, run);
    } else if (dir == FftDirection::forward) {
      radix4<false>(xr, xi, yr, yi, st.butterflies, run, tw_.data() + st.twiddle);
    } else {
      radix4<true>(xr, xi, yr, yi, st.butterflies, run, tw_.data() + st.twiddle);
    }
    std::swap(xr, yr);
    std::swap(xi, yi);
  }
  return xr == wre;
}

}  // namespace pxq::kernels
