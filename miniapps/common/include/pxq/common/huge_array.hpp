// Arrays 2 MiB aligned and asked to be backed by transparent huge pages: fewer TLB misses in
// the sweeps, and far fewer pages for the MPI library to pin when it copies a buffer between
// processes (single-copy transfers pin every page they touch). Used by the ring's blocks and
// the bandwidth probe's arrays, so the probe measures what the proxies get; the NAS proxies'
// large vectors (MG's grids, CG's matrix and vectors, FT's buffers, IS's keys) are advised the
// same way through assign_huge. Advice only: where the machine's THP setting is `never` (the
// record's `environment.thp`) the pages stay 4 KiB and everything still works.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

// Asks for transparent huge pages on the 2 MiB-aligned part of [p, p + bytes), before that
// memory is first touched: the kernel then backs it with huge pages as it faults it in.
inline void advise_huge_pages(void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  // Bytes from p to the next 2 MiB boundary: the pointer is moved on, never rebuilt from an integer.
  const std::size_t skip = (kHuge - reinterpret_cast<std::uintptr_t>(p) % kHuge) % kHuge;
  if (p == nullptr || bytes <= skip) return;
  const std::size_t whole = (bytes - skip) / kHuge * kHuge;
  if (whole > 0) madvise(static_cast<char*>(p) + skip, whole, MADV_HUGEPAGE);  // advice only
#else
  (void)p;
  (void)bytes;
#endif
}

// `v` holding n copies of `value` in fresh storage, advised as huge pages before it is first
// touched (a vector of 2 MiB or more; smaller ones are left as they come).
template <class T>
void assign_huge(std::vector<T>& v, std::size_t n, const T& value) {
  std::vector<T>().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
  v.assign(n, value);
}

// Room for n elements in an empty `v`, advised the same way (for a vector filled by push_back).
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace pxq::common
