// IS: the problem set-up against NAS's definitions (keys the same for every process count,
// the test keys' ranks recomputed by a plain sort over all 10 iterations, the bucket split)
// and the kernels of every executor against a plain sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "executors.hpp"
#include "is_problem.hpp"
#include "pxq/kernels/is_ops.hpp"

using pxq::is::IsClass;
using pxq::is::IsKey;
using pxq::kernels::IsSegment;

namespace {

std::vector<Exec> executors() {
  return with_backends<pxq::kernels::IsFamily>({{"openmp", 1, 0, "flat (NAS's one pass)"},
                                                {"openmp", 2, 0, "hybrid"},
                                                {"openmp", 3, 0, "3 threads"},
                                                {"openmp", 1, 4, "tiled 4 B (one bucket per window)"},
                                                {"openmp", 1, 1000, "tiled 1000 B"},
                                                {"openmp", 2, 4096, "tiled 4K, 2 threads"},
                                                {"openmp", 2, std::size_t{1} << 30, "tiled 1 GiB (one window)"}},
                                               {{"openmp", 2, 0, ""}, {"openmp", 2, 1000, " tiled"}});
}

// How many of `sorted` are below k.
std::int64_t below(const std::vector<IsKey>& sorted, IsKey k) {
  return std::lower_bound(sorted.begin(), sorted.end(), k) - sorted.begin();
}

}  // namespace

TEST(IsProblem, ClassesAreNasAndBadOnesAreNamed) {
  const IsClass& a = pxq::is::is_class("a");
  EXPECT_EQ(a.name, 'A');
  EXPECT_EQ(a.total_keys(), 1 << 23);
  EXPECT_EQ(a.max_key(), 1 << 19);
  EXPECT_EQ(a.shift(), 9);
  EXPECT_EQ(pxq::is::is_class("S").buckets(), 512);
  EXPECT_THROW(pxq::is::is_class("D"), std::invalid_argument);
  try {
    pxq::is::is_class("Q");
    FAIL() << "class Q accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use S, W, A, B or C"), std::string::npos);
  }
}

TEST(IsProblem, SlicesCoverTheKeysAndTheKeysDoNotDependOnTheProcessCount) {
  const IsClass& s = pxq::is::is_class("S");
  const auto whole = pxq::is::generate_keys(s, pxq::is::key_slice(s.total_keys(), 1, 0));
  ASSERT_EQ(static_cast<std::int64_t>(whole.size()), s.total_keys());
  EXPECT_TRUE(std::all_of(whole.begin(), whole.end(), [&](IsKey k) { return k >= 0 && k < s.max_key(); }));
  for (int np : {2, 3, 4, 7}) {
    std::vector<IsKey> joined;
    std::int64_t next = 0;
    for (int r = 0; r < np; ++r) {
      const auto slice = pxq::is::key_slice(s.total_keys(), np, r);
      EXPECT_EQ(slice.first, next) << np << " processes, rank " << r;
      next += slice.count;
      const auto part = pxq::is::generate_keys(s, slice);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    EXPECT_EQ(joined, whole) << np << " processes";
  }
}

TEST(IsProblem, TheKeysDoNotDependOnTheThreadCount) {
  const IsClass& w = pxq::is::is_class("W");
  for (int np : {1, 3}) {
    const auto slice = pxq::is::key_slice(w.total_keys(), np, np - 1);
    const auto one = pxq::is::generate_keys(w, slice, 1);
    for (int threads : {2, 3, 8}) EXPECT_EQ(pxq::is::generate_keys(w, slice, threads), one) << threads << " threads";
  }
}

TEST(IsProblem, TheScanCountsEveryKeyAfterALargerOneAcrossTheThreadsShares) {
  const std::vector<IsKey> keys{1, 3, 2, 2, 5, 0, 7};
  for (int threads : {1, 2, 3, 7, 9}) {
    const auto scan = pxq::is::scan_keys(keys, threads);
    EXPECT_EQ(scan.sum, 20) << threads << " threads";
    EXPECT_EQ(scan.out_of_order, 2) << threads << " threads";  // 2 after 3, 0 after 5
  }
  EXPECT_EQ(pxq::is::scan_keys({}, 2).out_of_order, 0);
}

// The full verification's placing against a plain sort, split over segments and threads; and
// counts that do not fit the keys are found, never written past.
TEST(IsProblem, PlacingPutsEveryKeyAtItsRankWhateverTheThreadCount) {
  const IsClass& s = pxq::is::is_class("S");
  const auto keys = pxq::is::generate_keys(s, pxq::is::key_slice(s.total_keys(), 1, 0));
  auto sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  const IsKey lo = sorted.front(), hi = s.max_key() - 1;  // the range from the smallest key up
  std::vector<std::int32_t> counts(static_cast<std::size_t>(hi - lo + 1), 0);
  for (IsKey k : keys) ++counts[static_cast<std::size_t>(k - lo)];
  std::partial_sum(counts.begin(), counts.end(), counts.begin());
  const std::size_t half = keys.size() / 2;
  const std::vector<IsSegment> segs{{keys.data(), half}, {keys.data() + half, keys.size() - half}};
  for (int threads : {1, 2, 3, 8, 64}) {
    auto pop = counts;
    const auto placed = pxq::is::place_keys(segs, lo, pop, threads);
    EXPECT_EQ(placed.misplaced, 0) << threads << " threads";
    EXPECT_EQ(placed.keys, sorted) << threads << " threads";
    const auto scan = pxq::is::scan_keys(placed.keys, threads);
    EXPECT_EQ(scan.out_of_order, 0);
    EXPECT_EQ(scan.sum, std::accumulate(keys.begin(), keys.end(), std::int64_t{0}));
    // pop ends as each key's first rank.
    for (IsKey k : {sorted.front(), sorted[half], sorted.back()})
      EXPECT_EQ(pop[static_cast<std::size_t>(k - lo)], below(sorted, k)) << threads << " threads, key " << k;
  }
  for (int threads : {1, 4}) {
    // A count that loses a key, at the middle key: what it places is not every key in order.
    auto pop = counts;
    const auto mid = static_cast<std::size_t>(sorted[half] - lo);
    for (std::size_t i = mid; i < pop.size(); ++i) --pop[i];
    auto lost = pxq::is::place_keys(segs, lo, pop, threads);
    EXPECT_EQ(lost.misplaced, static_cast<std::int64_t>(keys.size())) << "counts that end short of the keys";
    EXPECT_TRUE(lost.keys.empty());
    // Counts that end right but give one key a slot its neighbour needs.
    pop = counts;
    --pop[mid];
    auto moved = pxq::is::place_keys(segs, lo, pop, threads);
    EXPECT_GT(moved.misplaced + pxq::is::scan_keys(moved.keys, threads).out_of_order, 0) << threads << " threads";
    // Counts that fall somewhere, and a key outside the range.
    pop = counts;
    pop[mid] = pop[mid + 1] + 1;
    EXPECT_EQ(pxq::is::place_keys(segs, lo, pop, threads).misplaced, static_cast<std::int64_t>(keys.size()));
    pop = counts;
    const std::vector<IsSegment> narrow{{keys.data(), keys.size()}};
    EXPECT_GT(pxq::is::place_keys(narrow, lo + 1, pop, threads).misplaced, 0) << "keys below the range";
  }
}

// NAS's listed ranks, shifted per iteration, are the ranks a plain sort gives after each
// iteration's change of two keys: this checks the keys, the changes and the shifts together,
// without the kernels.
TEST(IsProblem, TheTestKeysRankAsNasListsThemOnEveryIteration) {
  for (const char* name : {"S", "W"}) {
    const IsClass& c = pxq::is::is_class(name);
    const auto all = pxq::is::key_slice(c.total_keys(), 1, 0);
    auto keys = pxq::is::generate_keys(c, all);
    for (int it = 1; it <= pxq::is::kIsIterations; ++it) {
      pxq::is::alter_keys(c, all, keys.data(), it);
      auto sorted = keys;
      std::sort(sorted.begin(), sorted.end());
      for (int i = 0; i < pxq::is::kTestKeys; ++i) {
        const IsKey k = keys[static_cast<std::size_t>(c.test_index[static_cast<std::size_t>(i)])];
        EXPECT_EQ(below(sorted, k), pxq::is::expected_rank(c, i, it)) << name << " iteration " << it << " key " << i;
      }
    }
  }
}

TEST(IsProblem, BucketsSplitInOrderAndEveryRankGetsAboutItsShare) {
  const IsClass& c = pxq::is::is_class("S");
  const auto keys = pxq::is::generate_keys(c, pxq::is::key_slice(c.total_keys(), 1, 0));
  std::vector<std::int32_t> totals(static_cast<std::size_t>(c.buckets()), 0);
  for (IsKey k : keys) ++totals[static_cast<std::size_t>(k >> c.shift())];
  for (int np : {1, 2, 3, 4, 16}) {
    const auto split = pxq::is::split_buckets(totals.data(), c.buckets(), c.total_keys(), np);
    int next = 0;
    for (int r = 0; r < np; ++r) {
      ASSERT_FALSE(split.empty(r)) << np << " processes, rank " << r;
      EXPECT_EQ(split.first[static_cast<std::size_t>(r)], next);
      next = split.last[static_cast<std::size_t>(r)] + 1;
    }
    // NAS's split ends where the keys end: the buckets after the last rank's are empty.
    EXPECT_EQ(std::accumulate(totals.begin() + next, totals.end(), 0), 0) << np << " processes";
    EXPECT_GT(next, c.buckets() / 2) << np << " processes";
  }
  // More ranks than buckets: the last ones get none.
  const std::vector<std::int32_t> two{10, 10};
  const auto split = pxq::is::split_buckets(two.data(), 2, 20, 4);
  EXPECT_EQ(split.last[0], 0);
  EXPECT_EQ(split.first[1], 1);
  EXPECT_TRUE(split.empty(2) && split.empty(3));
}

TEST(IsKernels, BucketSortCountsAndGroupsKeysInOrder) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<IsKey> key(0, (1 << 12) - 1);
  std::vector<IsKey> keys(10007);
  for (auto& k : keys) k = key(gen);
  const int shift = 4, nb = 256;
  std::vector<std::int32_t> want(nb, 0);
  for (IsKey k : keys) ++want[static_cast<std::size_t>(k >> shift)];
  auto grouped = keys;
  std::stable_sort(grouped.begin(), grouped.end(), [&](IsKey a, IsKey b) { return (a >> shift) < (b >> shift); });
  for (const auto& ex : executors()) {
    const auto ops = pxq::kernels::make_is_ops(ex.backend, ex.threads, ex.tile_bytes);
    std::vector<std::int32_t> counts(nb, -1);
    std::vector<IsKey> out(keys.size(), -1);
    ops->bucket_sort(keys.data(), keys.size(), shift, nb, counts.data(), out.data());
    EXPECT_EQ(counts, want) << ex.name;
    EXPECT_EQ(out, grouped) << ex.name;
  }
}

// Keys of a range [min, max] from three senders, each grouped by bucket (as bucket_sort
// leaves them), one sender empty: every executor's populations are a plain sort's.
TEST(IsKernels, RankCountsEveryKeyOfTheRangeAcrossSegments) {
  const int shift = 5;
  const IsKey min = 3 << shift, max = (40 << shift) - 1;
  std::mt19937 gen(11);
  std::uniform_int_distribution<IsKey> key(min, max);
  std::vector<IsKey> keys;
  std::vector<IsSegment> segments;
  const std::vector<std::size_t> parts{900, 0, 2500};
  for (std::size_t n : parts) {
    std::vector<IsKey> part(n);
    for (auto& k : part) k = key(gen);
    std::stable_sort(part.begin(), part.end(), [&](IsKey a, IsKey b) { return (a >> shift) < (b >> shift); });
    keys.insert(keys.end(), part.begin(), part.end());
  }
  for (std::size_t s = 0, at = 0; s < parts.size(); at += parts[s++]) segments.push_back({keys.data() + at, parts[s]});
  auto sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  const auto range = static_cast<std::size_t>(max - min) + 1;
  for (const auto& ex : executors()) {
    const auto ops = pxq::kernels::make_is_ops(ex.backend, ex.threads, ex.tile_bytes);
    std::vector<std::int32_t> pop(range, -7);
    ops->rank(segments, min, max, shift, pop.data());
    std::size_t wrong = 0;
    for (std::size_t v = 0; v < range; ++v) wrong += pop[v] != below(sorted, min + static_cast<IsKey>(v) + 1);
    EXPECT_EQ(wrong, 0U) << ex.name << ": " << wrong << " of " << range << " populations differ";
  }
}

// A rank that exchanges with no one ranks its keys as they lie (no buckets): every executor's
// populations are a plain sort's, on a second call over another range (the threads' own
// histograms sized again), with fewer keys than threads, and with more keys of one value than a
// 16-bit counter holds.
TEST(IsKernels, RankUnsortedCountsKeysInAnyOrder) {
  std::mt19937 gen(13);
  struct Case {
    IsKey min, max;
    std::vector<IsKey> keys, sorted;
  };
  std::vector<Case> cases;
  for (const auto& [min, max, n] :
       {std::tuple<IsKey, IsKey, std::size_t>{0, 4095, 30011},
        std::tuple<IsKey, IsKey, std::size_t>{100, 100 + 777, 5000}, std::tuple<IsKey, IsKey, std::size_t>{0, 63, 1},
        // about 150,000 keys a value: 16-bit counters wrap (twice on one thread)
        std::tuple<IsKey, IsKey, std::size_t>{5, 6, 300000}}) {
    std::uniform_int_distribution<IsKey> key(min, max);
    Case c{min, max, std::vector<IsKey>(n), {}};
    for (auto& k : c.keys) k = key(gen);
    c.sorted = c.keys;
    std::sort(c.sorted.begin(), c.sorted.end());
    cases.push_back(c);
  }
  for (const auto& ex : executors()) {
    const auto ops = pxq::kernels::make_is_ops(ex.backend, ex.threads, ex.tile_bytes);
    for (int call = 0; call < 2; ++call)
      for (const auto& c : cases) {
        const auto range = static_cast<std::size_t>(c.max - c.min) + 1;
        std::vector<std::int32_t> pop(range, -7);
        ops->rank_unsorted(c.keys.data(), c.keys.size(), c.min, c.max, pop.data());
        std::size_t wrong = 0;
        for (std::size_t v = 0; v < range; ++v) wrong += pop[v] != below(c.sorted, c.min + static_cast<IsKey>(v) + 1);
        EXPECT_EQ(wrong, 0U) << ex.name << ", " << c.keys.size() << " keys, call " << call << ": " << wrong << " of "
                             << range << " differ";
      }
  }
}

TEST(IsKernels, WindowsFollowTheTileAndTheThreads) {
  const int shift = 9;  // 2 KiB of counters per bucket
  const IsKey max = (1024 << shift) - 1;
  EXPECT_EQ(pxq::kernels::make_is_ops("openmp", 1, 0)->window_buckets(0, max, shift), 0);  // NAS's one pass
  EXPECT_EQ(pxq::kernels::make_is_ops("openmp", 2, 0)->window_buckets(0, max, shift), 512);
  EXPECT_EQ(pxq::kernels::make_is_ops("openmp", 1, std::size_t{256} * 1024)->window_buckets(0, max, shift), 128);
  EXPECT_EQ(pxq::kernels::make_is_ops("openmp", 1, 100)->window_buckets(0, max, shift), 1);
  EXPECT_EQ(pxq::kernels::make_is_ops("openmp", 1, std::size_t{1} << 30)->window_buckets(0, max, shift), 1024);
}
