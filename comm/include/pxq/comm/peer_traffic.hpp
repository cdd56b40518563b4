// Point-to-point traffic a rank sends, counted per destination rank, and its summary per
// channel (self, intra-CMP, inter-CMP, inter-node) from the observed placement.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "pxq/comm/placement.hpp"

namespace pxq::comm {

// Runs of at most this many ranks keep every (source, destination) pair in their record.
inline constexpr std::size_t kPeerDetailRanks = 16;

class PeerTraffic {
 public:
  explicit PeerTraffic(int nranks)
      : messages_(static_cast<std::size_t>(nranks), 0), bytes_(static_cast<std::size_t>(nranks), 0) {}
  // One message of `bytes` to `peer`.
  void count(int peer, std::size_t bytes) { add(peer, 1, bytes); }
  // Totals counted elsewhere (e.g. by a planned exchange) for `peer`.
  void add(int peer, std::uint64_t messages, std::uint64_t bytes) {
    messages_[static_cast<std::size_t>(peer)] += messages;
    bytes_[static_cast<std::size_t>(peer)] += bytes;
  }
  void reset();
  std::uint64_t messages() const;
  std::uint64_t bytes() const;

  // Collective over `comm`: rank 0 returns {"by_channel": {channel: {messages, bytes}},
  // "by_rank": [[rank, peers, messages, bytes], ...] (the ranks that sent), "messages": n,
  // "bytes": n}, and "by_peer": [[src, dst, messages, bytes], ...] up to kPeerDetailRanks
  // ranks (else "by_peer_note"): a record that grows with the ranks, not their square, and
  // nothing P x P gathered on rank 0 past that size. Other ranks return null.
  nlohmann::json summarize(MPI_Comm comm, const std::vector<RankPlacement>& placement) const;

 private:
  std::vector<std::uint64_t> messages_;
  std::vector<std::uint64_t> bytes_;
};

// One step of a pairwise exchange, as NAS codes write it: post the receive, send, wait.
// Throws std::runtime_error when MPI reports an error.
void exchange(MPI_Comm comm, const double* send, int send_count, double* recv, int recv_count, int partner, int tag,
              PeerTraffic& traffic);

}  // namespace pxq::comm
