// Variant resolution: the mode preset and the two axes (threads, tile), checked together.
#include "pxq/common/options.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "pxq/common/apps.hpp"

namespace pxq::common {

void add_common_options(pxq::cli::App& app, CommonOptions& o) {
  app.add_option("--mode", o.mode, "Variant preset: flat, hybrid or tiled")->member({"flat", "hybrid", "tiled"});
  app.add_option("--threads", o.threads, "OpenMP threads per rank (workers per rank)")->range(1, 4096);
  app.add_option("--tile", o.tile, "Tile size: off, auto, or bytes such as 256K");
  std::vector<std::string> names;
  for (const auto& b : kernels::backends()) names.push_back(b.name);
  app.add_option("--backend", o.backend, "Kernel backend: " + kernels::backend_names(" or "))->member(names);
  app.add_option("--fuse", o.fuse, "Fuse sweeps into one pass: auto (when tiled), on or off")
      ->member({"auto", "on", "off"});
  app.add_option("--json", o.json_path, "Append the run record (JSON line) to this file");
  app.add_option("--declare", o.declare_path,
                 "Set up only and append this configuration's declared work (one JSON line) to this file: "
                 "nothing is timed, iterated or verified (what pxq advise predicts from)");
  app.add_option("--nodes", o.nodes, "Nodes the launcher used (checked against observation)")->range(1, 1 << 20);
  app.add_option("--ranks-per-node", o.ranks_per_node, "Ranks per node the launcher used")->range(1, 1 << 20);
  app.add_option("--alloc", o.alloc,
                 "Rank allocation used by the launcher: block, cyclic or order (the driver's --rank-order)")
      ->member({"block", "cyclic", "order"});
  app.add_option("--launcher", o.launcher, "Launcher that started this run (for the record)");
  app.add_flag("--oversubscribed", o.oversubscribed, "The launcher allowed oversubscription");
  auto* inline_info = app.add_option("--driver-info", o.driver_info, "JSON object from the pxq driver (recorded)");
  app.add_option("--driver-info-file", o.driver_info_file,
                 "A file holding that JSON object (read by rank 0: what the driver hands over when it is too "
                 "large for one argument)")
      ->excludes(inline_info);
  app.add_option("--counters", o.counters,
                 "Count the timed iterations: off, hw (PAPI or perf_event), sim (when run under pxq's cache "
                 "simulator: pxq run --counters sim)")
      ->member({"off", "hw", "sim"});
}

std::string mode_of(int threads, bool tiled) {
  if (tiled) return "tiled";
  return threads > 1 ? "hybrid" : "flat";
}

Variant resolve_variant(const CommonOptions& o) {
  Variant v;
  v.backend = kernels::parse_backend(o.backend);
  if (!kernels::backend_available(v.backend))
    throw std::invalid_argument("--backend " + o.backend + ": " + kernels::backend_missing(v.backend));
  int threads = o.threads;
  std::string tile = o.tile;
  if (o.mode == "flat") {
    if (threads > 1)
      throw std::invalid_argument("--mode flat means 1 thread per rank, but --threads " + std::to_string(threads) +
                                  " was given: drop --mode, or use --mode hybrid");
    if (!tile.empty() && tile != "off")
      throw std::invalid_argument("--mode flat is untiled, but --tile " + tile + " was given: use --mode tiled");
    threads = 1;
    tile = "off";
  } else if (o.mode == "hybrid") {
    if (!tile.empty() && tile != "off")
      throw std::invalid_argument("--mode hybrid is untiled, but --tile " + tile +
                                  " was given: use --mode tiled --threads T");
    if (threads == 0) threads = 2;
    if (threads < 2) throw std::invalid_argument("--mode hybrid needs --threads of 2 or more (1 thread is flat)");
    tile = "off";
  } else if (o.mode == "tiled") {
    if (tile == "off") throw std::invalid_argument("--mode tiled with --tile off: give a tile size or auto");
    if (tile.empty()) tile = "256K";
  }
  if (threads == 0) threads = 1;
  if (tile.empty()) tile = "off";
  v.threads = threads;
  v.tile = tiling::parse_tile_policy(tile);
  v.mode = mode_of(threads, v.tile.kind != tiling::TilePolicy::Kind::off);
  v.fused = o.fuse == "on" || (o.fuse == "auto" && v.tile.kind != tiling::TilePolicy::Kind::off);
  return v;
}

void add_nas_options(pxq::cli::App& cli, NasOptions& o, const std::string& app, const std::string& quiet_help) {
  cli.add_option("--class", o.cls, "NAS problem class: " + class_list(app_info(app).classes));
  cli.add_flag("--quiet", o.quiet, quiet_help);
}

void add_app_choice(pxq::cli::App& cli, std::string& target, const std::string& app, const std::string& option) {
  const auto values = choice_values(app, option);
  target = values.front();
  std::string what;
  for (const auto& c : app_choices())
    if (app == c.app && option == c.option) what = c.what;
  cli.add_option("--" + option, target, what)->member(values);
}

}  // namespace pxq::common
