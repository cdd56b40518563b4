// The ring kernel: every executor and any tiling agree with the frozen reference loop, and
// the closed form predicts the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "pxq/kernels/ring_update.hpp"
#include "pxq/tiling/chunks.hpp"

using namespace pxq::kernels;

namespace {

std::vector<double> initial(long origin, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = ring_initial_value(origin, i);
  return v;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
  return worst;
}

// Every backend this build carries that runs the ring's kernel, from the registry.
std::vector<Backend> carried() { return pxq::kernels::RingFamily::backends(); }

struct Case {
  std::size_t n;
  std::size_t tile;
  int workers;
  int flops;
};

}  // namespace

class RingKernel : public ::testing::TestWithParam<Case> {};

TEST_P(RingKernel, ExecutorsAndTilesMatchTheReference) {
  const Case c = GetParam();
  RingParams p;
  p.passes = 3;
  p.flops = c.flops;
  for (Backend b : carried()) {
    std::vector<std::vector<double>> blocks, refs;
    std::vector<double*> ptrs;
    for (int w = 0; w < c.workers; ++w) {
      blocks.push_back(initial(w, c.n));
      refs.push_back(initial(w, c.n));
      ring_passes_reference(refs.back().data(), c.n, p);
    }
    ptrs.reserve(blocks.size());
    for (auto& blk : blocks) ptrs.push_back(blk.data());
    pxq::tiling::for_each_tile(c.n, c.tile, [&](std::size_t lo, std::size_t hi) {
      ring_passes_workers(b, ptrs.data(), c.workers, lo, hi, p);
    });
    for (int w = 0; w < c.workers; ++w)
      EXPECT_LE(max_rel_diff(blocks[w], refs[w]), 1e-14)
          << backend_name(b) << " worker " << w << " n=" << c.n << " tile=" << c.tile;
    // The same tiles walked by each worker inside one call (RingParams::tile).
    RingParams walked = p;
    walked.tile = c.tile;
    for (int w = 0; w < c.workers; ++w) {
      const std::vector<double> fresh = initial(w, c.n);
      std::copy(fresh.begin(), fresh.end(), blocks[w].begin());
    }
    ring_passes_workers(b, ptrs.data(), c.workers, 0, c.n, walked);
    for (int w = 0; w < c.workers; ++w)
      EXPECT_LE(max_rel_diff(blocks[w], refs[w]), 1e-14)
          << backend_name(b) << " worker " << w << " n=" << c.n << " tile=" << c.tile << " walked in one call";
  }
}

INSTANTIATE_TEST_SUITE_P(SizesTilesWorkers, RingKernel,
                         ::testing::Values(Case{1, 1, 1, 1},        // one element
                                           Case{1, 1, 2, 3},        // one element, two workers
                                           Case{1000, 1000, 1, 1},  // untiled
                                           Case{1000, 64, 2, 1},    // tiles that do not divide the buffer
                                           Case{1000, 7, 2, 2},     // odd tile shorter than a strip
                                           Case{4099, 1024, 3, 4},  // more workers than test threads
                                           Case{65536, 4096, 2, 1}));

TEST(RingKernel, ClosedFormPredictsTheReference) {
  RingParams p;
  p.passes = 8;
  p.flops = 5;
  std::vector<double> x = initial(3, 257);
  for (int it = 0; it < 4; ++it) ring_passes_reference(x.data(), x.size(), p);
  const AffinePower f = affine_power(p, 4.0 * 8 * 5);
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(x[i], f.scale * ring_initial_value(3, i) + f.shift, 1e-13 * std::fabs(x[i]));
}

TEST(RingKernel, AUpdateChangesTheValueSoAMissedPassIsCaught) {
  RingParams p;
  p.passes = 1;
  std::vector<double> x = initial(0, 16), y = x;
  ring_passes_workers("openmp", std::vector<double*>{x.data()}.data(), 1, 0, 16, p);
  EXPECT_GT(max_rel_diff(x, y), 1e-8);
}

TEST(RingKernel, InitialValuesDifferPerOrigin) {
  EXPECT_NE(ring_initial_value(0, 5), ring_initial_value(1, 5));
  EXPECT_NE(ring_initial_value(0, 5), ring_initial_value(0, 6));
}
