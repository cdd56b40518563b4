// Per-peer traffic counters and the pairwise exchange step.
#include "pxq/comm/peer_traffic.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "pxq/comm/mpi_check.hpp"

namespace pxq::comm {

void PeerTraffic::reset() {
  std::fill(messages_.begin(), messages_.end(), 0);
  std::fill(bytes_.begin(), bytes_.end(), 0);
}

std::uint64_t PeerTraffic::messages() const {
  return std::accumulate(messages_.begin(), messages_.end(), std::uint64_t{0});
}

std::uint64_t PeerTraffic::bytes() const { return std::accumulate(bytes_.begin(), bytes_.end(), std::uint64_t{0}); }

namespace {

constexpr std::size_t kChannels = 4;  // Channel's values: self, intra_cmp, inter_cmp, inter_node

// Every (source, destination) pair with traffic, on rank 0 (collective): only for runs of at
// most kPeerDetailRanks ranks, where the P x P gather is small.
nlohmann::json peer_rows(MPI_Comm comm, int rank, std::size_t n, const std::vector<std::uint64_t>& messages,
                         const std::vector<std::uint64_t>& bytes) {
  std::vector<std::uint64_t> mine(2 * n);
  for (std::size_t p = 0; p < n; ++p) {
    mine[2 * p] = messages[p];
    mine[2 * p + 1] = bytes[p];
  }
  std::vector<std::uint64_t> all(rank == 0 ? 2 * n * n : 0);
  check_mpi(MPI_Gather(mine.data(), static_cast<int>(2 * n), MPI_UINT64_T, all.data(), static_cast<int>(2 * n),
                       MPI_UINT64_T, 0, comm),
            "MPI_Gather of traffic counters per peer");
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t src = 0; rank == 0 && src < n; ++src)
    for (std::size_t dst = 0; dst < n; ++dst)
      if (all[2 * (src * n + dst)] != 0)
        rows.push_back({src, dst, all[2 * (src * n + dst)], all[2 * (src * n + dst) + 1]});
  return rows;
}

}  // namespace

nlohmann::json PeerTraffic::summarize(MPI_Comm comm, const std::vector<RankPlacement>& placement) const {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t n = static_cast<std::size_t>(size);
  // Each rank sums its own sends per channel and counts its peers; rank 0 gets the channel
  // sums (a reduction) and three numbers per rank (a gather): nothing P x P by default.
  std::uint64_t channels[2 * kChannels] = {};
  std::uint64_t own[3] = {0, 0, 0};  // peers, messages, bytes
  const RankPlacement& me = placement[static_cast<std::size_t>(rank)];
  for (std::size_t dst = 0; dst < n; ++dst) {
    if (messages_[dst] == 0) continue;
    const auto c = static_cast<std::size_t>(classify(me, placement[dst]));
    channels[2 * c] += messages_[dst];
    channels[2 * c + 1] += bytes_[dst];
    own[0] += 1;
    own[1] += messages_[dst];
    own[2] += bytes_[dst];
  }
  std::uint64_t summed[2 * kChannels] = {};
  check_mpi(MPI_Reduce(channels, summed, 2 * kChannels, MPI_UINT64_T, MPI_SUM, 0, comm),
            "MPI_Reduce of traffic per channel");
  std::vector<std::uint64_t> ranks(rank == 0 ? 3 * n : 0);
  check_mpi(MPI_Gather(own, 3, MPI_UINT64_T, ranks.data(), 3, MPI_UINT64_T, 0, comm), "MPI_Gather of traffic per rank");
  nlohmann::json peers = n <= kPeerDetailRanks ? peer_rows(comm, rank, n, messages_, bytes_) : nlohmann::json();
  if (rank != 0) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json by_channel = nlohmann::json::object();
  for (std::size_t c = 0; c < kChannels; ++c)
    by_channel[channel_name(static_cast<Channel>(c))] = {{"messages", summed[2 * c]}, {"bytes", summed[2 * c + 1]}};
  nlohmann::json by_rank = nlohmann::json::array();
  std::uint64_t total_msgs = 0, total_bytes = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (ranks[3 * r] == 0) continue;
    by_rank.push_back({r, ranks[3 * r], ranks[3 * r + 1], ranks[3 * r + 2]});
    total_msgs += ranks[3 * r + 1];
    total_bytes += ranks[3 * r + 2];
  }
  out["by_channel"] = by_channel;
  out["by_rank"] = by_rank;
  out["by_rank_columns"] = {"rank", "peers", "messages", "bytes"};
  if (n <= kPeerDetailRanks) {
    out["by_peer"] = peers;
    out["by_peer_columns"] = {"source", "destination", "messages", "bytes"};
  } else {
    out["by_peer_note"] = "per peer only up to " + std::to_string(kPeerDetailRanks) +
                          " ranks (this run: " + std::to_string(n) +
                          "): each rank's peers and totals are in by_rank; a profile (pxq profile) counts every pair";
  }
  out["messages"] = total_msgs;
  out["bytes"] = total_bytes;
  return out;
}

void exchange(MPI_Comm comm, const double* send, int send_count, double* recv, int recv_count, int partner, int tag,
              PeerTraffic& traffic) {
  MPI_Request request;
  check_mpi(MPI_Irecv(recv, recv_count, MPI_DOUBLE, partner, tag, comm, &request), "MPI_Irecv");
  check_mpi(MPI_Send(send, send_count, MPI_DOUBLE, partner, tag, comm), "MPI_Send");
  check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  traffic.count(partner, static_cast<std::size_t>(send_count) * sizeof(double));
}

}  // namespace pxq::comm
