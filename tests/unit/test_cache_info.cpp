// Cache discovery: the sysfs fallback on a fake tree, and hwloc on this machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pxq/tiling/cache_info.hpp"
#include "scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace pxq::tiling;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

void fake_index(const fs::path& root, int index, int level, const std::string& type, const std::string& size,
                const std::string& shared) {
  const fs::path d = root / "cpu0" / "cache" / ("index" + std::to_string(index));
  write(d / "level", std::to_string(level));
  write(d / "type", type);
  write(d / "size", size);
  write(d / "shared_cpu_list", shared);
}

struct FakeSysfs : ::testing::Test {
  fs::path root;
  void SetUp() override {
    root = pxq::test::scratch_dir() /
           ("sysfs-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root);
  }
  void TearDown() override { fs::remove_all(root); }
};

}  // namespace

TEST_F(FakeSysfs, ReadsDataCachesAndSkipsInstructionCaches) {
  fake_index(root, 0, 1, "Data", "48K", "0");
  fake_index(root, 1, 1, "Instruction", "32K", "0");
  fake_index(root, 2, 2, "Unified", "2048K", "0-1");
  fake_index(root, 3, 3, "Unified", "105M", "0-7,16-23");
  const CacheInfo c = discover_caches_sysfs(root.string());
  EXPECT_EQ(c.source, "sysfs");
  EXPECT_EQ(c.l1d.bytes, 48u * 1024);
  EXPECT_EQ(c.l2.bytes, 2048u * 1024);
  EXPECT_EQ(c.l2.shared_by, 2);
  EXPECT_EQ(c.l3.bytes, 105u * 1024 * 1024);
  EXPECT_EQ(c.l3.shared_by, 16);
}

TEST_F(FakeSysfs, MissingTreeGivesNoneAndUnreadableEntriesAreSkipped) {
  EXPECT_EQ(discover_caches_sysfs(root.string()).source, "none");
  fake_index(root, 0, 2, "Unified", "lots", "0");
  const CacheInfo c = discover_caches_sysfs(root.string());
  EXPECT_EQ(c.l2.bytes, 0u);
}

TEST(CacheInfo, SysfsSizeAndCpuListParsing) {
  EXPECT_EQ(parse_sysfs_size("48K"), 48u * 1024);
  EXPECT_EQ(parse_sysfs_size("1M"), 1u << 20);
  EXPECT_THROW(parse_sysfs_size("12X"), std::invalid_argument);
  EXPECT_EQ(count_cpu_list("0"), 1);
  EXPECT_EQ(count_cpu_list("0-3,8,10-11"), 7);
}

TEST(CacheInfo, ThisMachineHasAnL2ThatFitsBetweenL1AndL3) {
  const CacheInfo c = discover_caches();
  ASSERT_NE(c.source, "none");
  ASSERT_GT(c.l2.bytes, 0u);
  EXPECT_GT(c.l2.bytes, c.l1d.bytes);
  if (c.l3.bytes) {
    EXPECT_GT(c.l3.bytes, c.l2.bytes);
  }
}
