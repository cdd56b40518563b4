// Per-peer traffic counters and the pairwise exchange step.
#include "pxq/comm/peer_traffic.hpp"

#include <algorithm>
#include <numeric>

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

nlohmann::json PeerTraffic::summarize(MPI_Comm comm, const std::vector<RankPlacement>& placement) const {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t n = static_cast<std::size_t>(size);
  std::vector<std::uint64_t> mine(2 * n);
  for (std::size_t p = 0; p < n; ++p) {
    mine[2 * p] = messages_[p];
    mine[2 * p + 1] = bytes_[p];
  }
  std::vector<std::uint64_t> all(rank == 0 ? 2 * n * n : 0);
  check_mpi(MPI_Gather(mine.data(), static_cast<int>(2 * n), MPI_UINT64_T, all.data(), static_cast<int>(2 * n),
                       MPI_UINT64_T, 0, comm),
            "MPI_Gather of traffic counters");
  if (rank != 0) return nullptr;
  nlohmann::json channels = nlohmann::json::object();
  for (const char* c : {"self", "intra_cmp", "inter_cmp", "inter_node"}) channels[c] = {{"messages", 0}, {"bytes", 0}};
  nlohmann::json by_peer = nlohmann::json::array();
  std::uint64_t total_msgs = 0, total_bytes = 0;
  for (std::size_t src = 0; src < n; ++src)
    for (std::size_t dst = 0; dst < n; ++dst) {
      const std::uint64_t msgs = all[2 * (src * n + dst)];
      const std::uint64_t bytes = all[2 * (src * n + dst) + 1];
      if (msgs == 0) continue;
      auto& slot = channels[channel_name(classify(placement[src], placement[dst]))];
      slot["messages"] = slot["messages"].get<std::uint64_t>() + msgs;
      slot["bytes"] = slot["bytes"].get<std::uint64_t>() + bytes;
      by_peer.push_back({src, dst, msgs, bytes});
      total_msgs += msgs;
      total_bytes += bytes;
    }
  return {{"by_channel", channels},
          {"by_peer", by_peer},
          {"by_peer_columns", {"source", "destination", "messages", "bytes"}},
          {"messages", total_msgs},
          {"bytes", total_bytes}};
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
