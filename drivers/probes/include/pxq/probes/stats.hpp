// Statistics of repeated timings, for the probes: percentiles, the share of the total taken
// by the slowest calls, and a 1-D clustering that finds the separate populations a
// distribution of call times often has (the fast path, a delayed path, an OS hiccup).
#pragma once

#include <cstddef>
#include <vector>

namespace pxq::probes {

// The p-th percentile (0 <= p <= 100) by linear interpolation between the closest ranks of
// the sorted sample (p = 50 is the median). Throws std::invalid_argument for an empty sample
// or p outside [0, 100].
double percentile(std::vector<double> values, double p);

// The share of the sum taken by the slowest `fraction` of the values (at least one value):
// 0.05 for the slowest 5%. Throws std::invalid_argument for an empty sample, a fraction
// outside (0, 1] or a non-positive sum.
double tail_share(std::vector<double> values, double fraction);

struct Cluster {
  double centre = 0;  // median of the members
  double min = 0, max = 0;
  std::size_t count = 0;
};

// Sorted values split wherever one is more than `gap_ratio` times the one before it (on a
// log scale, a gap wider than log(gap_ratio)); clusters from the fastest up. Values must be
// positive. Throws std::invalid_argument for an empty sample, a non-positive value or
// gap_ratio <= 1.
std::vector<Cluster> clusters_1d(std::vector<double> values, double gap_ratio);

}  // namespace pxq::probes
