// The run record: one JSON object per line, appended atomically by rank 0.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "pxq/tiling/cache_info.hpp"

namespace pxq::common {

// Every record names its kind ("run", "probe", "profile", "tile-profile", "study") and the
// version of that kind's schema (schemas/<kind>.schema.json, docs/RESULTS.md). Version 1
// records (before "kind" existed) are still read.
inline constexpr int kRecordSchema = 2;

// "probe" for the probes' records (app "probe-..."), "run" for the proxies'.
inline std::string record_kind(const std::string& app) { return app.rfind("probe-", 0) == 0 ? "probe" : "run"; }

// Throws std::runtime_error naming the path and the fix when a record could not be
// appended there (directory missing or not writable, file not writable). Creates nothing.
void check_record_path(const std::string& path);

// Appends `record` as one line with a single write under an exclusive lock, so concurrent
// writers never interleave and a reader never sees half a line.
void append_record(const std::string& path, const nlohmann::json& record);

// Machine and software context: host, CPU model, caches, compiler, MPI library, Kokkos,
// git commit, UTC date.
nlohmann::json machine_context(const tiling::CacheInfo& caches);

}  // namespace pxq::common
