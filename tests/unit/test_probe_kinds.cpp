// The access kinds' kernels (pxq/probes/kinds.hpp): they do the work they say, and count their
// bytes and flops as the proxies' phases of that kind declare theirs.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "pxq/probes/kinds.hpp"

namespace {

using pxq::probes::make_kind;

TEST(ProbeKinds, GatherCountsAsCgDeclaresAnUnblockedSpmv) {
  const auto g = make_kind("gather", std::size_t{4} << 20);
  const double flops = g->flops(), entries = flops / 2.0, rows = entries / 128.0;
  ASSERT_EQ(std::fmod(entries, 128.0), 0.0);
  // CG: the matrix (8 + 4 per entry, an int64 row pointer per row and one more), x gathered per
  // entry, y written.
  EXPECT_DOUBLE_EQ(g->bytes(), entries * 12.0 + (rows + 1.0) * 8.0 + entries * 8.0 + rows * 8.0);
  EXPECT_GT(g->footprint(), std::size_t{3} << 20);
  EXPECT_LE(g->footprint(), std::size_t{4} << 20);
  // x is all ones: a row's sum is its values', 1/(j % 7 + 1) for its entries j.
  g->sweep();
  const std::size_t middle = static_cast<std::size_t>(rows) / 2;
  double expect = 0.0;
  for (std::size_t j = middle * 128; j < (middle + 1) * 128; ++j) expect += 1.0 / static_cast<double>(j % 7 + 1);
  EXPECT_NEAR(g->checksum(), expect, 1e-12);
}

TEST(ProbeKinds, WindowsCountAsCgDeclaresAWindowedSpmvWithRowsOfTheirMeanLength) {
  for (const auto& [name, mean] : {std::pair<const char*, double>{"window", 8.0}, {"window64", 64.0}}) {
    const auto w = make_kind(name, std::size_t{4} << 20);
    const double entries = w->flops() / 2.0;
    // Their bytes as CG declares an SpMV's: entries (12 B), x per entry, a row pointer per row
    // and one more, y written; so the rows follow, of the kernel's mean length (drawn from 0 to
    // twice it), 20 B an entry and 16 a row (pxq roofline: window_costs).
    const double rows = (w->bytes() - entries * 20.0 - 8.0) / 16.0;
    ASSERT_EQ(rows, std::round(rows)) << name;
    EXPECT_NEAR(entries / rows, mean, mean * 0.02) << name;
    EXPECT_LE(w->footprint(), std::size_t{4} << 20) << name;
    EXPECT_GT(w->footprint(), std::size_t{3} << 20) << name;
    // A row's sum is its values' (x is all ones), written again by every sweep.
    w->sweep();
    const double once = w->checksum();
    EXPECT_GT(once, 0.0) << name;
    w->sweep();
    EXPECT_DOUBLE_EQ(w->checksum(), once) << name;
  }
}

TEST(ProbeKinds, UpdateCountsEveryKeyOnceAndClearsItsCounters) {
  const auto u = make_kind("update", std::size_t{1} << 20);
  const double keys = 1 << 22, counters = (1 << 20) / 4.0;
  EXPECT_DOUBLE_EQ(u->bytes(), keys * 12.0 + counters * 8.0);  // IS: the key, 8 at its counter; counters r+w
  EXPECT_EQ(u->flops(), 0.0);
  u->sweep();
  EXPECT_EQ(u->checksum(), keys);
  u->sweep();
  EXPECT_EQ(u->checksum(), 2 * keys);  // the counters were cleared: each sweep counts its keys again
}

TEST(ProbeKinds, StencilCountsAsMgDeclaresItsResidual) {
  const auto s = make_kind("stencil", std::size_t{3} << 20);
  const double points = s->flops() / 15.0;
  const double side = std::round(std::cbrt(points));
  EXPECT_DOUBLE_EQ(side * side * side, points);
  EXPECT_DOUBLE_EQ(s->bytes(), 24.0 * points);  // u, v and r once each, halos included, as MG
  EXPECT_LE(s->footprint(), std::size_t{3} << 20);
  s->sweep();
  EXPECT_TRUE(std::isfinite(s->checksum()));
  EXPECT_NE(s->checksum(), 0.0);  // r = 0 - A u with u in [0, 1): not left at zero
}

TEST(ProbeKinds, RestrictCountsAsMgDeclaresItsRestriction) {
  const auto r = make_kind("restrict", std::size_t{9} << 20);
  const double fine = r->flops() / 4.0;  // 4 flops per fine point, halos included, as MG
  const double side = std::round(std::cbrt(fine));
  EXPECT_DOUBLE_EQ(side * side * side, fine);
  EXPECT_EQ(std::fmod(side, 2.0), 0.0);      // 2e + 2 points: e coarse interior points per side
  EXPECT_DOUBLE_EQ(r->bytes(), 9.0 * fine);  // r read, an eighth of it written, as MG
  const double coarse = std::pow(side / 2.0 + 1.0, 3.0);
  EXPECT_EQ(r->footprint(), static_cast<std::size_t>(8.0 * (fine + coarse)));
  EXPECT_GT(r->footprint(), std::size_t{6} << 20);
  EXPECT_LE(r->footprint(), std::size_t{10} << 20);
  r->sweep();
  // r in [0, 1): a coarse point is a positive weighted sum of 27 of them (weights 1/2 to 1/16).
  EXPECT_GT(r->checksum(), 0.0);
  EXPECT_LT(r->checksum(), 8.0);
  // A size below the smallest cube still restricts one (side 6: two coarse points per side).
  EXPECT_DOUBLE_EQ(make_kind("restrict", 64)->flops(), 4.0 * 216.0);
}

TEST(ProbeKinds, FftCountsAsFtDeclaresItsTransforms) {
  const auto f = make_kind("fft", std::size_t{1} << 20);
  const double points = (1 << 20) / 16.0;                     // the grid, complex doubles
  EXPECT_DOUBLE_EQ(f->flops(), points * 5.0 * 8.0);           // 5 log2 256 per point
  EXPECT_DOUBLE_EQ(f->bytes(), points * 32.0 * (1.0 + 4.0));  // read and written once, 4 radix-4 passes
  EXPECT_DOUBLE_EQ(f->memory_bytes(), points * 32.0);         // from memory: the grid read and written
  EXPECT_EQ(f->footprint(), std::size_t{1} << 20);
  f->sweep();
  EXPECT_EQ(f->checksum(), 0.0);
  // A size below one line still transforms one whole line.
  EXPECT_DOUBLE_EQ(make_kind("fft", 64)->flops(), 256.0 * 5.0 * 8.0);
}

// Every kind of the registry, the ones added later included: a unit and a size the driver
// knows, a name the probe takes, and a kernel that sweeps and counts its bytes and flops.
TEST(ProbeKinds, EveryRegisteredKindIsWholeAndRuns) {
  ASSERT_FALSE(pxq::probes::kinds().empty());
  for (const auto& k : pxq::probes::kinds()) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(std::string(k.unit) == "gbs" || std::string(k.unit) == "gflops");
    EXPECT_TRUE(std::string(k.size) == "footprint" || std::string(k.size) == "working_set");
    EXPECT_GT(std::string(k.what).size(), 0u);
    EXPECT_TRUE(pxq::probes::is_kind(k.name));
    EXPECT_NE(pxq::probes::kind_names().find(k.name), std::string::npos);
    const auto kernel = make_kind(k.name, std::size_t{1} << 20);
    kernel->sweep();
    EXPECT_GT(kernel->bytes(), 0.0);
    EXPECT_GE(kernel->flops(), 0.0);  // an update counts no flops
    if (std::string(k.unit) == "gflops") {
      EXPECT_GT(kernel->flops(), 0.0);
    }
    // What comes from memory is part of what the kernel moves (the roofline divides by it).
    EXPECT_GT(kernel->memory_bytes(), 0.0);
    EXPECT_LE(kernel->memory_bytes(), kernel->bytes());
    EXPECT_GT(kernel->footprint(), 0u);
    EXPECT_TRUE(std::isfinite(kernel->checksum()));
  }
  EXPECT_FALSE(pxq::probes::is_kind("scatter"));
}

TEST(ProbeKinds, AnUnknownKindIsRefusedNamingTheKinds) {
  try {
    make_kind("scatter", 1 << 20);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gather, window, window64, update, stencil, restrict, interp, fft, alltoall"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
