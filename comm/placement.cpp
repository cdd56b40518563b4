// Observed placement: node identity from MPI_COMM_TYPE_SHARED, cpus from the OS, cache and
// package sharing from hwloc. Collected on every rank with one allgather of JSON text.
#include "pxq/comm/placement.hpp"

#include <hwloc.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>

#include "pxq/comm/mpi_check.hpp"

namespace pxq::comm {
namespace {

int ancestor_index(hwloc_topology_t topo, hwloc_obj_t pu, hwloc_obj_type_t type) {
  if (pu == nullptr) return -1;
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, pu);
  return a ? static_cast<int>(a->logical_index) : -1;
}

std::vector<ThreadPlacement> observe_threads(int threads) {
  std::vector<ThreadPlacement> out(threads);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t < threads) {
      ThreadPlacement& p = out[t];
      p.thread = t;
      p.cpu = sched_getcpu();
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &set)) p.affinity.push_back(c);
    }
  }
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    for (auto& p : out) {
      hwloc_obj_t pu = p.cpu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, p.cpu) : nullptr;
      p.l2 = ancestor_index(topo, pu, HWLOC_OBJ_L2CACHE);
      p.l3 = ancestor_index(topo, pu, HWLOC_OBJ_L3CACHE);
      p.package = ancestor_index(topo, pu, HWLOC_OBJ_PACKAGE);
    }
    hwloc_topology_destroy(topo);
  }
  return out;
}

}  // namespace

const char* channel_name(Channel c) {
  static constexpr const char* kNames[] = {"self", "intra_cmp", "inter_cmp", "inter_node"};  // in the enum's order
  const auto i = static_cast<std::size_t>(c);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

nlohmann::json to_json(const RankPlacement& p) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& t : p.threads)
    threads.push_back({{"thread", t.thread},
                       {"cpu", t.cpu},
                       {"affinity", t.affinity},
                       {"l2", t.l2},
                       {"l3", t.l3},
                       {"package", t.package}});
  return {{"rank", p.rank},    {"host", p.host}, {"vnode", p.vnode}, {"node", p.node}, {"local_rank", p.local_rank},
          {"threads", threads}};
}

RankPlacement placement_from_json(const nlohmann::json& j) {
  RankPlacement p;
  p.rank = j.at("rank");
  p.host = j.at("host");
  p.vnode = j.at("vnode");
  p.node = j.at("node");
  p.local_rank = j.at("local_rank");
  for (const auto& t : j.at("threads")) {
    ThreadPlacement tp;
    tp.thread = t.at("thread");
    tp.cpu = t.at("cpu");
    tp.affinity = t.at("affinity").get<std::vector<int>>();
    tp.l2 = t.at("l2");
    tp.l3 = t.at("l3");
    tp.package = t.at("package");
    p.threads.push_back(tp);
  }
  return p;
}

int whole_placement_ranks() {
  const char* given = std::getenv("PXQ_PLACEMENT_WHOLE_RANKS");  // lower, for tests
  const long v = given != nullptr ? std::strtol(given, nullptr, 10) : 0;
  return v > 0 && v < kWholePlacementRanks ? static_cast<int>(v) : kWholePlacementRanks;
}

namespace {

// Every rank's placement whole (its JSON gathered): on every rank (EVERYWHERE), else on rank 0
// alone (the others get an empty list).
std::vector<RankPlacement> gather_whole(MPI_Comm comm, int rank, int size, const RankPlacement& me, bool everywhere) {
  const std::string text = to_json(me).dump();
  int len = static_cast<int>(text.size());
  std::vector<int> lens(size), displs(size);
  if (everywhere)
    check_mpi(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm), "MPI_Allgather");
  else
    check_mpi(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = static_cast<int>(total);
    total += lens[r];
  }
  if (total > std::numeric_limits<int>::max()) throw std::runtime_error("the ranks' placements exceed 2 GiB");
  std::string all(everywhere || rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  if (everywhere)
    check_mpi(MPI_Allgatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm),
              "MPI_Allgatherv");
  else
    check_mpi(MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm),
              "MPI_Gatherv");
  std::vector<RankPlacement> out;
  if (!everywhere && rank != 0) return out;
  out.reserve(size);
  for (int r = 0; r < size; ++r)
    out.push_back(placement_from_json(nlohmann::json::parse(all.substr(displs[r], lens[r]))));
  return out;
}

}  // namespace

std::vector<RankPlacement> observe_placement(MPI_Comm comm, int threads) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");

  MPI_Comm node_comm, leaders;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm), "MPI_Comm_split_type");
  RankPlacement me;
  me.rank = rank;
  check_mpi(MPI_Comm_rank(node_comm, &me.local_rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_split(comm, me.local_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders), "MPI_Comm_split");
  int node = 0;
  if (leaders != MPI_COMM_NULL) {
    check_mpi(MPI_Comm_rank(leaders, &node), "MPI_Comm_rank");
    MPI_Comm_free(&leaders);
  }
  check_mpi(MPI_Bcast(&node, 1, MPI_INT, 0, node_comm), "MPI_Bcast");
  MPI_Comm_free(&node_comm);
  me.node = node;

  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  me.host = host;
  if (const char* v = std::getenv("PXQ_VNODE")) {
    me.vnode = v;
  } else if (const char* s = std::getenv("SLURMD_NODENAME"); s && me.host != s) {
    me.vnode = s;  // several Slurm node names on one host (multiple slurmd)
  }
  me.threads = observe_threads(threads);

  // Rank 0 decides for every rank (the environment may differ between the nodes).
  int whole_everywhere = size <= whole_placement_ranks() ? 1 : 0;
  check_mpi(MPI_Bcast(&whole_everywhere, 1, MPI_INT, 0, comm), "MPI_Bcast");
  std::vector<RankPlacement> out = gather_whole(comm, rank, size, me, whole_everywhere == 1);
  if (whole_everywhere == 1) return out;
  // Every other rank: the others' node and package (what a message's channel is read from),
  // three ints a rank, and its own placement whole (collective: rank 0 takes part).
  const int mine[3] = {me.node, me.local_rank, me.threads.empty() ? -1 : me.threads.front().package};
  std::vector<int> all(3 * static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(mine, 3, MPI_INT, all.data(), 3, MPI_INT, comm), "MPI_Allgather of nodes and packages");
  if (rank == 0) return out;
  out.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    RankPlacement& p = out[static_cast<std::size_t>(r)];
    p.rank = r;
    p.node = all[3 * static_cast<std::size_t>(r)];
    p.local_rank = all[3 * r + 1];
    ThreadPlacement t;
    t.package = all[3 * r + 2];
    p.threads = {t};
  }
  out[static_cast<std::size_t>(rank)] = me;
  return out;
}

Channel classify(const RankPlacement& a, const RankPlacement& b) {
  if (a.rank == b.rank) return Channel::self;
  if (a.node != b.node) return Channel::inter_node;
  const int pa = a.threads.empty() ? -1 : a.threads.front().package;
  const int pb = b.threads.empty() ? -1 : b.threads.front().package;
  return pa == pb ? Channel::intra_cmp : Channel::inter_cmp;
}

int count_nodes(const std::vector<RankPlacement>& ranks) {
  std::set<int> nodes;
  for (const auto& r : ranks) nodes.insert(r.node);
  return static_cast<int>(nodes.size());
}

bool shares_cache(const RankPlacement& a, const RankPlacement& b, int level) {
  if (a.node != b.node) return false;
  for (const auto& ta : a.threads)
    for (const auto& tb : b.threads) {
      const int ia = level == 2 ? ta.l2 : ta.l3;
      const int ib = level == 2 ? tb.l2 : tb.l3;
      if (ia >= 0 && ia == ib) return true;
    }
  return false;
}

}  // namespace pxq::comm
