// The message profiler's size bins and its model of collective algorithms.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "pxq/comm/msgmodel.hpp"

using namespace pxq::comm;

TEST(SizeBins, PowersOfTwoWithTheCoarseRangesAsUnions) {
  EXPECT_EQ(size_bin(0), 0);
  EXPECT_EQ(size_bin(1), 1);
  EXPECT_EQ(size_bin(2), 2);
  EXPECT_EQ(size_bin(3), 3);
  EXPECT_EQ(size_bin(4), 3);
  EXPECT_EQ(size_bin(5), 4);
  EXPECT_EQ(size_bin(256), 9);
  EXPECT_EQ(size_bin(257), 10);
  EXPECT_EQ(size_bin(1024), 11);
  EXPECT_EQ(bin_upper_bytes(11), 1024u);
  EXPECT_EQ(bin_upper_bytes(0), 0u);
  for (std::uint64_t b :
       {0ull, 1ull, 255ull, 256ull, 257ull, 4096ull, 4097ull, 65536ull, 65537ull, 262144ull, 262145ull, 1ull << 30}) {
    // Every size lies in its bin, and the bin's coarse range is the size's.
    const int bin = size_bin(b);
    EXPECT_LE(b, bin_upper_bytes(bin));
    if (bin > 0) {
      EXPECT_GT(b, bin_upper_bytes(bin - 1));
    }
    EXPECT_EQ(coarse_range(bin_upper_bytes(bin)), coarse_range(b)) << b;
  }
  EXPECT_EQ(coarse_range(256), 0);
  EXPECT_EQ(coarse_range(257), 1);
  EXPECT_EQ(coarse_range(4096), 1);
  EXPECT_EQ(coarse_range(65537), 3);
  EXPECT_EQ(coarse_range(262145), 4);
  EXPECT_EQ(coarse_range_names().size(), 5u);
}

namespace {

// Every rank's modelled sends for one collective: (src, dst) -> messages.
template <typename F>
std::map<std::pair<int, int>, int> all_sends(int n, F sends) {
  std::map<std::pair<int, int>, int> out;
  for (int me = 0; me < n; ++me)
    for (const auto& m : sends(me)) {
      EXPECT_GE(m.peer, 0);
      EXPECT_LT(m.peer, n);
      EXPECT_NE(m.peer, me);
      ++out[{me, m.peer}];
    }
  return out;
}

int total(const std::map<std::pair<int, int>, int>& m) {
  int t = 0;
  for (const auto& [k, v] : m) t += v;
  return t;
}

}  // namespace

TEST(CollectiveModel, AlltoallSendsOneMessageToEveryPeer) {
  for (int n : {1, 2, 3, 5, 8}) {
    const auto s = all_sends(n, [&](int me) { return alltoall_sends(me, n, 100); });
    EXPECT_EQ(total(s), n * (n - 1));
    EXPECT_EQ(static_cast<int>(s.size()), n * (n - 1));
  }
}

TEST(CollectiveModel, AllreduceRecursiveDoublingAlsoForNonPowersOfTwo) {
  // Powers of two: log2(n) rounds of mutual exchanges.
  for (int n : {2, 4, 8, 16}) {
    const auto s = all_sends(n, [&](int me) { return allreduce_sends(me, n, 8); });
    int rounds = 0;
    for (int m = 1; m < n; m <<= 1) ++rounds;
    EXPECT_EQ(total(s), n * rounds);
    for (const auto& [k, v] : s) EXPECT_EQ(s.count({k.second, k.first}), 1u) << "exchanges are mutual";
  }
  // n = 6: p' = 4, rem = 2: 2 hand-ins, 4 x 2 doubling messages, 2 results back.
  EXPECT_EQ(total(all_sends(6, [&](int me) { return allreduce_sends(me, 6, 8); })), 2 + 8 + 2);
  EXPECT_EQ(allreduce_sends(0, 6, 8).size(), 1u);  // rank 0 hands its data to rank 1 only
  EXPECT_EQ(allreduce_sends(1, 6, 8).size(), 3u);  // 2 rounds + the result back to rank 0
  EXPECT_EQ(allreduce_sends(5, 6, 8).size(), 2u);
  // n = 3: p' = 2, rem = 1; n = 1: nothing.
  EXPECT_EQ(total(all_sends(3, [&](int me) { return allreduce_sends(me, 3, 8); })), 1 + 2 + 1);
  EXPECT_TRUE(allreduce_sends(0, 1, 8).empty());
}

TEST(CollectiveModel, BinomialBcastAndReduceReachEveryRankOnce) {
  for (int n : {1, 2, 3, 5, 6, 8, 13}) {
    for (int root : {0, n - 1, n / 2}) {
      const auto b = all_sends(n, [&](int me) { return bcast_sends(me, root, n, 64); });
      EXPECT_EQ(total(b), n - 1);
      std::set<int> reached;
      for (const auto& [k, v] : b) reached.insert(k.second);
      EXPECT_EQ(static_cast<int>(reached.size()), n - 1);
      EXPECT_EQ(reached.count(root), 0u);
      const auto r = all_sends(n, [&](int me) { return reduce_sends(me, root, n, 64); });
      EXPECT_EQ(total(r), n - 1);
      for (int me = 0; me < n; ++me) EXPECT_EQ(reduce_sends(me, root, n, 64).size(), me == root ? 0u : 1u);
    }
  }
  // n = 8, root 0: the root sends to 4, 2, 1; rank 4 to 6 and 5.
  const auto root = bcast_sends(0, 0, 8, 1);
  ASSERT_EQ(root.size(), 3u);
  EXPECT_EQ(root[0].peer, 4);
  EXPECT_EQ(root[2].peer, 1);
  EXPECT_EQ(reduce_sends(6, 0, 8, 1)[0].peer, 4);
}

TEST(CollectiveModel, AllgatherRingPassesEveryBlockAround) {
  const std::vector<std::uint64_t> blocks = {10, 20, 30, 40, 50};
  std::uint64_t sent = 0;
  for (int me = 0; me < 5; ++me) {
    const auto s = allgather_sends(me, 5, blocks);
    ASSERT_EQ(s.size(), 4u);
    for (const auto& m : s) {
      EXPECT_EQ(m.peer, (me + 1) % 5);
      sent += m.bytes;
    }
    EXPECT_EQ(s[0].bytes, blocks[static_cast<std::size_t>(me)]);  // first its own block
  }
  EXPECT_EQ(sent, 4u * (10 + 20 + 30 + 40 + 50));  // every block travels n - 1 hops
}

TEST(CollectiveModel, GatherScatterLinearAndBarrierDissemination) {
  EXPECT_EQ(total(all_sends(5, [&](int me) { return gather_sends(me, 2, 5, 8); })), 4);
  EXPECT_TRUE(gather_sends(2, 2, 5, 8).empty());
  EXPECT_EQ(scatter_sends(2, 2, 5, {1, 2, 3, 4, 5}).size(), 4u);
  EXPECT_TRUE(scatter_sends(1, 2, 5, {1, 2, 3, 4, 5}).empty());
  for (int n : {2, 3, 5, 8}) {
    int rounds = 0;
    for (int d = 1; d < n; d <<= 1) ++rounds;
    EXPECT_EQ(total(all_sends(n, [&](int me) { return barrier_sends(me, n); })), n * rounds);
  }
}
