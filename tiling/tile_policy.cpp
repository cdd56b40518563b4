// Tile policy parsing and resolution: the single place where a tile size is decided.
#include "pxq/tiling/tile_policy.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace pxq::tiling {
namespace {

const char* kForms = "use a positive size such as 4096, 64K, 256K, 1M or 2G";

// A size for a sentence: exact where it is a whole number of K ("512K"), else to a tenth ("54.7K").
std::string approx_bytes(std::size_t bytes) {
  if (bytes % 1024 == 0) return format_bytes(bytes);
  const bool mega = bytes >= std::size_t{1} << 20;
  char text[32];
  std::snprintf(text, sizeof(text), mega ? "%.1fM" : "%.1fK", static_cast<double>(bytes) / (mega ? 1048576.0 : 1024.0));
  return text;
}

}  // namespace

std::size_t parse_bytes(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    throw std::invalid_argument("invalid size '" + text + "': " + kForms);
  std::size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("invalid size '" + text + "': " + kForms);
  }
  std::string suffix = text.substr(pos);
  for (auto& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  unsigned long long mult = 1;
  if (suffix == "" || suffix == "B") {
    mult = 1;
  } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    mult = 1ull << 10;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    mult = 1ull << 20;
  } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
    mult = 1ull << 30;
  } else {
    throw std::invalid_argument("invalid size '" + text + "' (unknown suffix '" + text.substr(pos) + "'): " + kForms);
  }
  if (v == 0) throw std::invalid_argument("invalid size '" + text + "': must be > 0; " + kForms);
  if (v > kMaxBytes / mult)
    throw std::invalid_argument("invalid size '" + text + "': too large (at most 1024T, a typo otherwise)");
  return static_cast<std::size_t>(v * mult);
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"", "K", "M", "G"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

TilePolicy parse_tile_policy(const std::string& text) {
  TilePolicy p;
  p.text = text;
  if (text == "off" || text == "none") {
    p.kind = TilePolicy::Kind::off;
  } else if (text == "auto") {
    p.kind = TilePolicy::Kind::automatic;
  } else {
    try {
      p.bytes = parse_bytes(text);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("tile: ") + e.what() + ", or off, or auto");
    }
    if (p.bytes < kMinTileBytes)
      throw std::invalid_argument("tile " + text + ": smaller than " + std::to_string(kMinTileBytes) +
                                  " bytes (8 cache lines), where loop overhead swamps the kernel: use " +
                                  std::to_string(kMinTileBytes) + " or more (256K is the reference)");
    p.kind = TilePolicy::Kind::bytes;
  }
  return p;
}

std::string AutoShare::text() const { return "L" + std::to_string(level) + "/" + std::to_string(divisor); }

AutoShare parse_auto_share(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument(
        "auto tile share '" + text +
        "': expected L2/N or L3/N, a share of one core's L2 or last-level cache (N 1 to 1024)");
  };
  if (text.size() < 4 || text[0] != 'L' || (text[1] != '2' && text[1] != '3') || text[2] != '/') throw bad();
  const std::string n = text.substr(3);
  if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) throw bad();
  AutoShare a;
  a.level = text[1] - '0';
  a.divisor = static_cast<std::size_t>(std::stoul(n));
  if (a.divisor < 1 || a.divisor > 1024) throw bad();
  return a;
}

TileResolution resolve_tile(const TilePolicy& policy, std::size_t buffer_bytes, std::size_t element_bytes,
                            const CacheInfo& caches, const AutoShare& share) {
  if (element_bytes == 0) throw std::invalid_argument("element size must be > 0");
  if (buffer_bytes < element_bytes)
    throw std::invalid_argument("buffer of " + std::to_string(buffer_bytes) + " bytes holds no element of " +
                                std::to_string(element_bytes) + " bytes");
  TileResolution r;
  std::size_t want = 0;
  switch (policy.kind) {
    case TilePolicy::Kind::off:
      r.tiled = false;
      r.source = "off";
      r.bytes = buffer_bytes - buffer_bytes % element_bytes;
      r.elements = buffer_bytes / element_bytes;
      return r;
    case TilePolicy::Kind::bytes:
      want = policy.bytes;
      r.source = "user";
      break;
    case TilePolicy::Kind::automatic: {
      const std::size_t divisor = std::max<std::size_t>(1, share.divisor);
      // One core's part of a shared L3 (shared_by counts the processing units that share it).
      const std::size_t l3 = caches.l3.bytes / static_cast<std::size_t>(std::max(1, caches.l3.shared_by));
      if (share.level == 3 && l3 > 0) {
        want = std::max(kMinTileBytes, l3 / divisor);
        r.source = "auto:L3/" + std::to_string(divisor);
      } else if (caches.l2.bytes > 0) {
        want = std::max(kMinTileBytes, caches.l2.bytes / divisor);
        r.source = "auto:L2/" + std::to_string(divisor);
      } else {
        want = kAutoFallbackBytes;
        r.source = "auto:fallback";
      }
      break;
    }
  }
  r.tiled = true;
  if (want > buffer_bytes) {
    r.warning = "tile " + format_bytes(want) + " is larger than the buffer (" + format_bytes(buffer_bytes) +
                "): clamped to the buffer";
    want = buffer_bytes;
  }
  std::size_t elems = want / element_bytes;
  if (elems == 0) {
    r.warning = "tile " + std::to_string(want) + " B is smaller than one element (" + std::to_string(element_bytes) +
                " B): rounded up to one element";
    elems = 1;
  } else if (want % element_bytes != 0) {
    r.warning = "tile " + std::to_string(want) + " B is not a whole number of " + std::to_string(element_bytes) +
                "-byte elements: rounded down to " + std::to_string(elems * element_bytes) + " B";
  }
  r.elements = elems;
  r.bytes = elems * element_bytes;
  return r;
}

std::string untiled_reason(std::size_t buffer_bytes, const CacheInfo& caches, const AutoShare& share, int threads) {
  const std::size_t per_core_l3 = caches.l3.bytes / static_cast<std::size_t>(std::max(1, caches.l3.shared_by));
  const bool l3 = share.level == 3 && per_core_l3 > 0;
  const std::size_t room = l3 ? per_core_l3 * static_cast<std::size_t>(std::max(1, threads)) : caches.l2.bytes;
  if (room == 0 || buffer_bytes > room) return "";
  const std::string where =
      l3 ? (threads > 1 ? "the L3 part of its " + std::to_string(threads) + " cores" : "one core's part of the L3")
         : "one core's L2";
  return "the buffer it would cut (" + approx_bytes(buffer_bytes) + ") fits in " + where + " (" + approx_bytes(room) +
         "), so tiling cannot cut memory traffic";
}

}  // namespace pxq::tiling
