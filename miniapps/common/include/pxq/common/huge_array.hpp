// Arrays 2 MiB aligned and asked to be backed by transparent huge pages: fewer TLB misses in
// the sweeps, and far fewer pages for the MPI library to pin when it copies a buffer between
// processes (single-copy transfers pin every page they touch). Used by the ring's blocks and
// the bandwidth probe's arrays, so the probe measures what the proxies get; the NAS proxies'
// large vectors (MG's grids, CG's matrix and vectors, FT's buffers, IS's keys) are advised the
// same way through assign_huge. Advice only: where the machine's THP setting is `never` (the
// record's `environment.thp`) the pages stay 4 KiB and everything still works.
#pragma once

#include <sys/mman.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
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

// Touches every page of [p, p + bytes) once, the pages shared among `threads` threads as an
// OpenMP static schedule shares a loop over the same memory. Linux puts a page on the NUMA node
// of the thread that first touches it, so a rank's threads that then work on their static
// shares of the array find it on their own node, as NAS's OpenMP codes arrange by initialising
// in parallel. `toucher`, when given, gets the thread that touched each page, in order.
inline void touch_pages(void* p, std::size_t bytes, int threads, std::vector<int>* toucher = nullptr) {
  constexpr std::size_t kPage = 4096;
  if (p == nullptr || bytes == 0) return;
  auto* const first = static_cast<volatile char*>(p);
  const std::size_t lead = reinterpret_cast<std::uintptr_t>(p) % kPage;  // p's offset into its page
  const auto pages = static_cast<std::int64_t>((lead + bytes + kPage - 1) / kPage);
  if (toucher != nullptr) toucher->assign(static_cast<std::size_t>(pages), -1);
  int* const who = toucher != nullptr ? toucher->data() : nullptr;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (std::int64_t k = 0; k < pages; ++k) {
    // Page k's first byte inside [p, p + bytes): p itself on the first page.
    const std::size_t at = k == 0 ? 0 : static_cast<std::size_t>(k) * kPage - lead;
    first[at] = 0;
#ifdef _OPENMP
    if (who != nullptr) who[k] = omp_get_thread_num();
#else
    if (who != nullptr) who[k] = 0;
#endif
  }
  (void)threads;
}

// `v` holding n copies of `value` in fresh storage, advised as huge pages before it is first
// touched (a vector of 2 MiB or more; smaller ones are left as they come). With threads > 1 the
// storage is first touched by that many threads (touch_pages), then filled: the pages lie where
// the threads that share the array's loops run.
template <class T>
void assign_huge(std::vector<T>& v, std::size_t n, const T& value, int threads = 1) {
  static_assert(std::is_trivially_copyable_v<T>, "touched as raw storage before its elements are made");
  std::vector<T>().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
  if (threads > 1) touch_pages(v.data(), n * sizeof(T), threads);
  v.assign(n, value);
}

// Room for n elements in an empty `v`, advised the same way (for a vector filled by push_back).
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace pxq::common
