// Tile policy: parsing of sizes and policies, clamping and rounding in resolve_tile.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pxq/tiling/chunks.hpp"
#include "pxq/tiling/tile_policy.hpp"

using namespace pxq::tiling;

TEST(ParseBytes, AcceptsPlainAndSuffixedSizes) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("256K"), 256u * 1024);
  EXPECT_EQ(parse_bytes("256k"), 256u * 1024);
  EXPECT_EQ(parse_bytes("256KiB"), 256u * 1024);
  EXPECT_EQ(parse_bytes("1M"), 1u << 20);
  EXPECT_EQ(parse_bytes("2G"), 2ull << 30);
}

TEST(ParseBytes, RejectsZeroNegativeAndUnknownSuffixes) {
  for (const char* bad : {"0", "-1", "12Q", "", "K", "1.5M", "abc", "99999999999999999999999"})
    EXPECT_THROW(parse_bytes(bad), std::invalid_argument) << bad;
}

TEST(ParseBytes, ErrorNamesTheTextAndTheFix) {
  try {
    parse_bytes("12Q");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("12Q"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("256K"), std::string::npos);
  }
}

TEST(TilePolicy, ParsesOffAutoAndSizes) {
  EXPECT_EQ(parse_tile_policy("off").kind, TilePolicy::Kind::off);
  EXPECT_EQ(parse_tile_policy("auto").kind, TilePolicy::Kind::automatic);
  const TilePolicy p = parse_tile_policy("64K");
  EXPECT_EQ(p.kind, TilePolicy::Kind::bytes);
  EXPECT_EQ(p.bytes, 65536u);
  EXPECT_THROW(parse_tile_policy("0"), std::invalid_argument);
  EXPECT_THROW(parse_tile_policy("-1"), std::invalid_argument);
}

TEST(ResolveTile, OffMeansTheWholeBuffer) {
  const auto r = resolve_tile(parse_tile_policy("off"), 1 << 20, 8, CacheInfo{});
  EXPECT_FALSE(r.tiled);
  EXPECT_EQ(r.elements, (1u << 20) / 8);
}

TEST(ResolveTile, LargerThanBufferIsClampedWithAWarning) {
  const auto r = resolve_tile(parse_tile_policy("4M"), 1 << 20, 8, CacheInfo{});
  EXPECT_TRUE(r.tiled);
  EXPECT_EQ(r.bytes, 1u << 20);
  EXPECT_FALSE(r.warning.empty());
}

TEST(ResolveTile, RoundsDownToWholeElements) {
  const auto r = resolve_tile(parse_tile_policy("1001"), 1 << 20, 8, CacheInfo{});
  EXPECT_EQ(r.bytes, 1000u);
  EXPECT_EQ(r.elements, 125u);
  EXPECT_FALSE(r.warning.empty());
}

TEST(ParseTilePolicy, RefusesTilesUnderEightCacheLines) {
  EXPECT_THROW(parse_tile_policy("12"), std::invalid_argument);
  EXPECT_THROW(parse_tile_policy("511"), std::invalid_argument);
  EXPECT_EQ(parse_tile_policy("512").bytes, kMinTileBytes);
}

TEST(ResolveTile, SmallerThanAnElementBecomesOneElement) {
  // Below what parse_tile_policy accepts, but resolve_tile must still make a whole element.
  const TilePolicy tiny{TilePolicy::Kind::bytes, 4, "4"};
  const auto r = resolve_tile(tiny, 64, 8, CacheInfo{});
  EXPECT_EQ(r.elements, 1u);
  EXPECT_EQ(r.bytes, 8u);
}

TEST(ResolveTile, AutoTakesTheKernelsShareOfTheL2AndFallsBackWithoutCaches) {
  CacheInfo c;
  c.l2.bytes = 2 << 20;
  const auto r = resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c);
  EXPECT_EQ(r.bytes, (2u << 20) / kAutoL2Divisor);
  EXPECT_EQ(r.source, "auto:L2/2");
  const auto q = resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c, parse_auto_share("L2/4"));
  EXPECT_EQ(q.bytes, 512u << 10);
  EXPECT_EQ(q.source, "auto:L2/4");
  EXPECT_EQ(resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c, AutoShare{2, 0}).bytes, 2u << 20);  // 0 means 1
  c.l2.bytes = 1024;  // a tiny L2 never gives a tile under the smallest one accepted
  EXPECT_EQ(resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c, AutoShare{2, 4}).bytes, kMinTileBytes);
  const auto f = resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, CacheInfo{});
  EXPECT_EQ(f.bytes, kAutoFallbackBytes);
  EXPECT_EQ(f.source, "auto:fallback");
}

TEST(ResolveTile, AnL3ShareTakesOneCoresPartOfTheL3OrTheL2WithoutOne) {
  CacheInfo c;
  c.l2.bytes = 1 << 20;
  c.l3.bytes = 32 << 20;
  c.l3.shared_by = 2;
  const auto r = resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c, parse_auto_share("L3/2"));
  EXPECT_EQ(r.bytes, 8u << 20);  // 32 MiB over 2 cores, half of that
  EXPECT_EQ(r.source, "auto:L3/2");
  c.l3.shared_by = 0;  // sharing unknown: the whole L3 counts as one core's
  EXPECT_EQ(resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c, AutoShare{3, 4}).bytes, 8u << 20);
  c.l3.bytes = 0;  // no L3: the L2 with the same divisor
  const auto q = resolve_tile(parse_tile_policy("auto"), 64 << 20, 8, c, parse_auto_share("L3/2"));
  EXPECT_EQ(q.bytes, 512u << 10);
  EXPECT_EQ(q.source, "auto:L2/2");
  // Larger than the buffer: clamped, with the warning, like any tile.
  c.l3.bytes = 32 << 20;
  const auto b = resolve_tile(parse_tile_policy("auto"), 1 << 20, 8, c, AutoShare{3, 1});
  EXPECT_EQ(b.bytes, 1u << 20);
  EXPECT_FALSE(b.warning.empty());
}

TEST(UntiledReason, AutoLeavesOffOnlyWhatFitsTheCacheItsShareTargets) {
  CacheInfo c;
  c.l2.bytes = 512 << 10;
  c.l3.bytes = 32 << 20;
  c.l3.shared_by = 2;
  const AutoShare l2{2, 4}, l3{3, 2};
  // An L2 share: one core's L2, whatever the threads (each reads the buffer through its own).
  const std::string fits = untiled_reason(56000, c, l2, 1);
  EXPECT_NE(fits.find("54.7K"), std::string::npos) << fits;
  EXPECT_NE(fits.find("one core's L2 (512K)"), std::string::npos) << fits;
  EXPECT_EQ(untiled_reason(512 << 10, c, l2, 1).empty(), false);  // exactly the L2: it fits
  EXPECT_EQ(untiled_reason((512 << 10) + 8, c, l2, 1), "");
  EXPECT_EQ(untiled_reason(600000, c, l2, 2), "");  // CG class B's x at 1x1x2: larger than an L2
  // An L3 share: one core's part (16M here) times the rank's threads.
  EXPECT_NE(untiled_reason(8 << 20, c, l3, 1), "");
  EXPECT_EQ(untiled_reason(24 << 20, c, l3, 1), "");
  const std::string two = untiled_reason(24 << 20, c, l3, 2);
  EXPECT_NE(two.find("the L3 part of its 2 cores (32M)"), std::string::npos) << two;
  // No cache known: no reason (auto falls back to its rule and tiles).
  EXPECT_EQ(untiled_reason(1024, CacheInfo{}, l2, 1), "");
  EXPECT_EQ(untiled_reason(1024, CacheInfo{}, l3, 1), "");
}

TEST(ParseAutoShare, ReadsTheLevelAndDivisorAndRefusesAnythingElse) {
  const AutoShare a = parse_auto_share("L3/2");
  EXPECT_EQ(a.level, 3);
  EXPECT_EQ(a.divisor, 2u);
  EXPECT_EQ(a.text(), "L3/2");
  EXPECT_EQ(parse_auto_share("L2/1024").divisor, 1024u);
  for (const char* bad : {"", "L2", "L2/", "L1/2", "L4/2", "l2/2", "L2/0", "L2/1025", "L2/-1", "L2/2x", "L3/02000"})
    EXPECT_THROW(parse_auto_share(bad), std::invalid_argument) << bad;
}

TEST(ResolveTile, BufferSmallerThanOneElementIsAnError) {
  EXPECT_THROW(resolve_tile(parse_tile_policy("off"), 4, 8, CacheInfo{}), std::invalid_argument);
}

TEST(Chunks, TilesCoverTheRangeOnceInOrderWithAShortLastTile) {
  std::size_t expected_begin = 0, count = 0;
  for_each_tile(10, 4, [&](std::size_t b, std::size_t e) {
    EXPECT_EQ(b, expected_begin);
    EXPECT_LE(e - b, 4u);
    expected_begin = e;
    ++count;
  });
  EXPECT_EQ(expected_begin, 10u);
  EXPECT_EQ(count, tile_count(10, 4));
  EXPECT_EQ(count, 3u);
}

TEST(Chunks, PipelineHandsOffEachTileRightAfterComputingIt) {
  std::string trace;
  pipeline(
      5, 2, [&](std::size_t b, std::size_t) { trace += "c" + std::to_string(b); },
      [&](std::size_t b, std::size_t) { trace += "h" + std::to_string(b); });
  EXPECT_EQ(trace, "c0h0c2h2c4h4");
}

TEST(FormatBytes, UsesTheLargestExactUnit) {
  EXPECT_EQ(format_bytes(262144), "256K");
  EXPECT_EQ(format_bytes(1 << 20), "1M");
  EXPECT_EQ(format_bytes(1000), "1000");
}
