// NAS IS's problem set-up, rewritten for pxq: class table with NAS's partial verification
// values, the key generator, the key and bucket splits.
#include "is_problem.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "pxq/common/huge_array.hpp"
#include "pxq/common/nas_setup.hpp"
#include "pxq/kernels/nas_random.hpp"

namespace pxq::is {
namespace {

// NAS IS 3.4: log2 of the keys, of the largest key and of the buckets; the test keys'
// positions and ranks.
const std::array<IsClass, 5> kClasses{{
    {'S', 16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {'W', 20, 16, 10, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}},
    {'A', 23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760}, {104, 17523, 123928, 8288932, 8388264}},
    {'B', 25, 21, 10, {41869, 812306, 5102857, 18232239, 26860214}, {33422937, 10244, 59149, 33135281, 99}},
    {'C',
     27,
     23,
     10,
     {44172927, 72999161, 74326391, 129606274, 21736814},
     {61147, 882988, 266290, 133997595, 133525895}},
}};

}  // namespace

const IsClass& is_class(const std::string& name) { return common::find_nas_class(kClasses, name); }

std::int64_t expected_rank(const IsClass& c, int i, int iteration) {
  const std::int64_t listed = c.test_rank[static_cast<std::size_t>(i)];
  bool up = false;
  int by = iteration;
  switch (c.name) {
    case 'S':
    case 'C':
      up = i <= 2;
      break;
    case 'W':
      up = i < 2;
      by = up ? iteration - 2 : iteration;
      break;
    case 'A':
      up = i <= 2;
      by = iteration - 1;
      break;
    default:  // 'B'
      up = i == 1 || i == 2 || i == 4;
      break;
  }
  return up ? listed + by : listed - by;
}

double nas_operation_count(const IsClass& c) {
  return static_cast<double>(kIsIterations) * static_cast<double>(c.total_keys());
}

KeySlice key_slice(std::int64_t total, int nprocs, int rank) {
  const std::int64_t base = total / nprocs, extra = total % nprocs;
  return {rank * base + std::min<std::int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

std::vector<IsKey> generate_keys(const IsClass& c, const KeySlice& s, int threads) {
  const IsKey k = c.max_key() / 4;
  std::vector<IsKey> keys;
  common::assign_huge(keys, static_cast<std::size_t>(s.count), IsKey{0}, threads);
  IsKey* out = keys.data();
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::int64_t first = s.count * t / nt, last = s.count * (t + 1) / nt;
    kernels::NasRandom stream(kernels::kNasDefaultSeed, kernels::kNasMultiplier);
    stream.skip(4 * static_cast<std::uint64_t>(s.first + first));
    for (std::int64_t i = first; i < last; ++i) {
      double x = stream.next();
      x += stream.next();
      x += stream.next();
      x += stream.next();
      out[i] = static_cast<IsKey>(k * x);
    }
  }
  return keys;
}

namespace {

// Whether pop is a running count (never falling, from 0 or more) that ends at n.
bool running_count(const std::vector<std::int32_t>& pop, std::size_t n) {
  return !pop.empty() && pop.front() >= 0 && static_cast<std::size_t>(pop.back()) == n &&
         std::is_sorted(pop.begin(), pop.end());
}

}  // namespace

PlacedKeys place_keys(const std::vector<kernels::IsSegment>& segments, IsKey lo, std::vector<std::int32_t>& pop,
                      int threads) {
  std::size_t n = 0;
  for (const auto& seg : segments) n += seg.count;
  PlacedKeys placed;
  if (!running_count(pop, n)) {
    placed.misplaced = static_cast<std::int64_t>(n);
    return placed;
  }
  common::assign_huge(placed.keys, n, IsKey{0}, threads);
  // Thread j owns the keys lo + [cut[j], cut[j + 1]): those whose counts pass n * j / nt, so
  // every thread places about as many keys, however the keys are spread; and only the slots
  // from first_slot[j] up that those counts give it.
  const auto nt = static_cast<std::size_t>(std::max(threads, 1));
  std::vector<std::int64_t> cut(nt + 1, static_cast<std::int64_t>(pop.size()));
  cut[0] = 0;
  for (std::size_t j = 1; j < nt; ++j)
    cut[j] = std::upper_bound(pop.begin(), pop.end(), static_cast<std::int32_t>(n * j / nt)) - pop.begin();
  std::vector<std::int32_t> first_slot(nt);
  for (std::size_t j = 0; j < nt; ++j) first_slot[j] = cut[j] > 0 ? pop[static_cast<std::size_t>(cut[j] - 1)] : 0;
  const auto size = static_cast<std::int64_t>(pop.size());
  IsKey* out = placed.keys.data();
  std::int32_t* count = pop.data();
  std::int64_t misplaced = 0;
#pragma omp parallel for num_threads(static_cast<int>(nt)) schedule(static, 1) reduction(+ : misplaced)
  for (std::size_t j = 0; j < nt; ++j) {
    const std::int64_t first = cut[j], last = cut[j + 1];
    const std::int32_t floor = first_slot[j];
    for (const auto& seg : segments)
      for (std::size_t i = 0; i < seg.count; ++i) {
        const std::int64_t at = seg.keys[i] - static_cast<std::int64_t>(lo);
        if (at < 0 || at >= size)
          misplaced += j == 0;  // outside the range: no run holds it (run 0 counts it)
        else if (at < first || at >= last)
          continue;
        else if (count[at] <= floor)
          ++misplaced;  // more keys than its count leaves room for
        else
          out[--count[at]] = seg.keys[i];
      }
  }
  placed.misplaced = misplaced;
  return placed;
}

KeyScan scan_keys(const std::vector<IsKey>& keys, int threads) {
  std::int64_t sum = 0, out = 0;
  const IsKey* k = keys.data();
  const auto n = static_cast<std::int64_t>(keys.size());
#pragma omp parallel for num_threads(threads) reduction(+ : sum, out) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    sum += k[i];
    out += i > 0 && k[i - 1] > k[i];
  }
  return {sum, out};
}

void alter_keys(const IsClass& c, const KeySlice& s, IsKey* keys, int iteration) {
  if (s.holds(iteration)) keys[iteration - s.first] = iteration;
  if (s.holds(iteration + kIsIterations)) keys[iteration + kIsIterations - s.first] = c.max_key() - iteration;
}

BucketSplit split_buckets(const std::int32_t* totals, int nbuckets, std::int64_t total, int nprocs) {
  BucketSplit out;
  out.first.assign(static_cast<std::size_t>(nprocs), 1);
  out.last.assign(static_cast<std::size_t>(nprocs), 0);
  std::int64_t sum = 0;
  int r = 0;
  for (int b = 0; b < nbuckets && r < nprocs; ++b) {
    sum += totals[b];
    const KeySlice mine = key_slice(total, nprocs, r);
    if (sum >= mine.first + mine.count) {
      out.first[static_cast<std::size_t>(r)] = r == 0 ? 0 : out.last[static_cast<std::size_t>(r) - 1] + 1;
      out.last[static_cast<std::size_t>(r)] = b;
      ++r;
    }
  }
  return out;
}

}  // namespace pxq::is
