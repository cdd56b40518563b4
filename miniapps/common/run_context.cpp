// Layout checks and the layout/placement parts of every run record.
#include "pxq/common/run_context.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include "pxq/common/run_record.hpp"
#include "pxq/common/tile_profile.hpp"
#include "pxq/tiling/topology.hpp"

namespace pxq::common {

nlohmann::json parse_driver_info(const std::string& text) {
  if (text.empty()) return nlohmann::json::object();
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception&) {
    throw std::invalid_argument("--driver-info is not valid JSON");
  }
}

nlohmann::json read_driver_info_file(const std::string& path) {
  constexpr std::streamoff kMaxDriverInfoBytes = 64LL << 20;  // the driver's readers' cap on a record line
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("--driver-info-file " + path + ": cannot read it");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxDriverInfoBytes)
    throw std::invalid_argument("--driver-info-file " + path + ": larger than 64 MiB");
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  return parse_driver_info(text);
}

void check_layout(const CommonOptions& o, int ranks) {
  if (o.nodes > 0 && o.ranks_per_node > 0 && o.nodes * o.ranks_per_node != ranks)
    throw std::invalid_argument("layout " + std::to_string(o.nodes) + "x" + std::to_string(o.ranks_per_node) +
                                " needs " + std::to_string(o.nodes * o.ranks_per_node) + " ranks, but " +
                                std::to_string(ranks) + " were started");
}

LayoutFacts layout_facts(const CommonOptions& o, int ranks, const std::vector<comm::RankPlacement>& placement) {
  LayoutFacts f;
  f.observed_nodes = comm::count_nodes(placement);
  f.nodes = o.nodes > 0 ? o.nodes : f.observed_nodes;
  f.ranks_per_node = o.ranks_per_node > 0 ? o.ranks_per_node : ranks / std::max(1, f.observed_nodes);
  return f;
}

nlohmann::json layout_json(const CommonOptions& o, const LayoutFacts& f, int ranks, int threads) {
  return {{"nodes", f.nodes},
          {"ranks_per_node", f.ranks_per_node},
          {"threads", threads},
          {"ranks", ranks},
          {"workers", static_cast<long>(ranks) * threads},
          {"alloc", o.alloc},
          {"launcher", o.launcher},
          {"virtual_nodes", o.launcher == "virtual"},
          {"oversubscribed", o.oversubscribed},
          {"observed_nodes", f.observed_nodes}};
}

nlohmann::json variant_json(const Variant& v, const tiling::TileResolution& tile) {
  return {{"mode", v.mode},
          {"threads", v.threads},
          {"tile_bytes", tile.tiled ? tile.bytes : 0},
          {"tile_request", v.tile.text},
          {"tile_source", tile.source},
          {"tile_profile", tile.profile.empty() ? nlohmann::json(nullptr) : nlohmann::json(tile.profile)},
          {"backend", kernels::backend_name(v.backend)},
          {"fused", v.fused}};
}

nlohmann::json placement_json(const std::vector<comm::RankPlacement>& placement) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : placement) out.push_back(comm::to_json(p));
  return out;
}

nlohmann::json placement_summary(const std::vector<comm::RankPlacement>& placement, const nlohmann::json& driver) {
  // What the ranks of each node share, judged by each rank's first thread as observed.
  std::map<int, std::vector<tiling::Core>> by_node;
  for (const auto& r : placement) {
    if (r.threads.empty()) continue;
    const auto& t = r.threads.front();
    by_node[r.node].push_back(tiling::Core{t.cpu, t.cpu, t.l2, t.l3, t.package});
  }
  tiling::PairSharing sum;
  for (const auto& [node, cores] : by_node) {
    const auto s = tiling::pair_sharing(cores);
    sum.same_core += s.same_core;
    sum.same_l2 += s.same_l2;
    sum.same_l3 += s.same_l3;
    sum.same_package += s.same_package;
    sum.other_package += s.other_package;
  }
  nlohmann::json out = {{"requested", nullptr},
                        {"rank_pairs_on_a_node",
                         {{"same_core", sum.same_core},
                          {"same_l2", sum.same_l2},
                          {"same_l3", sum.same_l3},
                          {"same_package", sum.same_package},
                          {"other_package", sum.other_package}}},
                        {"as_planned", nullptr}};
  if (driver.contains("placement") && driver["placement"].is_object()) {
    const auto& want = driver["placement"];
    out["requested"] = want.value("mode", "");
    if (want.contains("cpus") && want["cpus"].is_array() && want["cpus"].size() == placement.size()) {
      bool same = true;
      for (std::size_t r = 0; r < placement.size() && same; ++r) {
        std::vector<int> seen, planned = want["cpus"][r].get<std::vector<int>>();
        for (const auto& t : placement[r].threads) seen.push_back(t.cpu);
        std::sort(seen.begin(), seen.end());
        std::sort(planned.begin(), planned.end());
        same = seen == planned;
      }
      out["as_planned"] = same;
    }
  }
  return out;
}

std::vector<std::string> layout_notes(const LayoutFacts& f) {
  std::vector<std::string> notes;
  if (f.observed_nodes != f.nodes)
    notes.push_back("launcher said " + std::to_string(f.nodes) + " node(s), observed " +
                    std::to_string(f.observed_nodes));
  return notes;
}

namespace {

void bcast_string(std::string& text, MPI_Comm comm) {
  int len = static_cast<int>(text.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  text.resize(static_cast<std::size_t>(len));
  MPI_Bcast(text.data(), len, MPI_CHAR, 0, comm);
}

// --tile auto on rank 0: no tile where the buffer already fits in the cache the share targets
// (tiling::untiled_reason), else the machine tile profile's tile for the kernel, else the share
// of the cache. Bytes 0: untiled.
struct AutoTile {
  std::size_t bytes = 0;
  std::string source, note;
  bool from_profile = false;  // the machine tile profile decided (rank 0's record names it)
};

AutoTile decide_auto_tile(const Variant& v, std::size_t buffer_bytes, const std::string& tile_kernel,
                          const tiling::AutoShare& share, const tiling::CacheInfo& caches,
                          const std::string& untiled_best) {
  AutoTile out;
  const std::string why_not =
      untiled_best.empty() ? tiling::untiled_reason(buffer_bytes, caches, share, v.threads) : untiled_best;
  if (!why_not.empty()) {
    out.source = kAutoUntiled;
    out.note = "auto runs untiled: " + why_not + " (--tile SIZE tiles it anyway)";
    return out;
  }
  const ProfileChoice profile = profile_tile(tile_profile_path(), tile_kernel, v.threads, this_machine(caches));
  out.note = profile.note;
  if (profile.bytes > 0 && buffer_bytes <= profile.untiled_up_to) {
    out.source = kAutoUntiled;
    out.note = "auto runs untiled: pxq tune's best tile of " + tile_kernel + " on " + std::to_string(profile.threads) +
               " thread(s), " + tiling::format_bytes(profile.bytes) + ", did not beat one window of a " +
               tiling::format_bytes(profile.untiled_up_to) + " buffer on this machine (" + fmt("%.2f", profile.gbs) +
               " against " + fmt("%.2f", profile.untiled_gbs) + " GB/s), and this buffer is no larger (" +
               tiling::format_bytes(buffer_bytes) + "; --tile SIZE tiles it anyway)";
    out.from_profile = true;
    return out;
  }
  if (profile.bytes > 0) {
    out.bytes = profile.bytes;
    out.source = "auto:profile";
    out.from_profile = true;
    return out;
  }
  const tiling::TileResolution rule = tiling::resolve_tile(v.tile, buffer_bytes, sizeof(double), caches, share);
  out.bytes = rule.bytes;
  out.source = rule.source;
  return out;
}

}  // namespace

tiling::TileResolution resolve_run_tile(const MpiWorld& w, const Variant& v, std::size_t buffer_bytes,
                                        const std::string& tile_kernel, const tiling::AutoShare& share,
                                        const tiling::CacheInfo& caches, const std::string& untiled_best) {
  if (v.tile.kind != tiling::TilePolicy::Kind::automatic) {
    tiling::TileResolution r = tiling::resolve_tile(v.tile, buffer_bytes, sizeof(double), caches, share);
    // A tile asked for that cuts a buffer already in the cache its share targets, or where the
    // proxy runs best untiled: say it cannot pay (the rule --tile auto follows), so a loss is
    // not read as the tiles' promise.
    std::string why = r.bytes > 0 && r.bytes < buffer_bytes
                          ? tiling::untiled_reason(buffer_bytes, caches, share, v.threads)
                          : std::string();
    if (r.tiled && !untiled_best.empty()) why = untiled_best;
    if (!why.empty())
      r.warning += (r.warning.empty() ? "" : "; ") + std::string("these tiles cannot pay here: ") + why +
                   "; its tiles can only add work (--tile auto runs it untiled)";
    return r;
  }
  // Rank 0 decides for every rank: the ranks' tiles must agree (their messages are cut by
  // them), even when the nodes differ. Its error (a damaged profile) fails all alike.
  AutoTile choice;
  root_check(w, [&] { choice = decide_auto_tile(v, buffer_bytes, tile_kernel, share, caches, untiled_best); });
  unsigned long long bytes = choice.bytes;
  MPI_Bcast(&bytes, 1, MPI_UNSIGNED_LONG_LONG, 0, w.comm);
  bcast_string(choice.source, w.comm);
  bcast_string(choice.note, w.comm);
  tiling::TilePolicy policy;  // off, or the bytes rank 0 chose
  if (bytes > 0) {
    policy.kind = tiling::TilePolicy::Kind::bytes;
    policy.bytes = static_cast<std::size_t>(bytes);
  }
  tiling::TileResolution r = tiling::resolve_tile(policy, buffer_bytes, sizeof(double), caches, share);
  r.source = choice.source;
  if (choice.from_profile) r.profile = tile_profile_path();  // rank 0's choice: its record names the profile
  if (!choice.note.empty()) r.warning += (r.warning.empty() ? "" : "; ") + choice.note;
  return r;
}

RunStart start_run(const MpiWorld& w, const CommonOptions& o, const Variant& v, std::size_t tile_buffer_bytes,
                   const std::string& tile_kernel, const tiling::AutoShare& auto_share,
                   const std::string& untiled_best) {
  RunStart s;
  check_layout(o, w.size);
  if (!o.declare_path.empty() && tile_kernel.empty())  // a probe: no proxy's phases, no tile kernel
    throw std::invalid_argument(
        "--declare: this program is a probe and declares no work; give --declare to a proxy "
        "(ring, cg, mg, ft, is)");
  // From a file only rank 0 reads (it writes the record, in the run's folder beside that file).
  if (o.driver_info_file.empty())
    s.driver = parse_driver_info(o.driver_info);
  else
    s.driver = w.rank == 0 ? read_driver_info_file(o.driver_info_file) : nlohmann::json::object();
  s.caches = tiling::discover_caches();
  s.tile = resolve_run_tile(w, v, tile_buffer_bytes, tile_kernel, auto_share, s.caches, untiled_best);
  // Fused sweeps go with the tile by default (--fuse auto): an auto tile that is no tile takes
  // them away too, so that run is its untiled twin.
  s.fused = v.fused && !(s.tile.source == kAutoUntiled && o.fuse == "auto");
  root_check(w, [&] {
    check_record_path(o.json_path);
    check_record_path(o.declare_path);
  });
  s.runtime = std::make_unique<kernels::ScopedRuntime>(v.backend, v.threads);
  omp_set_num_threads(v.threads);
  s.placement = comm::observe_placement(w.comm, v.threads);
  s.placement_summary = placement_summary(s.placement, s.driver);
  s.facts = layout_facts(o, w.size, s.placement);
  return s;
}

std::vector<std::string> start_notes(const RunStart& s) {
  std::vector<std::string> notes = layout_notes(s.facts);
  if (!s.tile.warning.empty()) notes.push_back("tile: " + s.tile.warning);
  const auto& summary = s.placement_summary;
  if (summary["as_planned"] == false)
    notes.push_back("placement: the ranks did not run on the cores " + summary["requested"].get<std::string>() +
                    " chose (see the record's placement)");
  if (s.driver.contains("placement") && s.driver["placement"].contains("warnings"))
    for (const auto& w : s.driver["placement"]["warnings"]) notes.push_back("placement: " + w.get<std::string>());
  return notes;
}

nlohmann::json record_frame(const std::string& app, bool passed, const CommonOptions& o, const Variant& v,
                            const RunStart& s, int ranks, const std::vector<std::string>& notes) {
  return {{"kind", record_kind(app)},
          {"schema", kRecordSchema},
          {"app", app},
          {"status", passed ? "ok" : "failed"},
          {"variant", variant_json(v, s.tile)},
          {"layout", layout_json(o, s.facts, ranks, v.threads)},
          {"placement", placement_json(s.placement)},
          {"placement_summary", s.placement_summary},
          {"notes", notes},
          {"context", machine_context(s.caches)},
          {"driver", s.driver}};
}

}  // namespace pxq::common
