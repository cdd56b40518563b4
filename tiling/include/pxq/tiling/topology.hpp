// The cores of a node and how they share caches, from hwloc (this machine or an XML export),
// and the choice of cores for the ranks of a node: packed (ranks on cores that share
// caches, the "virtual-processor" mode) or spread (as far apart as the node allows, the
// "co-processor" mode).
#pragma once

#include <string>
#include <vector>

namespace pxq::tiling {

struct Core {
  int index = 0;     // hwloc logical core index (what Open MPI rankfiles call a slot)
  int cpu = 0;       // OS number of the core's first PU (what sched_getcpu reports)
  int l2 = -1;       // logical index of the L2 above it, -1 when none
  int l3 = -1;       // logical index of the L3 above it, -1 when none
  int package = -1;  // logical index of its package, -1 when none
};

struct Topology {
  std::string source;       // "this machine" or the XML file
  std::vector<Core> cores;  // in hwloc's logical order: cores sharing caches are adjacent
  int packages = 0;
  int l2_instances = 0, l3_instances = 0;
};

// hwloc's topology of this machine; throws std::runtime_error when hwloc cannot load it.
Topology this_topology();
// A topology exported by `lstopo --of xml` (or hwloc_topology_export_xml); throws
// std::invalid_argument naming the file when it cannot be read.
Topology topology_from_xml(const std::string& path);

// What two workers on the same node share: the closest level counts.
enum class Sharing { same_core, same_l2, same_l3, same_package, other_package };
const char* sharing_name(Sharing s);
Sharing sharing_between(const Core& a, const Core& b);

// Rank pairs of one node by what they share (each rank judged by its first core).
struct PairSharing {
  int same_core = 0, same_l2 = 0, same_l3 = 0, same_package = 0, other_package = 0;
  int pairs() const { return same_core + same_l2 + same_l3 + same_package + other_package; }
};
PairSharing pair_sharing(const std::vector<Core>& first_core_of_each_rank);

struct NodePlacement {
  std::vector<std::vector<Core>> ranks;  // per local rank, its threads' cores
  PairSharing sharing;
};

struct PlacementPlan {
  std::string mode;                   // packed, spread or custom
  std::vector<NodePlacement> nodes;   // per node
  std::vector<std::string> warnings;  // where the mode could not be honoured as asked
};

// Cores for `nodes` nodes of `ranks_per_node` ranks with `threads` cores each.
// - Real nodes (`virtual_nodes` false): every node is this topology, and every node gets the
//   same choice.
// - Virtual nodes: the nodes share this topology; node k owns the k-th of `nodes` equal runs
//   of cores in logical order (so a node is as compact as the machine allows) and places
//   its ranks within it.
// packed takes cores in logical order; spread divides the ranks evenly over packages, then
// L3s, then L2s, then cores; custom takes `custom_cpus` (OS cpu numbers, threads per rank,
// rank by rank, node by node for virtual nodes). Throws std::invalid_argument naming the
// problem and the fix when the request cannot be met.
PlacementPlan plan_placement(const Topology& topo, const std::string& mode, int nodes, int ranks_per_node, int threads,
                             bool virtual_nodes, const std::vector<int>& custom_cpus = {});

}  // namespace pxq::tiling
