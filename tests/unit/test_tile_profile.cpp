// The machine tile profile: its best tile on the machine it was made on (nearest thread
// count), nothing with a note on another machine or for a kernel it lacks, nothing at all
// without a file, and a clear error naming the file for anything that is not a profile.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "pxq/common/tile_profile.hpp"
#include "scratch_dir.hpp"

namespace {

using pxq::common::MachineIdentity;
using pxq::common::profile_tile;

const MachineIdentity kHere{"node7", "Example CPU 9000", 49152, 2097152, 110100480};

std::string write(const std::string& name, const std::string& text) {
  // In the program's own scratch folder (removed when it ends).
  const auto path = pxq::test::scratch_dir() / (name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

std::string profile(const std::string& host, const std::string& kernels,
                    const std::string& header = R"("kind": "tile-profile", "schema": 2)") {
  return "{" + header + R"(, "date": "2026-11-21", "machine": {"host": ")" + host +
         R"(", "cpu_model": "Example CPU 9000", "caches": {"l1d": 49152, "l2": 2097152, "l3": 110100480}},
    "kernels": )" +
         kernels + "}";
}

const std::string kKernels =
    R"({"ring_pass": {"1": {"tile": 524288, "gbs": 70.1, "spread": 0.02}, "4": {"tile": 131072}},
        "mg_resid": {"2": {"tile": 65536}}})";

TEST(TileProfile, GivesTheBestTileForTheNearestThreadCountOnItsMachine) {
  const auto path = write("same", profile("node7", kKernels));
  EXPECT_EQ(profile_tile(path, "ring_pass", 1, kHere).bytes, 524288u);
  EXPECT_EQ(profile_tile(path, "ring_pass", 2, kHere).bytes, 524288u);  // 1 is nearer than 4
  EXPECT_EQ(profile_tile(path, "ring_pass", 8, kHere).bytes, 131072u);
  EXPECT_EQ(profile_tile(path, "mg_resid", 1, kHere).bytes, 65536u);
  EXPECT_TRUE(profile_tile(path, "ring_pass", 1, kHere).note.empty());
}

TEST(TileProfile, SaysUpToWhichBufferTilingDidNotPayWhereTuneWeighedIt) {
  const auto path = write("pays", profile("node7", R"({
      "cg_spmv": {"1": {"tile": 262144, "gbs": 4.8, "buffer": 600000, "untiled_gbs": 5.2, "pays": false},
                  "2": {"tile": 262144, "gbs": 9.0, "buffer": 600000, "untiled_gbs": 6.0, "pays": true}},
      "ring_pass": {"1": {"tile": 65536}}})"));
  const auto lost = profile_tile(path, "cg_spmv", 1, kHere);
  EXPECT_EQ(lost.bytes, 262144u);
  EXPECT_EQ(lost.untiled_up_to, 600000u);
  EXPECT_EQ(lost.threads, 1);
  EXPECT_DOUBLE_EQ(lost.untiled_gbs, 5.2);
  EXPECT_EQ(profile_tile(path, "cg_spmv", 2, kHere).untiled_up_to, 0u);    // it paid on 2 threads
  EXPECT_EQ(profile_tile(path, "ring_pass", 1, kHere).untiled_up_to, 0u);  // never weighed
  EXPECT_THROW(profile_tile(write("pays-bad", profile("node7", R"({"cg_spmv": {"1": {"tile": 4096, "pays": "no",
      "buffer": 8}}})")),
                            "cg_spmv", 1, kHere),
               std::invalid_argument);
  EXPECT_THROW(profile_tile(write("buffer-bad", profile("node7", R"({"cg_spmv": {"1": {"tile": 4096, "buffer": 0}}})")),
                            "cg_spmv", 1, kHere),
               std::invalid_argument);
}

TEST(TileProfile, VersionOneProfilesAreStillRead) {
  const auto path = write("legacy", profile("node7", kKernels, R"("schema": "pxq-tile-profile/1")"));
  EXPECT_EQ(profile_tile(path, "ring_pass", 1, kHere).bytes, 524288u);
}

TEST(TileProfile, AnotherMachineOrAMissingKernelGivesNothingWithANote) {
  const auto other = write("other", profile("node8", kKernels));
  const auto c = profile_tile(other, "ring_pass", 1, kHere);
  EXPECT_EQ(c.bytes, 0u);
  EXPECT_NE(c.note.find("another machine (node8"), std::string::npos) << c.note;
  MachineIdentity bigger = kHere;
  bigger.l2 *= 2;  // same host and CPU model, other caches: not the same machine
  EXPECT_EQ(profile_tile(write("same2", profile("node7", kKernels)), "ring_pass", 1, bigger).bytes, 0u);
  const auto m = profile_tile(write("same3", profile("node7", kKernels)), "ft_pencils", 1, kHere);
  EXPECT_EQ(m.bytes, 0u);
  EXPECT_NE(m.note.find("no entry for kernel ft_pencils"), std::string::npos) << m.note;
}

TEST(TileProfile, NoFileMeansTheCacheRuleSilently) {
  const auto c = profile_tile("/nonexistent/pxq/tiles.json", "ring_pass", 1, kHere);
  EXPECT_EQ(c.bytes, 0u);
  EXPECT_TRUE(c.note.empty());
  EXPECT_EQ(profile_tile("", "ring_pass", 1, kHere).bytes, 0u);
}

TEST(TileProfile, CorruptProfilesAreClearErrors) {
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"truncated", profile("node7", kKernels).substr(0, 60)},
        {"schema", R"({"schema": "other", "kernels": {}})"},
        {"kind", profile("node7", kKernels, R"("kind": "run", "schema": 2)")},
        {"version", profile("node7", kKernels, R"("kind": "tile-profile", "schema": 3)")},
        {"no-machine", R"({"kind": "tile-profile", "schema": 2, "kernels": {}})"},
        {"zero-tile", profile("node7", R"({"ring_pass": {"1": {"tile": 0}}})")},
        {"no-threads", profile("node7", R"({"ring_pass": {}})")}}) {
    const auto path = write(name, text);
    try {
      profile_tile(path, "ring_pass", 1, kHere);
      ADD_FAILURE() << name << ": no error";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find("pxq tune --replace-profile"), std::string::npos) << msg;
    }
  }
}

TEST(TileProfile, PathFollowsTheEnvironment) {
  const char* home = std::getenv("HOME");
  const std::string saved = home ? home : "";
  setenv("PXQ_TILE_PROFILE", "/tmp/p.json", 1);
  EXPECT_EQ(pxq::common::tile_profile_path(), "/tmp/p.json");
  unsetenv("PXQ_TILE_PROFILE");
  setenv("XDG_CONFIG_HOME", "/tmp/cfg", 1);
  EXPECT_EQ(pxq::common::tile_profile_path(), "/tmp/cfg/pxq/tiles.json");
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(pxq::common::tile_profile_path(), "/home/u/.config/pxq/tiles.json");
  if (home) setenv("HOME", saved.c_str(), 1);
}

}  // namespace
