// Message sizes and the point-to-point messages of standard collective algorithms: the
// model the message profiler uses to show what an MPI library probably sends for a
// collective. It is a model (real libraries switch algorithms by size and machine), and the
// profiler's record says so. No MPI here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pxq::comm {

// Size bins: bin 0 holds empty messages, bin k >= 1 holds sizes in (2^(k-2), 2^(k-1)] bytes
// (bin 1: 1 B, bin 2: 2 B, bin 3: 3-4 B, ..., bin 9: 129-256 B), so the coarse ranges of
// the literature (<= 256 B, 256 B-4 KiB, 4-64 KiB, 64-256 KiB, > 256 KiB) are unions of bins.
inline constexpr int kSizeBins = 50;
int size_bin(std::uint64_t bytes);
std::uint64_t bin_upper_bytes(int bin);  // the largest size in the bin
// The coarse range of a size: 0 (<= 256 B) .. 4 (> 256 KiB), and their names.
int coarse_range(std::uint64_t bytes);
// The largest size of each coarse range but the last (which is open above).
const std::vector<std::uint64_t>& coarse_range_uppers();
const std::vector<std::string>& coarse_range_names();

// One modelled message: to `peer` (a rank of the communicator), `bytes` long.
struct ModelMessage {
  int peer = 0;
  std::uint64_t bytes = 0;
};

// The messages rank `me` of `n` sends in each algorithm.
// all-to-all: one message of `bytes` to every other member.
std::vector<ModelMessage> alltoall_sends(int me, int n, std::uint64_t bytes);
// allreduce by recursive doubling on the largest power of two p' <= n; with n not a power
// of two the first 2(n - p') ranks pair up first (even ranks hand their data to the odd
// neighbour and get the result back from it at the end), as MPICH does.
std::vector<ModelMessage> allreduce_sends(int me, int n, std::uint64_t bytes);
// bcast down a binomial tree rooted at `root`.
std::vector<ModelMessage> bcast_sends(int me, int root, int n, std::uint64_t bytes);
// reduce up a binomial tree rooted at `root`: every rank but the root sends once.
std::vector<ModelMessage> reduce_sends(int me, int root, int n, std::uint64_t bytes);
// allgather around a ring: n - 1 steps, each passing one block (block_bytes[k] is rank k's
// contribution) to the right neighbour.
std::vector<ModelMessage> allgather_sends(int me, int n, const std::vector<std::uint64_t>& block_bytes);
// gather to / scatter from `root`, linearly.
std::vector<ModelMessage> gather_sends(int me, int root, int n, std::uint64_t bytes);
std::vector<ModelMessage> scatter_sends(int me, int root, int n, const std::vector<std::uint64_t>& block_bytes);
// barrier by dissemination: ceil(log2 n) rounds of empty messages to me + 2^k (mod n).
std::vector<ModelMessage> barrier_sends(int me, int n);

}  // namespace pxq::comm
