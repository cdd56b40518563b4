// pxq-envinfo: what pxq sees on this machine, as one JSON object (read by `pxq env`):
// packages, cores, PUs, caches, compiler, MPI library, Kokkos and its backends.
#include <hwloc.h>
#include <mpi.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "pxq/common/run_record.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/tiling/cache_info.hpp"

int main() {
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
