// The memory-hierarchy probes' schedules and their reading: which array sizes and strides
// the stride kernel visits, how many sweeps a point takes, and where the time per access
// steps up as the array outgrows a cache.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pxq::probes {

// Array sizes from `min_bytes` to `max_bytes`: every power of two, and with
// `points_per_octave` 2 also 1.5 times each (so a 48 KiB or 96 MiB cache falls on a point).
// Sizes are multiples of 8 bytes. Throws std::invalid_argument for min < 16 bytes,
// max < min, or points_per_octave other than 1 or 2.
std::vector<std::size_t> stride_sizes(std::size_t min_bytes, std::size_t max_bytes, int points_per_octave);

// Strides for an array of `size` bytes: 8 bytes, doubling, up to half the array (at least
// two accesses per sweep). With `only` > 0, just that stride; throws std::invalid_argument
// when it is not a multiple of 8 or is more than half the array.
std::vector<std::size_t> strides_for(std::size_t size, std::size_t only = 0);

// Sweeps over the array so a point makes at least `min_accesses` accesses; throws
// std::invalid_argument when min_accesses is 0.
std::size_t sweeps_for(std::size_t size, std::size_t stride, std::size_t min_accesses);

// The stride kernel: `sweeps` passes of a[i] += 1 over every `stride_elems`-th double of
// `a[0, n)`, one read and one write per access (not vectorised). Returns the accesses made.
std::size_t stride_kernel(double* a, std::size_t n, std::size_t stride_elems, std::size_t sweeps);

// The block kernel: `repeats` passes of read + write over every double of a[0, n).
void block_kernel(double* a, std::size_t n, std::size_t repeats);

// A step in time per access between two consecutive array sizes: everything up to `fits`
// was served faster than everything from `spills` on.
struct Step {
  std::size_t fits = 0, spills = 0;
  double before_ns = 0, after_ns = 0;  // time per access at `fits` and at `spills`
};

// Steps where the time per access rises by more than `ratio` from one size to the next and
// stays up at the size after (a single slow point is noise, not a cache); rises at
// consecutive sizes merge into one gradual step. Sizes ascending, one time each. Throws std::invalid_argument when the
// lengths differ or ratio <= 1.
std::vector<Step> detect_steps(const std::vector<std::size_t>& sizes, const std::vector<double>& ns, double ratio);

struct CacheMatch {
  std::string level;      // "L1d", "L2", "L3"
  std::size_t bytes = 0;  // hwloc's size
  bool found = false;     // a step lies near it
  Step step;              // the nearest step
  double octaves = 0;     // log2 distance from the cache size to the step's interval (0: inside)
};

// For each cache level, the detected step nearest to its size (on a log scale) and how far
// the size lies outside [fits, spills]; found when within `tolerance_octaves`.
std::vector<CacheMatch> match_caches(const std::vector<Step>& steps,
                                     const std::vector<std::pair<std::string, std::size_t>>& caches,
                                     double tolerance_octaves);

}  // namespace pxq::probes

namespace pxq::probes {

// STREAM's four kernels: copy c = a, scale b = s c, add c = a + b, triad a = b + s c; and
// update a = (a + 1) / 2 in place (one array read and written, as the proxies' sweeps).
enum class StreamKernel { copy, scale, add, triad, update };
const char* stream_name(StreamKernel k);
// Throws std::invalid_argument naming the kernels for an unknown name.
StreamKernel stream_kernel_named(const std::string& name);
// Bytes a kernel moves over n elements, as STREAM counts them (2 or 3 arrays of doubles).
double stream_bytes(StreamKernel k, std::size_t n);
// One pass of the kernel over [lo, hi).
void stream_pass(StreamKernel k, double* a, double* b, double* c, std::size_t lo, std::size_t hi);

// The fewest active cores whose total bandwidth reaches `fraction` of the best total (the
// point past which adding cores adds little); totals[i] is the total with i + 1 cores.
// Throws std::invalid_argument for an empty list or a fraction outside (0, 1].
int saturation_point(const std::vector<double>& totals, double fraction);
// True when the last core count still scales: its total is at least `fraction` of the
// total's perfect scaling from one core (so no saturation was reached on these cores).
bool still_scaling(const std::vector<double>& totals, double fraction);

}  // namespace pxq::probes
