// What every miniapp checks before it starts and writes into its record about where it ran:
// the driver's facts, the layout (requested versus observed) and the placement.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pxq/comm/placement.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/tiling/cache_info.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::common {

// --driver-info as JSON (an empty object when not given); std::invalid_argument otherwise.
nlohmann::json parse_driver_info(const std::string& text);
// The driver's JSON object from a file (--driver-info-file), at most kMaxDriverInfoBytes.
nlohmann::json read_driver_info_file(const std::string& path);

// std::invalid_argument when --nodes x --ranks-per-node does not match the ranks started.
void check_layout(const CommonOptions& o, int ranks);

struct LayoutFacts {
  int nodes = 1;           // as the driver said, else as observed
  int ranks_per_node = 1;  // as the driver said, else ranks / observed nodes
  int observed_nodes = 1;
};
LayoutFacts layout_facts(const CommonOptions& o, int ranks, const std::vector<comm::RankPlacement>& placement);

// The record's "layout" object.
nlohmann::json layout_json(const CommonOptions& o, const LayoutFacts& f, int ranks, int threads);

// The record's "variant" object: mode, threads, the tile as requested and as resolved.
nlohmann::json variant_json(const Variant& v, const tiling::TileResolution& tile);

// The record's "placement" array.
nlohmann::json placement_json(const std::vector<comm::RankPlacement>& placement);

// The record's "placement_summary": rank pairs of a node by what they share (as observed),
// the placement the driver asked for, and whether every rank ran on the cores it planned.
nlohmann::json placement_summary(const std::vector<comm::RankPlacement>& placement, const nlohmann::json& driver);

// Notes about the layout worth a line in the output (launcher and observation disagree).
std::vector<std::string> layout_notes(const LayoutFacts& f);

// What every miniapp does before its own set-up, in one place.
struct RunStart {
  nlohmann::json driver;
  tiling::CacheInfo caches;
  tiling::TileResolution tile;
  bool fused = false;  // the variant's fused sweeps, off where an auto tile came out untiled (--fuse auto)
  std::unique_ptr<kernels::ScopedRuntime> runtime;  // the backend's runtime, alive while this is
  std::vector<comm::RankPlacement> placement;
  nlohmann::json placement_summary;  // placement_summary(placement, driver), once
  LayoutFacts facts;
};

// Checks the layout and --driver-info, resolves the tile for a buffer of `tile_buffer_bytes`
// and checks the record path on rank 0 (every rank fails alike, before any record exists);
// then starts the backend's runtime with the variant's threads and observes the placement.
// `--tile auto`: see resolve_run_tile.
RunStart start_run(const MpiWorld& w, const CommonOptions& o, const Variant& v, std::size_t tile_buffer_bytes,
                   const std::string& tile_kernel, const tiling::AutoShare& auto_share = tiling::AutoShare{},
                   const std::string& untiled_best = {});

// The source of a tile that `--tile auto` left off: tiling cannot pay for this buffer here.
inline constexpr const char* kAutoUntiled = "auto:untiled";

// The run's tile for a buffer of `buffer_bytes`. `--tile auto` runs untiled where the buffer
// already fits in the cache `share` targets (tiling::untiled_reason: source kAutoUntiled, the
// reason in the warning), else takes the machine tile profile's best tile for `tile_kernel`
// (the name in pxq-bench-tiling) when the profile was made on rank 0's machine, else `share` of
// a core's cache (the app's share, apps.def); rank 0 decides for every rank (collective).
// `untiled_best`: the proxy's reason this run goes best untiled whatever the caches say
// (Proxy::untiled_best; empty: the caches decide): auto then runs untiled, and a tile asked
// for is warned of it.
tiling::TileResolution resolve_run_tile(const MpiWorld& w, const Variant& v, std::size_t buffer_bytes,
                                        const std::string& tile_kernel, const tiling::AutoShare& share,
                                        const tiling::CacheInfo& caches, const std::string& untiled_best = {});

// The notes every run starts with: the layout's (launcher and observation disagree) and the
// tile's (clamped, rounded, or a tile profile that does not apply), as "tile: ...".
std::vector<std::string> start_notes(const RunStart& s);

// The keys every run record has (schema, app, status, variant, layout, placement, notes,
// context, driver); the app adds its own (size, time, metrics, verification, ...).
nlohmann::json record_frame(const std::string& app, bool passed, const CommonOptions& o, const Variant& v,
                            const RunStart& s, int ranks, const std::vector<std::string>& notes);

}  // namespace pxq::common
