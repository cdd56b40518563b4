// Where each rank and thread runs, as observed (not as requested), and the channel a rank
// pair would use. Node identity comes from MPI_COMM_TYPE_SHARED, so virtual nodes count
// as nodes; cores from sched_getcpu/sched_getaffinity; cache sharing from hwloc.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pxq::comm {

struct ThreadPlacement {
  int thread = 0;
  int cpu = -1;                        // where the thread was running when observed
  std::vector<int> affinity;           // the cpus it may run on
  int l2 = -1, l3 = -1, package = -1;  // hwloc logical indices of the cpu's ancestors
};

struct RankPlacement {
  int rank = 0;
  std::string host;   // gethostname
  std::string vnode;  // virtual node name: pxq's, or Slurm's when it is not the host ("" on real nodes)
  int node = 0;       // node index: ranks sharing memory share it
  int local_rank = 0;
  std::vector<ThreadPlacement> threads;
};

enum class Channel { self, intra_cmp, inter_cmp, inter_node };
const char* channel_name(Channel c);

// Up to this many ranks every rank holds every rank's placement whole (the probes choose their
// pairs on every rank); beyond, rank 0 alone does, and the others hold their own whole and the
// others' node, local rank and package: what a message's channel is read from (3 ints a rank,
// not every rank's JSON on every rank, which grows with P^2 over the run).
inline constexpr int kWholePlacementRanks = 256;
// kWholePlacementRanks, or PXQ_PLACEMENT_WHOLE_RANKS when it is lower (for tests).
int whole_placement_ranks();

// Collective over `comm`: every rank observes its `threads` OpenMP threads; rank 0 gets the
// placement of all ranks whole, the others as kWholePlacementRanks says.
std::vector<RankPlacement> observe_placement(MPI_Comm comm, int threads);

// Same node and same package (chip): intra-CMP; same node, other package: inter-CMP.
Channel classify(const RankPlacement& a, const RankPlacement& b);

// Number of distinct nodes in a placement.
int count_nodes(const std::vector<RankPlacement>& ranks);

// True when two ranks bound to cpus share an L2 (or L3) instance.
bool shares_cache(const RankPlacement& a, const RankPlacement& b, int level);

nlohmann::json to_json(const RankPlacement& p);
RankPlacement placement_from_json(const nlohmann::json& j);

}  // namespace pxq::comm
