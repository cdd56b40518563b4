// pxq-envinfo: what pxq sees on this machine, as one JSON object (read by `pxq env`):
// packages, cores, PUs, caches, compiler, MPI library, Kokkos and its backends.
// `pxq-envinfo place ...` prints the cores a placement mode chooses (for `pxq run --placement`).
#include <hwloc.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pxq/comm/msgmodel.hpp"
#include "pxq/common/apps.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/family.hpp"
#include "pxq/probes/kinds.hpp"
#include "pxq/tiling/cache_info.hpp"
#include "pxq/tiling/tile_policy.hpp"
#include "pxq/tiling/topology.hpp"

namespace {

nlohmann::json sharing_json(const pxq::tiling::PairSharing& s) {
  return {{"same_core", s.same_core},
          {"same_l2", s.same_l2},
          {"same_l3", s.same_l3},
          {"same_package", s.same_package},
          {"other_package", s.other_package}};
}

// The profiler's coarse message-size ranges: name and largest size (null: open above).
nlohmann::json message_ranges() {
  nlohmann::json out = nlohmann::json::array();
  const auto& names = pxq::comm::coarse_range_names();
  const auto& uppers = pxq::comm::coarse_range_uppers();
  for (std::size_t k = 0; k < names.size(); ++k)
    out.push_back({{"name", names[k]}, {"upper_bytes", k < uppers.size() ? nlohmann::json(uppers[k]) : nullptr}});
  return out;
}

// The access kinds of the roofline's ceilings (pxq/probes/kinds.hpp), their kernels left out.
nlohmann::json access_kinds() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : pxq::probes::kinds()) {
    out.push_back({{"name", k.name}, {"unit", k.unit}, {"size", k.size}, {"what", k.what}});
    if (std::string(k.unit) == "gflops") {  // a small instance: the ratio does not depend on size
      const auto kernel = k.make(std::size_t{64} << 10);
      out.back()["memory_bytes_per_flop"] = kernel->memory_bytes() / kernel->flops();
    }
  }
  return out;
}

// The registries the driver and the tests read instead of keeping copies.
int print_registry() {
  nlohmann::json apps = nlohmann::json::array(), backends = nlohmann::json::array();
  for (const auto& a : pxq::common::apps()) {
    std::vector<std::string> classes, kernels;
    for (const char* c = a.classes; *c; ++c) classes.emplace_back(1, *c);
    std::istringstream words(a.bench_kernels);
    for (std::string k; words >> k;) kernels.push_back(k);
    apps.push_back({{"name", a.name},
                    {"binary", std::string("pxq-") + a.name},
                    {"classes", classes},
                    {"tile_kernel", a.tile_kernel},
                    {"auto_share", pxq::tiling::parse_auto_share(a.auto_share).text()},
                    {"bench_kernels", kernels},
                    {"headline", a.headline},
                    {"unit", a.unit},
                    {"what", a.what},
                    {"choices", nlohmann::json::array()}});
  }
  for (const auto& c : pxq::common::app_choices()) {
    auto& app = *std::find_if(apps.begin(), apps.end(), [&](const nlohmann::json& a) { return a["name"] == c.app; });
    const auto values = pxq::common::choice_values(c.app, c.option);
    app["choices"].push_back({{"name", c.option}, {"values", values}, {"default", values.front()}, {"what", c.what}});
  }
  for (const auto& b : pxq::kernels::backends())
    backends.push_back({{"name", b.name},
                        {"runtime", b.runtime},
                        {"version", b.version},
                        {"available", b.available},
                        {"enable", b.enable}});
  nlohmann::json families = nlohmann::json::array();  // which backends run each kernel family
  for (const auto& f : pxq::kernels::families()) families.push_back({{"name", f.name}, {"backends", f.backends}});
  const nlohmann::json j = {{"apps", apps},
                            {"backends", backends},
                            {"kernel_families", families},
                            {"modes", {"flat", "hybrid", "tiled"}},
                            {"allocations", {"block", "cyclic"}},
                            {"message_ranges", message_ranges()},
                            {"access_kinds", access_kinds()},
                            {"min_tile_bytes", pxq::tiling::kMinTileBytes},
                            {"record_schema", pxq::common::kRecordSchema}};
  std::puts(j.dump(1).c_str());
  return 0;
}

// The miniapps' own resolution of a variant and of byte sizes: {"variant": ..., "bytes": [...]}
// or {"error": message}; exit 2 on bad input, as the miniapps.
int print_resolution(const pxq::common::CommonOptions& o, const std::vector<std::string>& sizes) {
  nlohmann::json j;
  try {
    if (!o.mode.empty() && o.mode != "flat" && o.mode != "hybrid" && o.mode != "tiled")
      throw std::invalid_argument("unknown mode '" + o.mode + "': use flat, hybrid or tiled");
    nlohmann::json bytes = nlohmann::json::array();
    for (const auto& s : sizes) bytes.push_back(pxq::tiling::parse_bytes(s));
    j["bytes"] = bytes;
    const auto v = pxq::common::resolve_variant(o);
    j["variant"] = {
        {"mode", v.mode},
        {"threads", v.threads},
        {"backend", pxq::kernels::backend_name(v.backend)},
        {"fused", v.fused},
        {"tile", v.tile.kind == pxq::tiling::TilePolicy::Kind::off         ? std::string("off")
                 : v.tile.kind == pxq::tiling::TilePolicy::Kind::automatic ? std::string("auto")
                                                                           : pxq::tiling::format_bytes(v.tile.bytes)}};
  } catch (const std::invalid_argument& e) {
    std::puts(nlohmann::json{{"error", e.what()}}.dump().c_str());
    return 2;
  }
  std::puts(j.dump().c_str());
  return 0;
}

int place(const std::string& mode, int nodes, int ranks_per_node, int threads, bool virtual_nodes,
          const std::vector<int>& cpus, const std::string& xml) {
  try {
    const auto topo = xml.empty() ? pxq::tiling::this_topology() : pxq::tiling::topology_from_xml(xml);
    const auto plan = pxq::tiling::plan_placement(topo, mode, nodes, ranks_per_node, threads, virtual_nodes, cpus);
    nlohmann::json out = {{"mode", plan.mode},
                          {"topology", topo.source},
                          {"packages", topo.packages},
                          {"warnings", plan.warnings},
                          {"nodes", nlohmann::json::array()}};
    for (std::size_t k = 0; k < plan.nodes.size(); ++k) {
      nlohmann::json ranks = nlohmann::json::array();
      for (const auto& r : plan.nodes[k].ranks) {
        nlohmann::json cores = nlohmann::json::array(), os = nlohmann::json::array();
        for (const auto& c : r) {
          cores.push_back(c.index);
          os.push_back(c.cpu);
        }
        ranks.push_back({{"cores", cores}, {"cpus", os}});
      }
      out["nodes"].push_back({{"node", k}, {"ranks", ranks}, {"sharing", sharing_json(plan.nodes[k].sharing)}});
    }
    std::puts(out.dump(1).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "pxq-envinfo: error: " << e.what() << "\n";
    return 2;
  }
}

int run(int argc, char** argv) {
  pxq::cli::App app{"pxq-envinfo: what pxq sees on this machine (JSON)"};
  auto* pl = app.add_subcommand("place", "the cores a placement mode chooses for a layout (JSON)");
  std::string mode = "packed", xml;
  int nodes = 1, rpn = 1, threads = 1;
  bool virtual_nodes = false;
  std::vector<int> cpus;
  pl->add_option("--mode", mode, "packed, spread or custom")->required();
  pl->add_option("--nodes", nodes, "nodes");
  pl->add_option("--ranks-per-node", rpn, "ranks per node");
  pl->add_option("--threads", threads, "threads (cores) per rank");
  pl->add_flag("--virtual", virtual_nodes, "the nodes are virtual nodes sharing this machine");
  pl->add_option("--cpus", cpus, "custom: OS cpu numbers, one per worker")->delimiter(',');
  pl->add_option("--topology", xml, "an hwloc XML topology instead of this machine");
  auto* reg = app.add_subcommand("registry", "the registries: apps, backends, modes and allocations, as JSON");
  auto* res = app.add_subcommand("resolve", "a variant and byte sizes as the miniapps resolve them, as JSON");
  pxq::common::CommonOptions common;
  std::vector<std::string> sizes;
  res->add_option("--mode", common.mode, "flat, hybrid or tiled");
  res->add_option("--threads", common.threads, "threads per rank (0: from the mode)");
  res->add_option("--tile", common.tile, "off, auto or a size");
  res->add_option("--backend", common.backend, "a backend");
  res->add_option("--fuse", common.fuse, "auto, on or off");
  res->add_option("--bytes", sizes, "byte sizes to parse, e.g. 256K")->delimiter(',');
  PXQ_CLI_PARSE(app, argc, argv);
  if (pl->parsed()) return place(mode, nodes, rpn, threads, virtual_nodes, cpus, xml);
  if (reg->parsed()) return print_registry();
  if (res->parsed()) return print_resolution(common, sizes);

  hwloc_topology_t topo;
  int packages = 0, cores = 0, pus = 0, numa = 0;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_topology_destroy(topo);
  }
  const auto caches = pxq::tiling::discover_caches();
  nlohmann::json j = pxq::common::machine_context(caches);
  j["packages"] = packages;
  j["cores"] = cores;
  j["pus"] = pus;
  j["numa_nodes"] = numa;
  j["hwloc_api"] = HWLOC_API_VERSION;
  j["backends"] = nlohmann::json::array();
  for (const auto& b : pxq::kernels::available_backends()) j["backends"].push_back(pxq::kernels::backend_name(b));
  std::puts(j.dump(1).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return pxq::cli::guarded_main("pxq-envinfo", run, argc, argv); }
