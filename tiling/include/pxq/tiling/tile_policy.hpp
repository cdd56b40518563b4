// The tile policy: how big a chunk of a buffer each kernel processes at a time.
// Resolved in one place and recorded in every result; kernels only ask for their chunks.
#pragma once

#include <cstddef>
#include <string>

#include "pxq/tiling/cache_info.hpp"

namespace pxq::tiling {

// Parses a byte size: a positive integer with an optional K, M or G suffix (powers of
// 1024; a trailing "iB" or "B" is accepted: 256K, 256KiB, 1M, 4096). Throws
// std::invalid_argument with a message naming the bad text and the accepted forms.
std::size_t parse_bytes(const std::string& text);

// "256K" style text for a byte count (exact: falls back to plain bytes).
std::string format_bytes(std::size_t bytes);

// The smallest tile accepted: 8 cache lines (below that, loop overhead swamps every kernel).
inline constexpr std::size_t kMinTileBytes = 512;
// The largest byte size accepted anywhere: 1 PiB (anything larger is a typo).
inline constexpr unsigned long long kMaxBytes = 1ull << 50;

struct TilePolicy {
  enum class Kind { off, bytes, automatic };
  Kind kind = Kind::off;
  std::size_t bytes = 0;  // for Kind::bytes
  std::string text;       // as given
};

// "off", "auto" or a byte size (parse_bytes). "0" and negatives are errors.
TilePolicy parse_tile_policy(const std::string& text);

// auto = a share of one core's cache each kernel chooses (miniapps/apps.def): "L2/N", the
// per-core L2 over N (a tile, its neighbour in flight and what the kernel reads beside them
// stay in L2 together), or "L3/N", one core's part of the last-level cache over N (kernels
// whose sweeps gain from blocks longer than the L2 holds). L2/2 when the kernel names none.
inline constexpr std::size_t kAutoL2Divisor = 2;
struct AutoShare {
  int level = 2;                         // 2 or 3
  std::size_t divisor = kAutoL2Divisor;  // at least 1
  std::string text() const;              // "L2/2"
};
// "L2/4" or "L3/2" (the level 2 or 3, the divisor 1 to 1024); throws naming the form on
// anything else.
AutoShare parse_auto_share(const std::string& text);
// auto without any cache information.
inline constexpr std::size_t kAutoFallbackBytes = std::size_t{256} * 1024;

struct TileResolution {
  bool tiled = false;        // false: one chunk, the whole buffer
  std::size_t bytes = 0;     // tile bytes actually used (whole buffer when untiled)
  std::size_t elements = 0;  // tile length in elements
  std::string source;        // "off", "user", "auto:L2/N", "auto:L3/N", "auto:fallback", "auto:profile"
  std::string profile;       // the machine tile profile's path when source is auto:profile
  std::string warning;       // non-empty when the request was clamped or rounded
};

// Turns a policy into a tile for one buffer: tiles never exceed the buffer (clamped, with
// a warning) and are a whole number of elements (rounded down, at least one element). `auto`
// takes `share` of one core's cache: an L3 share without a known L3 takes the L2 with the
// same divisor, and without any cache information kAutoFallbackBytes.
TileResolution resolve_tile(const TilePolicy& policy, std::size_t buffer_bytes, std::size_t element_bytes,
                            const CacheInfo& caches, const AutoShare& share = AutoShare{});

// Whether `auto` should tile a buffer at all. Tiling cuts memory traffic only where the buffer
// does not already stay in the cache the app's share targets: one core's L2 for an L2 share
// (each of a rank's threads reads the buffer through its own core's L2), the rank's part of the
// L3 for an L3 share (one core's part times the rank's `threads`). Returns why tiling cannot pay
// ("the buffer (56K) fits in one core's L2 (1M)"), or "" when it may (or the cache is unknown).
std::string untiled_reason(std::size_t buffer_bytes, const CacheInfo& caches, const AutoShare& share, int threads);

}  // namespace pxq::tiling
