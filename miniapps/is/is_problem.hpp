// The NAS IS problem: class parameters, NAS's keys and the partial verification values, the
// split of the keys over processes and of the buckets after the exchange. No MPI here, so
// all of it is testable for any process count on one core.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pxq/kernels/is_ops.hpp"

namespace pxq::is {

using kernels::IsKey;

inline constexpr int kIsIterations = 10;  // NAS's MAX_ITERATIONS
inline constexpr int kTestKeys = 5;       // NAS's TEST_ARRAY_SIZE

struct IsClass {
  char name = 'S';
  int total_keys_log2 = 0;
  int max_key_log2 = 0;
  int buckets_log2 = 0;
  std::array<std::int64_t, kTestKeys> test_index{};  // global positions of the test keys
  std::array<std::int64_t, kTestKeys> test_rank{};   // their ranks, before the per-iteration shift
  std::int64_t total_keys() const { return std::int64_t{1} << total_keys_log2; }
  IsKey max_key() const { return IsKey{1} << max_key_log2; }
  int buckets() const { return 1 << buckets_log2; }
  int shift() const { return max_key_log2 - buckets_log2; }
};

// S, W, A, B or C (case-insensitive); std::invalid_argument naming the accepted classes.
const IsClass& is_class(const std::string& name);

// The rank NAS expects for test key `i` on `iteration` (1-based): its listed rank moved by
// the keys the iterations changed, as NAS's partial_verify shifts it per class.
std::int64_t expected_rank(const IsClass& c, int i, int iteration);

// NAS's operation count: keys ranked over the timed iterations.
double nas_operation_count(const IsClass& c);

// This rank's keys: global positions [first, first + count). NAS gives every rank
// total / nprocs (a power of two); any other count gets the first (total mod nprocs) one more.
struct KeySlice {
  std::int64_t first = 0;
  std::int64_t count = 0;
  bool holds(std::int64_t position) const { return position >= first && position < first + count; }
};
KeySlice key_slice(std::int64_t total, int nprocs, int rank);

// NAS's keys at global positions [s.first, s.first + s.count): each the sum of four
// numbers of NAS's stream times max_key / 4, the stream jumped ahead to the slice's start
// (as NAS's find_my_seed), so the keys are the same whatever the process count. `threads`
// threads draw a part each, the stream jumped ahead to the part's start (as NAS 3.4's OpenMP
// version): the same keys whatever the thread count.
std::vector<IsKey> generate_keys(const IsClass& c, const KeySlice& s, int threads = 1);

// NAS's change of two keys per iteration, on the rank that holds them: position `iteration`
// becomes `iteration` and position `iteration + 10` becomes max_key - iteration.
void alter_keys(const IsClass& c, const KeySlice& s, IsKey* keys, int iteration);

// NAS's full verification's placing: every key of `segments` (each in [lo, lo + pop.size()))
// put at its rank, --pop[key - lo], where pop holds the counts of the keys up to each key.
// `threads` threads own a run of keys each, cut where the counts split the keys evenly, and
// write only the slots their run's counts give it, so no two share a counter or a slot: the
// same keys in the same slots whatever the thread count. Counts that are not a running count
// of exactly the keys given place nothing; a key whose count falls below its run's slots is
// not placed: both are counted in `misplaced`, which a right ranking leaves at 0.
struct PlacedKeys {
  std::vector<IsKey> keys;
  std::int64_t misplaced = 0;
};
PlacedKeys place_keys(const std::vector<kernels::IsSegment>& segments, IsKey lo, std::vector<std::int32_t>& pop,
                      int threads = 1);

// The keys' sum and how many of them follow a larger key, in one pass by `threads` threads.
struct KeyScan {
  std::int64_t sum = 0;
  std::int64_t out_of_order = 0;
};
KeyScan scan_keys(const std::vector<IsKey>& keys, int threads = 1);

// The buckets each rank ranks after the exchange, NAS's way: bucket totals accumulate until
// they reach the end of the next rank's slice. Rank r gets buckets [first[r], last[r]];
// a rank left without buckets has last = first - 1.
struct BucketSplit {
  std::vector<int> first, last;
  IsKey min_key(int r, int shift) const { return static_cast<IsKey>(first[static_cast<std::size_t>(r)]) << shift; }
  IsKey max_key(int r, int shift) const {
    return static_cast<IsKey>((last[static_cast<std::size_t>(r)] + 1) << shift) - 1;
  }
  bool empty(int r) const { return last[static_cast<std::size_t>(r)] < first[static_cast<std::size_t>(r)]; }
};
BucketSplit split_buckets(const std::int32_t* totals, int nbuckets, std::int64_t total, int nprocs);

}  // namespace pxq::is
