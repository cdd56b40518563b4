// Size bins and the messages of standard collective algorithms (the profiler's model).
#include "pxq/comm/msgmodel.hpp"

namespace pxq::comm {

int size_bin(std::uint64_t bytes) {
  if (bytes == 0) return 0;
  int k = 1;
  std::uint64_t upper = 1;
  while (upper < bytes && k < kSizeBins - 1) {
    upper <<= 1;
    ++k;
  }
  return k;
}

std::uint64_t bin_upper_bytes(int bin) { return bin <= 0 ? 0 : std::uint64_t{1} << (bin - 1); }

const std::vector<std::uint64_t>& coarse_range_uppers() {
  static const std::vector<std::uint64_t> uppers = {256, 4096, 65536, 262144};  // the last range is open
  return uppers;
}

int coarse_range(std::uint64_t bytes) {
  const auto& uppers = coarse_range_uppers();
  int k = 0;
  while (k < static_cast<int>(uppers.size()) && bytes > uppers[static_cast<std::size_t>(k)]) ++k;
  return k;
}

const std::vector<std::string>& coarse_range_names() {
  static const std::vector<std::string> names = {"<=256B", "256B-4K", "4K-64K", "64K-256K", ">256K"};
  return names;
}

std::vector<ModelMessage> alltoall_sends(int me, int n, std::uint64_t bytes) {
  std::vector<ModelMessage> out;
  for (int k = 1; k < n; ++k) out.push_back({(me + k) % n, bytes});
  return out;
}

std::vector<ModelMessage> allreduce_sends(int me, int n, std::uint64_t bytes) {
  std::vector<ModelMessage> out;
  if (n <= 1) return out;
  int pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  const int rem = n - pof2;
  int vrank;  // rank within the power-of-two group, -1 for ranks that sit the doubling out
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      out.push_back({me + 1, bytes});
      vrank = -1;
    } else {
      vrank = me / 2;
    }
  } else {
    vrank = me - rem;
  }
  if (vrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int vpeer = vrank ^ mask;
      const int peer = vpeer < rem ? vpeer * 2 + 1 : vpeer + rem;
      out.push_back({peer, bytes});
    }
    if (me < 2 * rem) out.push_back({me - 1, bytes});  // the result back to the even partner
  }
  return out;
}

std::vector<ModelMessage> bcast_sends(int me, int root, int n, std::uint64_t bytes) {
  std::vector<ModelMessage> out;
  const int vr = (me - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (vr & mask) break;
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) out.push_back({(vr + mask + root) % n, bytes});
  return out;
}

std::vector<ModelMessage> reduce_sends(int me, int root, int n, std::uint64_t bytes) {
  const int vr = (me - root + n) % n;
  if (vr == 0) return {};
  const int parent = vr & (vr - 1);  // clear the lowest set bit
  return {{(parent + root) % n, bytes}};
}

std::vector<ModelMessage> allgather_sends(int me, int n, const std::vector<std::uint64_t>& block_bytes) {
  std::vector<ModelMessage> out;
  for (int step = 0; step < n - 1; ++step) {
    const int block = ((me - step) % n + n) % n;
    out.push_back({(me + 1) % n, block_bytes[static_cast<std::size_t>(block)]});
  }
  return out;
}

std::vector<ModelMessage> gather_sends(int me, int root, int n, std::uint64_t bytes) {
  if (me == root || n <= 1) return {};
  return {{root, bytes}};
}

std::vector<ModelMessage> scatter_sends(int me, int root, int n, const std::vector<std::uint64_t>& block_bytes) {
  std::vector<ModelMessage> out;
  if (me != root) return out;
  for (int k = 0; k < n; ++k)
    if (k != root) out.push_back({k, block_bytes[static_cast<std::size_t>(k)]});
  return out;
}

std::vector<ModelMessage> barrier_sends(int me, int n) {
  std::vector<ModelMessage> out;
  for (int d = 1; d < n; d <<= 1) out.push_back({(me + d) % n, 0});
  return out;
}

}  // namespace pxq::comm
