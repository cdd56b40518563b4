// The NAS random stream: pxq's integer formulation against NAS's published double-precision
// algorithm (split into 23-bit halves), and jump-ahead against stepping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "pxq/kernels/nas_random.hpp"

namespace {

// NAS randlc as published: x and a held in doubles, products split at 2^23 so every
// intermediate is exact.
double nas_randlc_double(double& x, double a) {
  const double r23 = std::pow(0.5, 23), r46 = r23 * r23, t23 = std::pow(2.0, 23), t46 = t23 * t23;
  double t1 = r23 * a;
  const double a1 = static_cast<double>(static_cast<long long>(t1));
  const double a2 = a - t23 * a1;
  t1 = r23 * x;
  const double x1 = static_cast<double>(static_cast<long long>(t1));
  const double x2 = x - t23 * x1;
  t1 = a1 * x2 + a2 * x1;
  const double t2 = static_cast<double>(static_cast<long long>(r23 * t1));
  const double z = t1 - t23 * t2;
  const double t3 = t23 * z + a2 * x2;
  const double t4 = static_cast<double>(static_cast<long long>(r46 * t3));
  x = t3 - t46 * t4;
  return r46 * x;
}

TEST(NasRandom, MatchesNasDoubleAlgorithmBitForBit) {
  pxq::kernels::NasRandom rng;
  double x = pxq::kernels::kNasDefaultSeed;
  for (int i = 0; i < 100000; ++i) {
    const double expected = nas_randlc_double(x, pxq::kernels::kNasMultiplier);
    const double got = rng.next();
    ASSERT_EQ(got, expected) << "value " << i;
    ASSERT_EQ(rng.state(), x) << "state " << i;
  }
}

TEST(NasRandom, FirstValueIsTheSeedTimesTheMultiplierMod2To46) {
  pxq::kernels::NasRandom rng;
  const std::uint64_t expected = (314159265ULL * 1220703125ULL) % (1ULL << 46);  // fits in 64 bits
  EXPECT_EQ(rng.next(), static_cast<double>(expected) / static_cast<double>(1ULL << 46));
  EXPECT_GT(rng.next(), 0.0);
}

TEST(NasRandom, SkipEqualsStepping) {
  for (std::uint64_t k : {0ULL, 1ULL, 2ULL, 17ULL, 1000ULL, 123457ULL}) {
    pxq::kernels::NasRandom stepped, jumped;
    for (std::uint64_t i = 0; i < k; ++i) stepped.next();
    jumped.skip(k);
    EXPECT_EQ(stepped.state(), jumped.state()) << "k = " << k;
    EXPECT_EQ(stepped.next(), jumped.next());
  }
}

}  // namespace
