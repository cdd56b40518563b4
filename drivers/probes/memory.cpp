// Schedules, kernels and step detection of the memory-hierarchy probes.
#include "pxq/probes/memory.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace pxq::probes {

std::vector<std::size_t> stride_sizes(std::size_t min_bytes, std::size_t max_bytes, int points_per_octave) {
  if (min_bytes < 16) throw std::invalid_argument("the smallest array must hold at least 16 bytes (two doubles)");
  if (max_bytes < min_bytes) throw std::invalid_argument("the largest array is smaller than the smallest");
  if (points_per_octave != 1 && points_per_octave != 2) throw std::invalid_argument("points per octave must be 1 or 2");
  std::vector<std::size_t> out;
  std::size_t p = 8;
  while (p < min_bytes / 2) p *= 2;
  for (; p <= max_bytes; p *= 2) {
    if (p >= min_bytes) out.push_back(p);
    const std::size_t mid = p + p / 2;
    if (points_per_octave == 2 && mid >= min_bytes && mid <= max_bytes && mid % 8 == 0) out.push_back(mid);
    if (p > std::numeric_limits<std::size_t>::max() / 4) break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::size_t> strides_for(std::size_t size, std::size_t only) {
  if (only > 0) {
    if (only % 8 != 0)
      throw std::invalid_argument("stride " + std::to_string(only) + " B is not a multiple of 8 bytes (one double)");
    if (only > size / 2)
      throw std::invalid_argument("stride " + std::to_string(only) + " B is larger than half the array (" +
                                  std::to_string(size) + " B): use a stride of at most " + std::to_string(size / 2) +
                                  " B or a larger array");
    return {only};
  }
  std::vector<std::size_t> out;
  for (std::size_t s = 8; s <= size / 2; s *= 2) out.push_back(s);
  return out;
}

std::size_t sweeps_for(std::size_t size, std::size_t stride, std::size_t min_accesses) {
  if (min_accesses == 0) throw std::invalid_argument("zero accesses per point: use at least 1");
  const std::size_t per_sweep = std::max<std::size_t>(1, size / stride);
  return (min_accesses + per_sweep - 1) / per_sweep;
}

__attribute__((optimize("no-tree-vectorize"))) std::size_t stride_kernel(double* a, std::size_t n,
                                                                         std::size_t stride_elems, std::size_t sweeps) {
  std::size_t count = 0;
  for (std::size_t s = 0; s < sweeps; ++s) {
    for (std::size_t i = 0; i < n; i += stride_elems) a[i] += 1.0;
    count += (n + stride_elems - 1) / stride_elems;
  }
  return count;
}

void block_kernel(double* a, std::size_t n, std::size_t repeats) {
  for (std::size_t r = 0; r < repeats; ++r) {
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) a[i] += 1.0;
    asm volatile("" : : "r"(a) : "memory");  // every pass reads and writes memory
  }
}

std::vector<Step> detect_steps(const std::vector<std::size_t>& sizes, const std::vector<double>& ns, double ratio) {
  if (sizes.size() != ns.size()) throw std::invalid_argument("one time per size is needed");
  if (!(ratio > 1)) throw std::invalid_argument("the step ratio must be above 1");
  std::vector<Step> out;
  std::size_t last = sizes.size();  // index of the previous rise, to merge a gradual one
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    const bool rise = ns[i] > 0 && ns[i + 1] > ratio * ns[i];
    const bool held = i + 2 >= sizes.size() || ns[i + 2] > ratio * ns[i];
    if (!rise || !held) continue;
    if (!out.empty() && last + 1 == i) {
      out.back().spills = sizes[i + 1];
      out.back().after_ns = ns[i + 1];
    } else {
      out.push_back({sizes[i], sizes[i + 1], ns[i], ns[i + 1]});
    }
    last = i;
  }
  return out;
}

std::vector<CacheMatch> match_caches(const std::vector<Step>& steps,
                                     const std::vector<std::pair<std::string, std::size_t>>& caches,
                                     double tolerance_octaves) {
  std::vector<CacheMatch> out;
  for (const auto& [level, bytes] : caches) {
    CacheMatch m;
    m.level = level;
    m.bytes = bytes;
    double best = std::numeric_limits<double>::infinity();
    for (const Step& s : steps) {
      const double lo = std::log2(static_cast<double>(s.fits)), hi = std::log2(static_cast<double>(s.spills));
      const double c = std::log2(static_cast<double>(bytes));
      const double d = c < lo ? lo - c : (c > hi ? c - hi : 0.0);
      if (d < best) {
        best = d;
        m.step = s;
        m.octaves = d;
      }
    }
    m.found = bytes > 0 && best <= tolerance_octaves;
    out.push_back(m);
  }
  return out;
}

}  // namespace pxq::probes

namespace pxq::probes {

const char* stream_name(StreamKernel k) {
  static constexpr const char* kNames[] = {"copy", "scale", "add", "triad", "update"};  // in the enum's order
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

StreamKernel stream_kernel_named(const std::string& name) {
  for (auto k : {StreamKernel::copy, StreamKernel::scale, StreamKernel::add, StreamKernel::triad, StreamKernel::update})
    if (name == stream_name(k)) return k;
  throw std::invalid_argument("unknown kernel '" + name + "': use copy, scale, add, triad or update");
}

double stream_bytes(StreamKernel k, std::size_t n) {
  // update reads and writes one array: 16 B per element, as copy and scale count theirs.
  const double arrays = (k == StreamKernel::copy || k == StreamKernel::scale || k == StreamKernel::update) ? 2.0 : 3.0;
  return arrays * 8.0 * static_cast<double>(n);
}

void stream_pass(StreamKernel k, double* a, double* b, double* c, std::size_t lo, std::size_t hi) {
  const double s = 3.0;
  switch (k) {
    case StreamKernel::copy:
#pragma omp simd
      for (std::size_t i = lo; i < hi; ++i) c[i] = a[i];
      break;
    case StreamKernel::scale:
#pragma omp simd
      for (std::size_t i = lo; i < hi; ++i) b[i] = s * c[i];
      break;
    case StreamKernel::add:
#pragma omp simd
      for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
      break;
    case StreamKernel::triad:
#pragma omp simd
      for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
      break;
    case StreamKernel::update:  // in place, as the proxies' sweeps: no write-allocate stream (fixed point 1)
#pragma omp simd
      for (std::size_t i = lo; i < hi; ++i) a[i] = 0.5 * a[i] + 0.5;
      break;
  }
  asm volatile("" : : "r"(a), "r"(b), "r"(c) : "memory");
}

int saturation_point(const std::vector<double>& totals, double fraction) {
  if (totals.empty()) throw std::invalid_argument("no bandwidths to read a saturation point from");
  if (!(fraction > 0 && fraction <= 1)) throw std::invalid_argument("the saturation fraction must be within (0, 1]");
  const double best = *std::max_element(totals.begin(), totals.end());
  for (std::size_t i = 0; i < totals.size(); ++i)
    if (totals[i] >= fraction * best) return static_cast<int>(i) + 1;
  return static_cast<int>(totals.size());
}

bool still_scaling(const std::vector<double>& totals, double fraction) {
  if (totals.size() < 2) return false;
  return totals.back() >= fraction * static_cast<double>(totals.size()) * totals.front();
}

}  // namespace pxq::probes
