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

}  // namespace pxq::tiling
