// The machine tile profile `pxq tune` writes: the best tile per kernel and thread count,
// measured on one machine. `--tile auto` uses it on that machine, and the cache-size rule
// anywhere else. No MPI here.
#pragma once

#include <cstddef>
#include <string>

#include "pxq/tiling/cache_info.hpp"

namespace pxq::common {

inline constexpr const char* kTileProfileKind = "tile-profile";
inline constexpr int kTileProfileSchema = 2;
// The version 1 form, still read: {"schema": "pxq-tile-profile/1", ...}.
inline constexpr const char* kTileProfileLegacy = "pxq-tile-profile/1";

// What makes two machines the same for a tile: host name, CPU model and cache sizes.
struct MachineIdentity {
  std::string host;
  std::string cpu_model;
  std::size_t l1d = 0, l2 = 0, l3 = 0;
};

std::string host_name();
std::string cpu_model();  // /proc/cpuinfo's model name, "unknown" without one
MachineIdentity this_machine(const tiling::CacheInfo& caches);

// Where the profile lives: $PXQ_TILE_PROFILE, else $XDG_CONFIG_HOME/pxq/tiles.json, else
// $HOME/.config/pxq/tiles.json; "" when none of them is set.
std::string tile_profile_path();

struct ProfileChoice {
  std::size_t bytes = 0;  // 0: the profile gives no tile for this run
  std::string note;       // why not, when there is a profile but it does not apply
  // Where `pxq tune` weighed the best tile against one window of its benchmark's buffer and the
  // tile did not win: that buffer's bytes (auto runs buffers up to it untiled), its thread
  // count, and the two medians. 0: tiling paid there, or was not weighed.
  std::size_t untiled_up_to = 0;
  int threads = 0;
  double gbs = 0, untiled_gbs = 0;
};

// The profile's best tile for `kernel` at `threads` threads (the entry with the nearest
// thread count) when the profile at `path` was made on `me`. No file: bytes 0 and no note.
// Another machine, or no entry for the kernel: bytes 0 and a note. A file that is not a
// valid profile: std::invalid_argument naming the file, the problem and the fix.
ProfileChoice profile_tile(const std::string& path, const std::string& kernel, int threads, const MachineIdentity& me);

}  // namespace pxq::common
