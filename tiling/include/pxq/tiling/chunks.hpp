// Chunked iteration: walk [0, n) in tiles of `tile` elements, the last one possibly short.
// The compute-then-hand-off pipeline is the tiling idea itself: each chunk gets all of its
// work while it is in cache, then is handed on (sent, stored) before the next is touched.
#pragma once

#include <algorithm>
#include <cstddef>

namespace pxq::tiling {

inline std::size_t tile_count(std::size_t n, std::size_t tile) { return tile == 0 ? 0 : (n + tile - 1) / tile; }

// fn(begin, end) for each tile in order.
template <class Fn>
void for_each_tile(std::size_t n, std::size_t tile, Fn&& fn) {
  for (std::size_t begin = 0; begin < n; begin += tile) fn(begin, std::min(n, begin + tile));
}

// compute(begin, end) then hand_off(begin, end), tile by tile.
template <class Compute, class HandOff>
void pipeline(std::size_t n, std::size_t tile, Compute&& compute, HandOff&& hand_off) {
  for_each_tile(n, tile, [&](std::size_t b, std::size_t e) {
    compute(b, e);
    hand_off(b, e);
  });
}

// ---- tile geometry: how a tile in bytes becomes a kernel's unit of work ----

// Rows whose working set fits the tile: one row is `row_bytes` in each of `streams` streams
// (the arrays a sweep reads and writes together); at least 1, at most `rows`.
inline int rows_per_tile(std::size_t tile_bytes, std::size_t row_bytes, int streams, int rows) {
  const std::size_t per_row = std::max<std::size_t>(1, row_bytes) * static_cast<std::size_t>(std::max(1, streams));
  return static_cast<int>(
      std::clamp<std::size_t>(tile_bytes / per_row, 1, static_cast<std::size_t>(std::max(1, rows))));
}

// The largest power of two k (at least 1) whose working set bytes_of(k) fits the tile.
template <class BytesOf>
int power_of_two_fitting(std::size_t tile_bytes, BytesOf&& bytes_of) {
  int k = 1;
  while (bytes_of(2 * k) <= tile_bytes) k *= 2;
  return k;
}

}  // namespace pxq::tiling
