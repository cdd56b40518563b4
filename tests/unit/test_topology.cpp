// Packed, spread and custom core choices on synthetic topologies loaded from hwloc XML, so
// that two-socket and shared-L2 machines are tested on any machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "pxq/tiling/topology.hpp"

using namespace pxq::tiling;

namespace {

const std::string kData = PXQ_TEST_DATA_DIR;
// 2 packages x (one 32 MiB L3 over 4 cores, each with its own 1 MiB L2); OS cpu numbers
// alternate between the packages: package 0 holds P#0,2,4,6.
Topology two_sockets() { return topology_from_xml(kData + "/two_sockets.xml"); }
// 2 packages x 2 L2s x 2 cores: every L2 is shared by two cores.
Topology shared_l2() { return topology_from_xml(kData + "/shared_l2.xml"); }

std::vector<int> indices(const NodePlacement& n) {
  std::vector<int> out;
  for (const auto& rank : n.ranks)
    for (const auto& c : rank) out.push_back(c.index);
  return out;
}

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(Topology, XmlGivesCoresInLogicalOrderWithTheirCachesAndCpuNumbers) {
  const Topology t = two_sockets();
  ASSERT_EQ(t.cores.size(), 8u);
  EXPECT_EQ(t.packages, 2);
  EXPECT_EQ(t.l2_instances, 8);
  EXPECT_EQ(t.l3_instances, 2);
  EXPECT_EQ(t.cores[1].cpu, 2);  // logical core 1 is P#2
  EXPECT_EQ(t.cores[4].cpu, 1);
  EXPECT_EQ(t.cores[4].package, 1);
  EXPECT_EQ(t.cores[3].l3, 0);
  EXPECT_EQ(sharing_between(t.cores[0], t.cores[1]), Sharing::same_l3);
  EXPECT_EQ(sharing_between(t.cores[0], t.cores[4]), Sharing::other_package);
  const Topology s = shared_l2();
  EXPECT_EQ(sharing_between(s.cores[0], s.cores[1]), Sharing::same_l2);
  EXPECT_EQ(sharing_between(s.cores[1], s.cores[2]), Sharing::same_l3);
}

TEST(Topology, PackedFillsCachesFirstAndWarnsWhenNoL2IsShared) {
  const auto plan = plan_placement(two_sockets(), "packed", 1, 4, 1, false);
  ASSERT_EQ(plan.nodes.size(), 1u);
  EXPECT_EQ(indices(plan.nodes[0]), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.nodes[0].sharing.same_l3, 6);
  EXPECT_EQ(plan.nodes[0].sharing.other_package, 0);
  EXPECT_TRUE(mentions(plan.warnings, "every core has its own L2"));

  const auto pair = plan_placement(shared_l2(), "packed", 1, 2, 1, false);
  EXPECT_EQ(indices(pair.nodes[0]), (std::vector<int>{0, 1}));
  EXPECT_EQ(pair.nodes[0].sharing.same_l2, 1);
  EXPECT_TRUE(pair.warnings.empty());
}

TEST(Topology, SpreadDividesRanksOverPackagesThenCaches) {
  const auto two = plan_placement(two_sockets(), "spread", 1, 2, 1, false);
  EXPECT_EQ(indices(two.nodes[0]), (std::vector<int>{0, 4}));
  EXPECT_EQ(two.nodes[0].ranks[1][0].cpu, 1);
  EXPECT_EQ(two.nodes[0].sharing.other_package, 1);
  EXPECT_TRUE(two.warnings.empty());

  const auto four = plan_placement(two_sockets(), "spread", 1, 4, 1, false);
  EXPECT_EQ(indices(four.nodes[0]), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(four.nodes[0].sharing.other_package, 4);
  EXPECT_EQ(four.nodes[0].sharing.same_l3, 2);

  // On shared L2s, spread ranks of one package take different L2s.
  const auto l2 = plan_placement(shared_l2(), "spread", 1, 4, 1, false);
  EXPECT_EQ(indices(l2.nodes[0]), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(l2.nodes[0].sharing.same_l2, 0);

  // Threads of one rank stay together: a package per rank, then 3 ranks over 2 packages.
  const auto threads = plan_placement(two_sockets(), "spread", 1, 2, 4, false);
  EXPECT_EQ(indices(threads.nodes[0]), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  const auto odd = plan_placement(two_sockets(), "spread", 1, 3, 2, false);
  EXPECT_EQ(indices(odd.nodes[0]), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Topology, VirtualNodesOwnDisjointRunsOfCoresAndRealNodesRepeatTheChoice) {
  const auto packed = plan_placement(two_sockets(), "packed", 2, 2, 1, true);
  ASSERT_EQ(packed.nodes.size(), 2u);
  EXPECT_EQ(indices(packed.nodes[0]), (std::vector<int>{0, 1}));
  EXPECT_EQ(indices(packed.nodes[1]), (std::vector<int>{4, 5}));
  const auto spread = plan_placement(two_sockets(), "spread", 2, 2, 1, true);
  EXPECT_EQ(indices(spread.nodes[0]), (std::vector<int>{0, 2}));
  EXPECT_EQ(indices(spread.nodes[1]), (std::vector<int>{4, 6}));
  // Each virtual node lies in one package: spread cannot reach another package.
  EXPECT_TRUE(mentions(spread.warnings, "lie in one package"));

  const auto real = plan_placement(two_sockets(), "spread", 3, 2, 1, false);
  ASSERT_EQ(real.nodes.size(), 3u);
  EXPECT_EQ(indices(real.nodes[2]), (std::vector<int>{0, 4}));
}

TEST(Topology, CustomTakesCpuNumbersAndChecksThem) {
  const auto plan = plan_placement(two_sockets(), "custom", 1, 2, 1, false, {1, 0});
  EXPECT_EQ(indices(plan.nodes[0]), (std::vector<int>{4, 0}));
  EXPECT_EQ(plan.nodes[0].sharing.other_package, 1);
  EXPECT_THROW(plan_placement(two_sockets(), "custom", 1, 2, 1, false, {0}), std::invalid_argument);
  EXPECT_THROW(plan_placement(two_sockets(), "custom", 1, 2, 1, false, {0, 9}), std::invalid_argument);
  EXPECT_THROW(plan_placement(two_sockets(), "custom", 1, 2, 1, false, {3, 3}), std::invalid_argument);
}

TEST(Topology, UnsatisfiableRequestsNameTheProblem) {
  try {
    plan_placement(two_sockets(), "packed", 1, 9, 1, false);
    FAIL() << "9 ranks on 8 cores";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs 9 cores"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_placement(two_sockets(), "spread", 2, 5, 1, true), std::invalid_argument);  // 4 per node
  EXPECT_THROW(plan_placement(two_sockets(), "closest", 1, 2, 1, false), std::invalid_argument);
  EXPECT_THROW(plan_placement(two_sockets(), "packed", 1, 0, 1, false), std::invalid_argument);
  const std::string bad = ::testing::TempDir() + "/pxq-not-a-topology.xml";
  std::ofstream(bad) << "<topology>";
  try {
    topology_from_xml(bad);
    FAIL() << "a broken XML file loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos);
  }
  std::remove(bad.c_str());
}

TEST(Topology, ThisMachineHasCoresAndOneCopyOfSpreadPerNode) {
  const Topology t = this_topology();
  ASSERT_GE(t.cores.size(), 1u);
  EXPECT_GE(t.packages, 1);
  const auto plan = plan_placement(t, "spread", 1, 1, 1, false);
  EXPECT_EQ(plan.nodes[0].ranks.size(), 1u);
  EXPECT_TRUE(plan.warnings.empty());  // one rank: nothing to share
}
