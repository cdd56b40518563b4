// The IS proxy's local kernels: what one rank computes in NAS IS's ranking, with no MPI.
// Keys are integers below 2^k; a key's bucket is key >> shift.
//
// Two steps per iteration, as NAS's MPI IS does them:
//   bucket_sort  count the keys per bucket and copy them out grouped by bucket, in order;
//   rank         after the exchange, the population of every key value of this rank's
//                range, accumulated: pop[k - min] = how many of the keys are <= k.
// NAS ranks by incrementing one counter per key over the whole range (one pass over the
// keys, random writes over the range's counters). The keys a rank receives are segments,
// one per sender, each grouped by bucket in ascending order (what bucket_sort left there),
// so the range splits into windows of whole buckets whose keys are found by binary search in
// every segment: a tile of bytes bounds a window's counters, and threads take windows. The
// arithmetic of each window is the same body; the windows are independent.
//
// A rank that exchanges with no one (one rank, untiled) needs no buckets: rank_unsorted counts
// its keys as they lie, as NAS's OpenMP IS does without buckets: each thread counts its share
// of the keys into a histogram of the whole range of its own (16-bit counters here), then the
// histograms are summed and accumulated range by range.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/executor.hpp"
#include "pxq/kernels/family.hpp"

namespace pxq::kernels {

using IsKey = std::int32_t;  // NAS IS classes S-C: keys below 2^23, counts below 2^31

// One sender's keys: keys[0, count) (the receive buffer's part, or the keys a rank keeps where
// its bucket sort left them).
struct IsSegment {
  const IsKey* keys = nullptr;
  std::size_t count = 0;
};

class IsOps {
 public:
  virtual ~IsOps() = default;
  // counts[b] = keys with key >> shift == b (b < nbuckets); the keys copied to `out`
  // grouped by bucket, each bucket's keys in their input order.
  virtual void bucket_sort(const IsKey* keys, std::size_t n, int shift, int nbuckets, std::int32_t* counts,
                           IsKey* out) const = 0;
  // pop[k - min] = how many keys of every segment are <= k, for k in [min, max]. min is the
  // first key of a bucket and max the last key of one; every key lies in [min, max]; each
  // segment is grouped by bucket in ascending order.
  virtual void rank(const std::vector<IsSegment>& segments, IsKey min, IsKey max, int shift,
                    std::int32_t* pop) const = 0;
  // pop[k - min] = how many of keys[0, n) are <= k, for k in [min, max], the keys in any
  // order (every key in [min, max]).
  virtual void rank_unsorted(const IsKey* keys, std::size_t n, IsKey min, IsKey max, std::int32_t* pop) const = 0;
  // How rank() splits [min, max]: the buckets per window (0: one pass over the whole range,
  // NAS's order).
  virtual int window_buckets(IsKey min, IsKey max, int shift) const = 0;
};

namespace is_body {

// Bucket counts of keys[begin, end).
inline void count_buckets(const IsKey* __restrict keys, std::size_t begin, std::size_t end, int shift,
                          std::int32_t* __restrict counts) {
  for (std::size_t i = begin; i < end; ++i) ++counts[keys[i] >> shift];
}

// Each key of keys[begin, end) to out[ptr[bucket]++].
inline void scatter(const IsKey* __restrict keys, std::size_t begin, std::size_t end, int shift,
                    std::int32_t* __restrict ptr, IsKey* __restrict out) {
  for (std::size_t i = begin; i < end; ++i) {
    const IsKey k = keys[i];
    out[ptr[k >> shift]++] = k;
  }
}

// pop[k - base] += 1 for each key of keys[begin, end).
inline void populate(const IsKey* __restrict keys, std::size_t begin, std::size_t end, IsKey base,
                     std::int32_t* __restrict pop) {
  for (std::size_t i = begin; i < end; ++i) ++pop[keys[i] - base];
}

// h[k - base] += 1 for each key of keys[begin, end), 16-bit counters (wrapping past 65,535).
inline void populate16(const IsKey* __restrict keys, std::size_t begin, std::size_t end, IsKey base,
                       std::uint16_t* __restrict h) {
  for (std::size_t i = begin; i < end; ++i) ++h[keys[i] - base];
}

// Running sum of pop[0, len), starting from `below` (the keys under the first value).
inline void accumulate(std::int32_t* pop, std::size_t len, std::int32_t below) {
  std::int32_t sum = below;
  for (std::size_t i = 0; i < len; ++i) pop[i] = sum += pop[i];
}

// The first position in a segment whose key's bucket is >= b (the segment is grouped by bucket).
inline std::size_t bucket_start(const IsSegment& s, int shift, IsKey b) {
  return static_cast<std::size_t>(
      std::partition_point(s.keys, s.keys + s.count, [=](IsKey k) { return (k >> shift) < b; }) - s.keys);
}

}  // namespace is_body

namespace detail {

// Both steps over chunks of work; a backend says only how chunks run on its threads.
class IsExecutor : public IsOps, protected ExecutorShape {
 public:
  using ExecutorShape::ExecutorShape;

  // Untiled with one thread: NAS's two passes. Otherwise each thread counts and scatters its
  // own contiguous chunk, at offsets that keep every bucket's keys in input order.
  void bucket_sort(const IsKey* keys, std::size_t n, int shift, int nbuckets, std::int32_t* counts,
                   IsKey* out) const override {
    const auto nb = static_cast<std::size_t>(nbuckets);
    const int chunks = threads_;
    const auto bound = [n, chunks](int c) {
      return n * static_cast<std::size_t>(c) / static_cast<std::size_t>(chunks);
    };
    std::vector<std::int32_t> local(nb * static_cast<std::size_t>(chunks), 0);
    for_each(chunks, [&](int c) { is_body::count_buckets(keys, bound(c), bound(c + 1), shift, &local[nb * c]); });
    std::int32_t start = 0;
    for (std::size_t b = 0; b < nb; ++b) {
      counts[b] = 0;
      for (int c = 0; c < chunks; ++c) {
        const std::int32_t here = local[nb * static_cast<std::size_t>(c) + b];
        local[nb * static_cast<std::size_t>(c) + b] = start;  // becomes chunk c's pointer for bucket b
        start += here;
        counts[b] += here;
      }
    }
    for_each(chunks, [&](int c) { is_body::scatter(keys, bound(c), bound(c + 1), shift, &local[nb * c], out); });
  }

  void rank(const std::vector<IsSegment>& segments, IsKey min, IsKey max, int shift, std::int32_t* pop) const override {
    const std::size_t range = static_cast<std::size_t>(max - min) + 1;
    const int per_window = window_buckets(min, max, shift);
    if (per_window == 0) {  // NAS: every key's counter, then one running sum
      std::fill(pop, pop + range, 0);
      for (const auto& s : segments) is_body::populate(s.keys, 0, s.count, min, pop);
      is_body::accumulate(pop, range, 0);
      return;
    }
    const IsKey first = min >> shift, buckets = static_cast<IsKey>(range >> shift);
    const int windows = static_cast<int>((buckets + per_window - 1) / per_window);
    // Where each window starts in each segment, and the keys below each window.
    std::vector<std::size_t> at(static_cast<std::size_t>(windows + 1) * segments.size());
    std::vector<std::int32_t> below(static_cast<std::size_t>(windows) + 1, 0);
    for (int w = 0; w <= windows; ++w)
      for (std::size_t s = 0; s < segments.size(); ++s) {
        const IsKey b = first + std::min<IsKey>(buckets, static_cast<IsKey>(w) * per_window);
        const std::size_t p = is_body::bucket_start(segments[s], shift, b);
        at[static_cast<std::size_t>(w) * segments.size() + s] = p;
        below[static_cast<std::size_t>(w)] += static_cast<std::int32_t>(p);
      }
    for_each(windows, [&](int w) {
      const std::size_t lo = static_cast<std::size_t>(w) * static_cast<std::size_t>(per_window) << shift;
      const std::size_t hi =
          std::min(range, (static_cast<std::size_t>(w) + 1) * static_cast<std::size_t>(per_window) << shift);
      std::fill(pop + lo, pop + hi, 0);
      for (std::size_t s = 0; s < segments.size(); ++s)
        is_body::populate(segments[s].keys, at[static_cast<std::size_t>(w) * segments.size() + s],
                          at[static_cast<std::size_t>(w + 1) * segments.size() + s], min, pop);
      is_body::accumulate(pop + lo, hi - lo, below[static_cast<std::size_t>(w)]);
    });
  }

  // Each thread counts its share of the keys into a histogram of its own of 16-bit counters
  // (kept between calls, first touched by its thread: half the bytes of NAS's int counters, so
  // twice the range stays in cache). Each thread then sums one part of the range over the
  // histograms with a running sum, and the parts after the first add the keys before them.
  // The histograms' sums are checked against the keys counted: a counter that wrapped (65,536
  // keys of one value on one thread) is found there, and then NAS's one pass counts them again.
  void rank_unsorted(const IsKey* keys, std::size_t n, IsKey min, IsKey max, std::int32_t* pop) const override {
    const std::size_t range = static_cast<std::size_t>(max - min) + 1;
    const int nt = threads_;
    const auto range_bound = [range, nt](int t) {
      return range * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
    };
    if (hist_range_ != range) {
      hist_.clear();
      for (int t = 0; t < nt; ++t) hist_.emplace_back(new std::uint16_t[range]);  // left for its thread to touch
      hist_range_ = range;
    }
    for_each(nt, [&](int t) {
      std::uint16_t* h = hist_[static_cast<std::size_t>(t)].get();
      std::fill(h, h + range, std::uint16_t{0});
      const std::size_t b = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
      is_body::populate16(keys, b, n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(nt), min, h);
    });
    std::vector<std::int64_t> part(static_cast<std::size_t>(nt) + 1, 0);
    for_each(nt, [&](int t) {
      std::int64_t sum = 0;
      for (std::size_t k = range_bound(t); k < range_bound(t + 1); ++k) {
        std::int32_t v = 0;
        for (const auto& h : hist_) v += h[k];
        sum += v;
        pop[k] = static_cast<std::int32_t>(sum);
      }
      part[static_cast<std::size_t>(t) + 1] = sum;
    });
    for (int t = 1; t <= nt; ++t) part[static_cast<std::size_t>(t)] += part[static_cast<std::size_t>(t) - 1];
    if (part.back() != static_cast<std::int64_t>(n)) {  // a counter wrapped
      std::fill(pop, pop + range, 0);
      is_body::populate(keys, 0, n, min, pop);
      is_body::accumulate(pop, range, 0);
      return;
    }
    for_each(nt, [&](int t) {
      const auto below = static_cast<std::int32_t>(part[static_cast<std::size_t>(t)]);
      if (below != 0)
        for (std::size_t k = range_bound(t); k < range_bound(t + 1); ++k) pop[k] += below;
    });
  }

  // A tile holds a window's counters (at least one bucket); untiled threads split the range
  // evenly; one untiled thread takes it whole.
  int window_buckets(IsKey min, IsKey max, int shift) const override {
    const auto buckets = static_cast<std::size_t>(max - min + 1) >> shift;
    const std::size_t bucket_bytes = sizeof(std::int32_t) << shift;
    if (tile_bytes_ > 0) return static_cast<int>(std::clamp<std::size_t>(tile_bytes_ / bucket_bytes, 1, buckets));
    if (threads_ == 1) return 0;
    return static_cast<int>((buckets + static_cast<std::size_t>(threads_) - 1) / static_cast<std::size_t>(threads_));
  }

 protected:
  // Runs work(c) for every c in [0, count) on this backend's threads.
  virtual void for_each(int count, const std::function<void(int)>& work) const = 0;

 private:
  // rank_unsorted's histograms, one a thread, of hist_range_ counters each.
  mutable std::vector<std::unique_ptr<std::uint16_t[]>> hist_;
  mutable std::size_t hist_range_ = 0;
};

}  // namespace detail

// The executor for a backend: `threads` threads; `tile_bytes` bytes of counters per window
// (0: untiled). Throws std::invalid_argument for a backend that does not run IS kernels.
inline constexpr char kIsFamily[] = "IS";
using IsFamily = Family<kIsFamily, std::unique_ptr<IsOps> (*)(int threads, std::size_t tile_bytes)>;

inline std::unique_ptr<IsOps> make_is_ops(const Backend& backend, int threads, std::size_t tile_bytes) {
  return IsFamily::of(backend)(threads, tile_bytes);
}

}  // namespace pxq::kernels
