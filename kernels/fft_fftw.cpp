// FftPlan's FFTW engine. A batch (fft.hpp's FFTW layout: element i of line b at [b*n + i],
// split real and imaginary) is one FFTW guru plan: a transform of length n at stride 1,
// repeated for B lines n apart, split arrays, out of place into the work arrays. (FFTW is
// 2-4x slower on pxq's own layout, lines interleaved: its codelets want each line
// contiguous.) FFTW's split interface computes the inverse transform when real and
// imaginary are swapped, so one plan serves both directions.
//
// Plans are made on first use for each batch width, alignment and separation of the real
// and imaginary arrays (FFTW reuses a plan only on arrays laid out alike), under an exclusive
// lock (FFTW's planner is not thread-safe); every batch after that only looks its plan up
// under a shared lock, so threads running batches do not queue (executing a plan on new
// arrays is thread-safe). FFTW_MEASURE times a few candidate algorithms on scratch arrays, so
// planning never touches the caller's data.
#include "fft_fftw.hpp"

#include <stdexcept>
#include <string>

#ifdef PXQ_HAVE_FFTW
#include <fftw3.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <utility>
#endif

namespace pxq::kernels {

#ifdef PXQ_HAVE_FFTW

bool fftw_available() { return true; }
std::string fftw_version() {
  const std::string v = ::fftw_version;  // "fftw-3.3.10-sse2-avx"
  const std::size_t start = v.rfind("fftw-", 0) == 0 ? 5 : 0;
  return v.substr(start, v.find('-', start) - start);
}

class FftwBatches {
 public:
  explicit FftwBatches(int n) : n_(n) {}
  ~FftwBatches() {
    for (auto& [key, plan] : plans_) fftw_destroy_plan(plan);
  }
  FftwBatches(const FftwBatches&) = delete;
  FftwBatches& operator=(const FftwBatches&) = delete;

  bool run(double* re, double* im, double* wre, double* wim, int lines, FftDirection dir) const {
    // The inverse is the forward transform with real and imaginary swapped.
    if (dir == FftDirection::inverse) {
      std::swap(re, im);
      std::swap(wre, wim);
    }
    const bool aligned = fftw_alignment_of(re) == 0 && fftw_alignment_of(im) == 0 && fftw_alignment_of(wre) == 0 &&
                         fftw_alignment_of(wim) == 0;
    // A plan applies to new arrays only with the same separations of imaginary from real parts.
    const Key key{lines, aligned, im - re, wim - wre};
    fftw_execute_split_dft(get(key), re, im, wre, wim);
    return true;
  }

 private:
  struct Key {
    int lines;
    bool aligned;
    std::ptrdiff_t in_sep, out_sep;  // im - re, wim - wre
    bool operator<(const Key& o) const {
      return std::tie(lines, aligned, in_sep, out_sep) < std::tie(o.lines, o.aligned, o.in_sep, o.out_sep);
    }
  };

  fftw_plan get(const Key& key) const {
    {
      const std::shared_lock<std::shared_mutex> look(mutex_);
      const auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    const std::unique_lock<std::shared_mutex> plan_it(mutex_);
    auto& plan = plans_[key];  // another thread may have planned it meanwhile
    if (plan == nullptr) plan = make(key);
    return plan;
  }

  // Plans on scratch arrays laid out as the caller's: real and imaginary key.*_sep apart.
  fftw_plan make(const Key& key) const {
    const std::ptrdiff_t len = static_cast<std::ptrdiff_t>(n_) * key.lines;
    const std::ptrdiff_t in_span = len + std::abs(key.in_sep), out_span = len + std::abs(key.out_sep);
    double* scratch = fftw_alloc_real(static_cast<std::size_t>(in_span + out_span));
    if (scratch == nullptr) throw std::bad_alloc();
    double* ri = scratch + std::max<std::ptrdiff_t>(0, -key.in_sep);
    double* ro = scratch + in_span + std::max<std::ptrdiff_t>(0, -key.out_sep);
    fftw_iodim dim{n_, 1, 1};  // element i of line b at b * n + i
    fftw_iodim many{key.lines, n_, n_};
    const unsigned flags = FFTW_MEASURE | (key.aligned ? 0U : FFTW_UNALIGNED);
    const fftw_plan plan =
        fftw_plan_guru_split_dft(1, &dim, 1, &many, ri, ri + key.in_sep, ro, ro + key.out_sep, flags);
    fftw_free(scratch);
    if (plan == nullptr)
      throw std::runtime_error("FFTW could not plan " + std::to_string(key.lines) + " lines of length " +
                               std::to_string(n_));
    return plan;
  }

  int n_;
  mutable std::shared_mutex mutex_;
  mutable std::map<Key, fftw_plan> plans_;
};

FftwBatchesPtr make_fftw_batches(int n) { return FftwBatchesPtr(new FftwBatches(n)); }

bool run_fftw(const FftwBatches& plans, double* re, double* im, double* wre, double* wim, int lines, FftDirection dir) {
  return plans.run(re, im, wre, wim, lines, dir);
}

#else

bool fftw_available() { return false; }
std::string fftw_version() { return ""; }

class FftwBatches {};

FftwBatchesPtr make_fftw_batches(int /*n*/) {
  throw std::invalid_argument("this build has no FFTW: install it (apt-get install libfftw3-dev) and rebuild");
}

bool run_fftw(const FftwBatches& /*plans*/, double* /*re*/, double* /*im*/, double* /*wre*/, double* /*wim*/,
              int /*lines*/, FftDirection /*dir*/) {
  return false;
}

#endif

void FftwBatchesDeleter::operator()(FftwBatches* p) const { delete p; }

}  // namespace pxq::kernels
