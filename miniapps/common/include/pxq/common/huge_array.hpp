// Arrays 2 MiB aligned and asked to be backed by transparent huge pages: fewer TLB misses in
// the sweeps, and far fewer pages for the MPI library to pin when it copies a buffer between
// processes (single-copy transfers pin every page they touch). Used by the ring's blocks and
// the bandwidth probe's arrays, so the probe measures what the proxies get.
#pragma once

#include <sys/mman.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace pxq::common {

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using HugeArray = std::unique_ptr<double[], FreeDeleter>;

// `elems` doubles; std::runtime_error naming `what` when the memory is not there.
inline HugeArray huge_array(std::size_t elems, const char* what) {
  constexpr std::size_t kHuge = 2u << 20;
  const std::size_t bytes = (elems * sizeof(double) + kHuge - 1) / kHuge * kHuge;
  void* p = nullptr;
  if (posix_memalign(&p, kHuge, bytes) != 0)
    throw std::runtime_error(std::string("cannot allocate ") + what + " of " + std::to_string(bytes) + " bytes");
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the array still works
#endif
  return HugeArray(static_cast<double*>(p));
}

}  // namespace pxq::common
