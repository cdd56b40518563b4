// Percentiles, tail share and 1-D clustering of timings (see stats.hpp).
#include "pxq/probes/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace pxq::probes {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("percentile of an empty sample");
  if (!(p >= 0.0 && p <= 100.0)) throw std::invalid_argument("percentile must be within 0..100");
  std::sort(values.begin(), values.end());
  const double pos = p / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double tail_share(std::vector<double> values, double fraction) {
  if (values.empty()) throw std::invalid_argument("tail share of an empty sample");
  if (!(fraction > 0.0 && fraction <= 1.0)) throw std::invalid_argument("tail fraction must be within (0, 1]");
  const double total = std::accumulate(values.begin(), values.end(), 0.0);
  if (!(total > 0.0)) throw std::invalid_argument("tail share needs a positive sum");
  const std::size_t k =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size()))));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() - k), values.end());
  const double tail = std::accumulate(values.end() - static_cast<std::ptrdiff_t>(k), values.end(), 0.0);
  return tail / total;
}

std::vector<Cluster> clusters_1d(std::vector<double> values, double gap_ratio) {
  if (values.empty()) throw std::invalid_argument("clusters of an empty sample");
  if (!(gap_ratio > 1.0)) throw std::invalid_argument("cluster gap ratio must be > 1");
  std::sort(values.begin(), values.end());
  if (!(values.front() > 0.0)) throw std::invalid_argument("clusters need positive values");
  std::vector<Cluster> out;
  std::size_t start = 0;
  auto close = [&](std::size_t end) {  // members [start, end)
    Cluster c;
    c.count = end - start;
    c.min = values[start];
    c.max = values[end - 1];
    const std::size_t mid = start + c.count / 2;
    c.centre = c.count % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
    out.push_back(c);
    start = end;
  };
  for (std::size_t i = 1; i < values.size(); ++i)
    if (values[i] > gap_ratio * values[i - 1]) close(i);
  close(values.size());
  return out;
}

}  // namespace pxq::probes
