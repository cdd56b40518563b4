// pxq-envinfo: what pxq sees on this machine, as one JSON object (read by `pxq env`):
// packages, cores, PUs, caches, compiler, MPI library, Kokkos and its backends.
// `pxq-envinfo place ...` prints the cores a placement mode chooses (for `pxq run --placement`).
#include <hwloc.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "pxq/common/run_record.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/tiling/cache_info.hpp"
#include "pxq/tiling/topology.hpp"

namespace {

nlohmann::json sharing_json(const pxq::tiling::PairSharing& s) {
  return {{"same_core", s.same_core}, {"same_l2", s.same_l2}, {"same_l3", s.same_l3},
          {"same_package", s.same_package}, {"other_package", s.other_package}};
}

int place(const std::string& mode, int nodes, int ranks_per_node, int threads, bool virtual_nodes,
          const std::vector<int>& cpus, const std::string& xml) {
  try {
    const auto topo = xml.empty() ? pxq::tiling::this_topology() : pxq::tiling::topology_from_xml(xml);
    const auto plan = pxq::tiling::plan_placement(topo, mode, nodes, ranks_per_node, threads, virtual_nodes, cpus);
    nlohmann::json out = {{"mode", plan.mode}, {"topology", topo.source}, {"packages", topo.packages},
                          {"warnings", plan.warnings}, {"nodes", nlohmann::json::array()}};
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pxq-envinfo: what pxq sees on this machine (JSON)"};
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
  CLI11_PARSE(app, argc, argv);
  if (pl->parsed()) return place(mode, nodes, rpn, threads, virtual_nodes, cpus, xml);

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
  j["backends"] = nlohmann::json::array({"openmp"});
  if (pxq::kernels::backend_available(pxq::kernels::Backend::kokkos))
    j["backends"].push_back("kokkos");
  std::puts(j.dump(1).c_str());
  return 0;
}
