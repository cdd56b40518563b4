// Cores and cache sharing from hwloc, and packed / spread / custom core choices.
#include "pxq/tiling/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <set>
#include <stdexcept>

namespace pxq::tiling {
namespace {

int ancestor(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_obj_type_t type) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, obj);
  return a ? static_cast<int>(a->logical_index) : -1;
}

Topology read(hwloc_topology_t topo, const std::string& source) {
  Topology t;
  t.source = source;
  const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    Core c;
    c.index = static_cast<int>(core->logical_index);
    const int first = hwloc_bitmap_first(core->cpuset);
    c.cpu = first;
    c.l2 = ancestor(topo, core, HWLOC_OBJ_L2CACHE);
    c.l3 = ancestor(topo, core, HWLOC_OBJ_L3CACHE);
    c.package = ancestor(topo, core, HWLOC_OBJ_PACKAGE);
    t.cores.push_back(c);
  }
  t.packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  t.l2_instances = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L2CACHE);
  t.l3_instances = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
  return t;
}

// The grouping key of a core at a level of the hierarchy: package, L3, L2.
int key(const Core& c, int level) {
  switch (level) {
    case 0:
      return c.package;
    case 1:
      return c.l3;
    default:
      return c.l2;
  }
}

std::vector<std::vector<Core>> split_even(const std::vector<Core>& cores, int n) {
  std::vector<std::vector<Core>> out(static_cast<std::size_t>(n));
  const std::size_t size = cores.size();
  for (int r = 0; r < n; ++r) {
    const std::size_t lo = size * static_cast<std::size_t>(r) / static_cast<std::size_t>(n);
    const std::size_t hi = size * static_cast<std::size_t>(r + 1) / static_cast<std::size_t>(n);
    out[static_cast<std::size_t>(r)].assign(cores.begin() + static_cast<long>(lo),
                                            cores.begin() + static_cast<long>(hi));
  }
  return out;
}

// n shares of `cores`, each share one subtree as far apart as the hierarchy allows: the ranks
// are divided evenly over the groups of a level (packages, then L3s, then L2s), and a level
// whose groups are too small for one rank's threads is cut into n even runs instead.
std::vector<std::vector<Core>> distribute(const std::vector<Core>& cores, int n, int threads, int level) {
  if (n == 1) return {cores};
  if (level == 3) return split_even(cores, n);
  std::vector<std::vector<Core>> groups;
  for (const Core& c : cores) {
    if (groups.empty() || key(groups.back().back(), level) != key(c, level)) groups.emplace_back();
    groups.back().push_back(c);
  }
  const int g = static_cast<int>(groups.size());
  if (g == 1) return distribute(cores, n, threads, level + 1);
  for (const auto& grp : groups)
    if (static_cast<int>(grp.size()) < threads) return split_even(cores, n);
  std::vector<int> count(static_cast<std::size_t>(g), 0);
  if (n <= g) {
    for (int i = 0; i < n; ++i) count[static_cast<std::size_t>(i * g / n)] = 1;
  } else {  // proportional to the group's cores, remainders to the largest fractions
    std::vector<std::pair<double, int>> frac;
    int given = 0;
    for (int i = 0; i < g; ++i) {
      const double exact = static_cast<double>(n) * static_cast<double>(groups[static_cast<std::size_t>(i)].size()) /
                           static_cast<double>(cores.size());
      count[static_cast<std::size_t>(i)] = static_cast<int>(exact);
      given += count[static_cast<std::size_t>(i)];
      frac.emplace_back(-(exact - count[static_cast<std::size_t>(i)]), i);
    }
    std::stable_sort(frac.begin(), frac.end());
    for (int k = 0; given < n; ++k, ++given)
      ++count[static_cast<std::size_t>(frac[static_cast<std::size_t>(k % g)].second)];
  }
  std::vector<std::vector<Core>> out;
  for (int i = 0; i < g; ++i) {
    const int c = count[static_cast<std::size_t>(i)];
    if (c == 0) continue;
    for (auto& share : distribute(groups[static_cast<std::size_t>(i)], c, threads, level + 1))
      out.push_back(std::move(share));
  }
  return out;
}

std::string workers_text(int ranks, int threads) {
  return std::to_string(ranks) + " rank(s) x " + std::to_string(threads) + " thread(s)";
}

NodePlacement place_node(const std::vector<Core>& cores, const std::string& mode, int ranks, int threads) {
  NodePlacement node;
  if (mode == "packed") {
    for (int r = 0; r < ranks; ++r)
      node.ranks.emplace_back(cores.begin() + std::ptrdiff_t{r} * threads,
                              cores.begin() + std::ptrdiff_t{r + 1} * threads);
  } else {
    for (auto& share : distribute(cores, ranks, threads, 0)) {
      if (static_cast<int>(share.size()) < threads)
        throw std::invalid_argument("spread: cannot give each of " + workers_text(ranks, threads) +
                                    " cores of one cache group on this node: use --placement packed, "
                                    "or fewer threads per rank");
      share.resize(static_cast<std::size_t>(threads));
      node.ranks.push_back(std::move(share));
    }
  }
  return node;
}

std::vector<Core> firsts(const NodePlacement& n) {
  std::vector<Core> out;
  out.reserve(n.ranks.size());
  for (const auto& r : n.ranks) out.push_back(r.front());
  return out;
}

}  // namespace

Topology this_topology() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
    throw std::runtime_error("hwloc could not load this machine's topology");
  Topology t = read(topo, "this machine");
  hwloc_topology_destroy(topo);
  return t;
}

Topology topology_from_xml(const std::string& path) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) throw std::runtime_error("hwloc could not start");
  if (hwloc_topology_set_xml(topo, path.c_str()) != 0 || hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    throw std::invalid_argument("topology " + path + " cannot be read: give an XML file written by `lstopo --of xml`");
  }
  Topology t = read(topo, path);
  hwloc_topology_destroy(topo);
  if (t.cores.empty())
    throw std::invalid_argument("topology " + path + " has no cores: give a full `lstopo --of xml` export");
  return t;
}

const char* sharing_name(Sharing s) {
  static constexpr const char* kNames[] = {"same_core", "same_l2", "same_l3", "same_package",
                                           "other_package"};  // in the enum's order
  const auto i = static_cast<std::size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

Sharing sharing_between(const Core& a, const Core& b) {
  if (a.index == b.index) return Sharing::same_core;
  if (a.l2 >= 0 && a.l2 == b.l2) return Sharing::same_l2;
  if (a.l3 >= 0 && a.l3 == b.l3) return Sharing::same_l3;
  if (a.package == b.package) return Sharing::same_package;
  return Sharing::other_package;
}

PairSharing pair_sharing(const std::vector<Core>& first) {
  PairSharing s;
  int* count[] = {&s.same_core, &s.same_l2, &s.same_l3, &s.same_package, &s.other_package};  // Sharing's order
  for (std::size_t i = 0; i < first.size(); ++i)
    for (std::size_t j = i + 1; j < first.size(); ++j)
      ++*count[static_cast<std::size_t>(sharing_between(first[i], first[j]))];
  return s;
}

namespace {

std::vector<NodePlacement> choose(const Topology& topo, const std::string& mode, int nodes, int ranks_per_node,
                                  int threads, bool virtual_nodes, const std::vector<int>& custom_cpus) {
  if (mode != "packed" && mode != "spread" && mode != "custom")
    throw std::invalid_argument("unknown placement '" + mode + "': use packed, spread or custom");
  if (nodes < 1 || ranks_per_node < 1 || threads < 1)
    throw std::invalid_argument("placement needs at least 1 node, 1 rank per node and 1 thread");
  const int total = static_cast<int>(topo.cores.size());
  const int node_count = virtual_nodes ? nodes : 1;  // distinct core sets to choose
  const int per_node = total / node_count;
  const int need = ranks_per_node * threads;
  std::vector<NodePlacement> out;

  if (mode == "custom") {
    const std::size_t expected = static_cast<std::size_t>(node_count) * static_cast<std::size_t>(need);
    if (custom_cpus.size() != expected)
      throw std::invalid_argument("custom placement: got " + std::to_string(custom_cpus.size()) + " core(s), need " +
                                  std::to_string(expected) + " (" +
                                  (virtual_nodes ? std::to_string(nodes) + " virtual node(s) x " : "") +
                                  workers_text(ranks_per_node, threads) + "): give --cores with one core per worker");
    std::set<int> seen;
    std::vector<Core> chosen;
    for (int cpu : custom_cpus) {
      auto it = std::find_if(topo.cores.begin(), topo.cores.end(), [&](const Core& c) { return c.cpu == cpu; });
      if (it == topo.cores.end())
        throw std::invalid_argument("custom placement: core " + std::to_string(cpu) + " is not a core of " +
                                    topo.source + ": use the cpu numbers `lstopo` shows as P#");
      if (!seen.insert(cpu).second)
        throw std::invalid_argument("custom placement: core " + std::to_string(cpu) +
                                    " is given twice: give each worker its own core");
      chosen.push_back(*it);
    }
    for (int k = 0; k < node_count; ++k) {
      NodePlacement node;
      for (int r = 0; r < ranks_per_node; ++r) {
        const auto first = chosen.begin() + std::ptrdiff_t{k} * need + std::ptrdiff_t{r} * threads;
        node.ranks.emplace_back(first, first + threads);
      }
      out.push_back(std::move(node));
    }
  } else {
    if (need > per_node)
      throw std::invalid_argument(
          "placement " + mode + ": each node needs " + std::to_string(need) + " cores (" +
          workers_text(ranks_per_node, threads) + ") but " +
          (virtual_nodes ? "each of " + std::to_string(nodes) + " virtual nodes has " : "the node has ") +
          std::to_string(per_node) + " of " + topo.source + "'s " + std::to_string(total) +
          ": use fewer ranks or threads per node, or drop --placement and use --oversubscribe");
    for (int k = 0; k < node_count; ++k) {
      const std::vector<Core> own(topo.cores.begin() + std::ptrdiff_t{k} * per_node,
                                  topo.cores.begin() + std::ptrdiff_t{k + 1} * per_node);
      out.push_back(place_node(own, mode, ranks_per_node, threads));
    }
  }
  for (auto& node : out) node.sharing = pair_sharing(firsts(node));
  if (!virtual_nodes)
    while (static_cast<int>(out.size()) < nodes) out.push_back(out.front());
  return out;
}

}  // namespace

PlacementPlan plan_placement(const Topology& topo, const std::string& mode, int nodes, int ranks_per_node, int threads,
                             bool virtual_nodes, const std::vector<int>& custom_cpus) {
  PlacementPlan plan;
  plan.mode = mode;
  plan.nodes = choose(topo, mode, nodes, ranks_per_node, threads, virtual_nodes, custom_cpus);
  const int total = static_cast<int>(topo.cores.size());

  // Say where the mode could not be honoured on this topology.
  const NodePlacement& n0 = plan.nodes.front();
  if (ranks_per_node > 1) {
    const bool own_l2 = topo.l2_instances >= total;
    if (mode == "packed" && n0.sharing.same_l2 == 0)
      plan.warnings.push_back(own_l2 ? "packed: every core has its own L2 here, so packed ranks share " +
                                           std::string(n0.sharing.same_l3 ? "the L3" : "no cache") + " but never an L2"
                                     : "packed: the ranks could not be put on cores sharing an L2");
    if (mode == "spread" && n0.sharing.other_package == 0) {
      plan.warnings.push_back(topo.packages <= 1
                                  ? "spread: this machine has one package, so spread ranks still share its " +
                                        std::string(n0.sharing.same_l3 ? "L3 and " : "") + "memory bus"
                                  : "spread: the node's cores lie in one package, so spread ranks still share it");
    }
    if (mode != "custom") {
      const auto other =
          choose(topo, mode == "packed" ? "spread" : "packed", nodes, ranks_per_node, threads, virtual_nodes, {});
      bool same = true;
      for (std::size_t k = 0; k < plan.nodes.size() && same; ++k)
        for (std::size_t r = 0; r < plan.nodes[k].ranks.size() && same; ++r)
          for (std::size_t t = 0; t < plan.nodes[k].ranks[r].size(); ++t)
            if (plan.nodes[k].ranks[r][t].index != other[k].ranks[r][t].index) same = false;
      if (same)
        plan.warnings.push_back(
            "packed and spread choose the same cores here: comparing them shows no placement effect");
    }
  }
  return plan;
}

}  // namespace pxq::tiling
