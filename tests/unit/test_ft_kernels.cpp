// The FT kernels: the batched FFT against a naive DFT for every power-of-two length up to
// 512 in both directions, the forward+inverse round trip; every executor's passes (in
// place, from rows and from strided lines, into another layout, with the evolve fused)
// against per-line naive DFTs; the batched passes bit for bit against one line per batch;
// copy and evolve against plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "executors.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/fft.hpp"
#include "pxq/kernels/ft_ops.hpp"

namespace {

using pxq::kernels::Backend;
using pxq::kernels::Complex;
using pxq::kernels::FftDirection;
using pxq::kernels::FftPlan;

constexpr double kPi = 3.141592653589793238;

std::vector<Complex> random_complex(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<Complex> v(n);
  for (auto& x : v) x = Complex(val(gen), val(gen));
  return v;
}

// The DFT by its definition, in long double: X(k) = sum_j x(j) e^{sign 2 pi i jk/n}.
std::vector<Complex> naive_dft(const std::vector<Complex>& x, FftDirection dir) {
  const std::size_t n = x.size();
  const long double sign = dir == FftDirection::forward ? -1.0L : 1.0L;
  std::vector<Complex> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    long double re = 0, im = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const long double a = sign * 2.0L * static_cast<long double>(kPi) * static_cast<long double>((j * k) % n) /
                            static_cast<long double>(n);
      re += x[j].real() * std::cos(a) - x[j].imag() * std::sin(a);
      im += x[j].real() * std::sin(a) + x[j].imag() * std::cos(a);
    }
    out[k] = Complex(static_cast<double>(re), static_cast<double>(im));
  }
  return out;
}

void expect_near_lines(const std::vector<Complex>& got, const std::vector<Complex>& want, double scale,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_LT(std::abs(got[i] - want[i]), 1e-13 * scale) << what << " at " << i << ": " << got[i] << " vs " << want[i];
}

// Runs the plan on `lines` lines held as (line b, element i) -> v[b*n + i], batched in the
// plan's layout (FftPlan::at).
std::vector<Complex> batch_fft(const FftPlan& plan, const std::vector<Complex>& v, int lines, FftDirection dir) {
  const int n = plan.size();
  std::vector<double> buf(pxq::kernels::fft_batch_doubles(n, lines));
  const std::size_t len = static_cast<std::size_t>(n) * lines;
  for (int b = 0; b < lines; ++b)
    for (int i = 0; i < n; ++i) {
      buf[plan.at(i, b, lines)] =
          v[static_cast<std::size_t>(b) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)].real();
      buf[len + plan.at(i, b, lines)] =
          v[static_cast<std::size_t>(b) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)].imag();
    }
  const bool in_work = plan.run(buf.data(), buf.data() + len, buf.data() + 2 * len, buf.data() + 3 * len, lines, dir);
  const double* re = buf.data() + (in_work ? 2 * len : 0);
  const double* im = re + len;
  std::vector<Complex> out(v.size());
  for (int b = 0; b < lines; ++b)
    for (int i = 0; i < n; ++i)
      out[static_cast<std::size_t>(b) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)] =
          Complex(re[plan.at(i, b, lines)], im[plan.at(i, b, lines)]);
  return out;
}

TEST(FtFft, MatchesNaiveDftForEveryPowerOfTwoAndBothDirections) {
  for (int n = 1; n <= 512; n *= 2) {
    const FftPlan plan(n);
    const int lines = 3;
    const auto v = random_complex(static_cast<std::size_t>(n) * lines, 100u + static_cast<unsigned>(n));
    for (const auto dir : {FftDirection::forward, FftDirection::inverse}) {
      const auto got = batch_fft(plan, v, lines, dir);
      for (int b = 0; b < lines; ++b) {
        const std::vector<Complex> line(v.begin() + std::ptrdiff_t{b} * n, v.begin() + std::ptrdiff_t{b + 1} * n);
        const std::vector<Complex> out(got.begin() + std::ptrdiff_t{b} * n, got.begin() + std::ptrdiff_t{b + 1} * n);
        expect_near_lines(out, naive_dft(line, dir), std::sqrt(n) * 8,
                          "n=" + std::to_string(n) + (dir == FftDirection::forward ? " forward" : " inverse") +
                              " line " + std::to_string(b));
      }
    }
  }
}

TEST(FtFft, ForwardThenInverseGivesNTimesTheInput) {
  for (int n : {2, 8, 64, 256, 512}) {
    const FftPlan plan(n);
    const auto v = random_complex(static_cast<std::size_t>(n) * 5, 7u);
    auto back = batch_fft(plan, batch_fft(plan, v, 5, FftDirection::forward), 5, FftDirection::inverse);
    for (auto& x : back) x /= n;
    expect_near_lines(back, v, 4.0, "round trip n=" + std::to_string(n));
  }
}

// FFTW's engine against pxq's own on the same lines, in each engine's batch layout, for
// every width FT's batches take (1, odd, NAS's 16, a tiled 64) and both directions.
TEST(FtFft, FftwEngineMatchesPxqsOwn) {
  if (!pxq::kernels::fftw_available()) {
    EXPECT_THROW(pxq::kernels::parse_fft_engine("fftw"), std::invalid_argument);
    return;
  }
  EXPECT_EQ(pxq::kernels::parse_fft_engine("fftw"), pxq::kernels::FftEngine::fftw);
  EXPECT_FALSE(pxq::kernels::fftw_version().empty());
  for (int n = 1; n <= 512; n *= 2)
    for (int lines : {1, 3, 16, 64}) {
      const FftPlan own(n), fftw(n, pxq::kernels::FftEngine::fftw);
      ASSERT_TRUE(fftw.line_major());
      ASSERT_FALSE(own.line_major());
      const auto v = random_complex(static_cast<std::size_t>(n) * lines, 300u + static_cast<unsigned>(n + lines));
      for (const auto dir : {FftDirection::forward, FftDirection::inverse})
        expect_near_lines(batch_fft(fftw, v, lines, dir), batch_fft(own, v, lines, dir), std::sqrt(n) * 8,
                          "n=" + std::to_string(n) + " lines=" + std::to_string(lines));
    }
}

TEST(FtFft, RejectsUnknownEngines) {
  EXPECT_THROW(pxq::kernels::parse_fft_engine("fftw3"), std::invalid_argument);
  EXPECT_EQ(pxq::kernels::parse_fft_engine("pxq"), pxq::kernels::FftEngine::pxq);
}

TEST(FtFft, RejectsLengthsThatAreNotPowersOfTwo) {
  EXPECT_THROW(FftPlan(0), std::invalid_argument);
  EXPECT_THROW(FftPlan(12), std::invalid_argument);
  EXPECT_THROW(FftPlan(-4), std::invalid_argument);
}

TEST(FtFft, BatchLinesFollowTheTile) {
  using pxq::kernels::ft_batch_lines;
  // A batch of B lines of 256 takes 4 * 256 * B doubles = 8 KiB per line.
  EXPECT_EQ(ft_batch_lines(std::size_t{256} * 1024, 256, false), 32);
  EXPECT_EQ(ft_batch_lines(256 * 1024 - 1, 256, false), 16);
  EXPECT_EQ(ft_batch_lines(1, 256, false), 1);
  EXPECT_EQ(ft_batch_lines(std::size_t{2} * 1024 * 1024, 64, false), 1024);
  // Rows are gathered by transposition: at most one cache line of lines.
  EXPECT_EQ(ft_batch_lines(std::size_t{256} * 1024, 256, true), pxq::kernels::kTransposeLines);
  EXPECT_EQ(ft_batch_lines(std::size_t{16} * 1024, 256, true), 2);
  // Untiled: NAS's fftblock for every pass.
  EXPECT_EQ(ft_batch_lines(0, 256, true), pxq::kernels::kNasFftBlock);
  EXPECT_EQ(ft_batch_lines(0, 64, false), pxq::kernels::kNasFftBlock);
}

std::vector<Exec> executors() {
  return with_backends<pxq::kernels::FtFamily>({{"openmp", 1, 0, "flat (fftblock 16)"},
                                                {"openmp", 2, 0, "hybrid"},
                                                {"openmp", 1, 1, "tiled, one line per batch"},
                                                {"openmp", 2, 3000, "tiled 3000 B, 2 threads"},
                                                {"openmp", 2, std::size_t{64} * 1024, "tiled 64K, 2 threads"}},
                                               {{"openmp", 2, 0, ""}, {"openmp", 2, 3000, " tiled"}});
}

// A block [n3][n2][n1]; lines along axis 1 (rows) or axis 2 (stride n1), written either in
// place or transposed into [n2][n3][n1] (the next layout), as the FT plans do.
struct Block {
  int n1, n2, n3;
  std::size_t size() const { return static_cast<std::size_t>(n1) * n2 * n3; }
};

std::vector<std::int64_t> offsets(int n, std::int64_t stride) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = i * stride;
  return t;
}

// Expected result of transforming every line along `axis` (1 rows, 2 columns) with the
// naive DFT, in the layout of the source.
std::vector<Complex> naive_axis(const std::vector<Complex>& v, Block b, int axis, FftDirection dir) {
  std::vector<Complex> out(v.size());
  auto at = [&](int i1, int i2, int i3) { return (static_cast<std::size_t>(i3) * b.n2 + i2) * b.n1 + i1; };
  if (axis == 1) {
    for (int i3 = 0; i3 < b.n3; ++i3)
      for (int i2 = 0; i2 < b.n2; ++i2) {
        std::vector<Complex> line(v.begin() + static_cast<std::ptrdiff_t>(at(0, i2, i3)),
                                  v.begin() + static_cast<std::ptrdiff_t>(at(0, i2, i3) + b.n1));
        const auto t = naive_dft(line, dir);
        for (int i1 = 0; i1 < b.n1; ++i1) out[at(i1, i2, i3)] = t[static_cast<std::size_t>(i1)];
      }
  } else {
    for (int i3 = 0; i3 < b.n3; ++i3)
      for (int i1 = 0; i1 < b.n1; ++i1) {
        std::vector<Complex> line(static_cast<std::size_t>(b.n2));
        for (int i2 = 0; i2 < b.n2; ++i2) line[static_cast<std::size_t>(i2)] = v[at(i1, i2, i3)];
        const auto t = naive_dft(line, dir);
        for (int i2 = 0; i2 < b.n2; ++i2) out[at(i1, i2, i3)] = t[static_cast<std::size_t>(i2)];
      }
  }
  return out;
}

TEST(FtOps, EveryExecutorTransformsRowsAndColumnsInPlace) {
  const Block b{16, 32, 3};
  const auto v = random_complex(b.size(), 11u);
  const FftPlan p1(b.n1), p2(b.n2);
  const auto rows = offsets(b.n1, 1), cols = offsets(b.n2, b.n1);
  for (const auto& e : executors()) {
    const auto ops = pxq::kernels::make_ft_ops(e.backend, e.threads, e.tile_bytes);
    for (const auto dir : {FftDirection::forward, FftDirection::inverse}) {
      // Rows: outer 1, lines n2*n3 of stride n1.
      auto x = v;
      pxq::kernels::FftPass pass;
      pass.plan = &p1;
      pass.dir = dir;
      pass.outer_count = 1;
      pass.line_count = b.n2 * b.n3;
      pass.src = pass.dst = {0, b.n1, rows.data()};
      ops->fft(x.data(), x.data(), pass);
      expect_near_lines(x, naive_axis(v, b, 1, dir), 32, e.name + " rows");
      // Columns: outer n3 (stride n1*n2), lines n1 adjacent, elements n1 apart.
      x = v;
      pass.plan = &p2;
      pass.outer_count = b.n3;
      pass.line_count = b.n1;
      pass.src = pass.dst = {std::int64_t{b.n1} * b.n2, 1, cols.data()};
      ops->fft(x.data(), x.data(), pass);
      expect_near_lines(x, naive_axis(v, b, 2, dir), 32, e.name + " columns");
    }
  }
}

TEST(FtOps, ColumnsWrittenTransposedWithEvolveFusedMatchThePlainLoops) {
  const Block b{8, 16, 4};
  const auto v = random_complex(b.size(), 12u);
  const FftPlan p2(b.n2);
  const auto cols = offsets(b.n2, b.n1);
  // Destination [n2][n3][n1]: element i2 of line (i3, i1) at i2*n3*n1 + i3*n1 + i1.
  const auto tcols = offsets(b.n2, std::int64_t{b.n3} * b.n1);
  std::vector<double> f_outer(static_cast<std::size_t>(b.n3)), f_line(static_cast<std::size_t>(b.n1)),
      f_elem(static_cast<std::size_t>(b.n2));
  for (std::size_t i = 0; i < f_outer.size(); ++i) f_outer[i] = 0.9 + 0.01 * static_cast<double>(i);
  for (std::size_t i = 0; i < f_line.size(); ++i) f_line[i] = 1.1 - 0.02 * static_cast<double>(i);
  for (std::size_t i = 0; i < f_elem.size(); ++i) f_elem[i] = std::exp(-0.05 * static_cast<double>(i));

  // Reference: u0 *= factors (plain loop), then the naive column DFT, then the transpose.
  auto u0_want = v;
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1)
        u0_want[(static_cast<std::size_t>(i3) * b.n2 + i2) * b.n1 + i1] *= f_outer[static_cast<std::size_t>(i3)] *
                                                                           f_line[static_cast<std::size_t>(i1)] *
                                                                           f_elem[static_cast<std::size_t>(i2)];
  const auto cols_want = naive_axis(u0_want, b, 2, FftDirection::inverse);
  std::vector<Complex> out_want(b.size());
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1)
        out_want[(static_cast<std::size_t>(i2) * b.n3 + i3) * b.n1 + i1] =
            cols_want[(static_cast<std::size_t>(i3) * b.n2 + i2) * b.n1 + i1];

  for (const auto& e : executors()) {
    const auto ops = pxq::kernels::make_ft_ops(e.backend, e.threads, e.tile_bytes);
    auto u0 = v;
    std::vector<Complex> out(b.size());
    pxq::kernels::FftPass pass;
    pass.plan = &p2;
    pass.dir = FftDirection::inverse;
    pass.outer_count = b.n3;
    pass.line_count = b.n1;
    pass.src = {std::int64_t{b.n1} * b.n2, 1, cols.data()};
    pass.dst = {b.n1, 1, tcols.data()};
    pass.evolve = {f_outer.data(), f_line.data(), f_elem.data()};
    ops->fft(u0.data(), out.data(), pass);
    expect_near_lines(u0, u0_want, 2, e.name + " evolved source");
    expect_near_lines(out, out_want, 32, e.name + " transposed columns");
  }
}

TEST(FtOps, BatchedPassesEqualOneLineAtATimeBitForBit) {
  // Same arithmetic per line whatever the batch: the results must be identical.
  const Block b{64, 64, 5};
  const auto v = random_complex(b.size(), 13u);
  const FftPlan p2(b.n2);
  const auto cols = offsets(b.n2, b.n1);
  pxq::kernels::FftPass pass;
  pass.plan = &p2;
  pass.dir = FftDirection::forward;
  pass.outer_count = b.n3;
  pass.line_count = b.n1;
  pass.src = pass.dst = {std::int64_t{b.n1} * b.n2, 1, cols.data()};
  auto one = v;
  pxq::kernels::make_ft_ops("openmp", 1, 1)->fft(one.data(), one.data(), pass);
  for (const auto& e : executors()) {
    auto x = v;
    pxq::kernels::make_ft_ops(e.backend, e.threads, e.tile_bytes)->fft(x.data(), x.data(), pass);
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], one[i]) << e.name << " at " << i;
  }
}

TEST(FtOps, CopyAndEvolveMatchPlainLoops) {
  const Block b{6, 5, 4};
  const auto v = random_complex(b.size(), 14u);
  std::vector<double> f1{1.0, 0.5, 0.25, 2.0, 3.0, 0.1}, f2{0.9, 0.8, 0.7, 0.6, 0.5}, f3{1.5, 1.25, 1.0, 0.75};
  std::vector<Complex> u0_want = v;
  for (int i3 = 0; i3 < b.n3; ++i3)
    for (int i2 = 0; i2 < b.n2; ++i2)
      for (int i1 = 0; i1 < b.n1; ++i1)
        u0_want[(static_cast<std::size_t>(i3) * b.n2 + i2) * b.n1 + i1] *=
            f3[static_cast<std::size_t>(i3)] * f2[static_cast<std::size_t>(i2)] * f1[static_cast<std::size_t>(i1)];
  // Copy: the [n3][n2][n1] block split by i1 into 2 halves, each sent as [n3][n2][n1/2].
  pxq::kernels::BlockCopy c;
  c.count[0] = 2;
  c.count[1] = b.n3 * b.n2;
  c.count[2] = 1;
  c.src_stride[0] = b.n1 / 2;
  c.src_stride[1] = b.n1;
  c.dst_stride[0] = static_cast<std::int64_t>(b.size() / 2);
  c.dst_stride[1] = b.n1 / 2;
  c.row = b.n1 / 2;
  std::vector<Complex> copy_want(b.size());
  for (int h = 0; h < 2; ++h)
    for (int r = 0; r < b.n3 * b.n2; ++r)
      for (int i = 0; i < b.n1 / 2; ++i)
        copy_want[static_cast<std::size_t>(h) * b.size() / 2 +
                  static_cast<std::size_t>(r) * static_cast<std::size_t>(b.n1 / 2) + static_cast<std::size_t>(i)] =
            v[static_cast<std::size_t>(r) * static_cast<std::size_t>(b.n1) +
              static_cast<std::size_t>(h * (b.n1 / 2) + i)];
  for (const auto& e : executors()) {
    const auto ops = pxq::kernels::make_ft_ops(e.backend, e.threads, e.tile_bytes);
    auto u0 = v;
    std::vector<Complex> u1(b.size());
    ops->evolve(u0.data(), u1.data(), b.n1, b.n2, b.n3, f1.data(), f2.data(), f3.data());
    expect_near_lines(u0, u0_want, 4, e.name + " evolve u0");
    for (std::size_t i = 0; i < u1.size(); ++i) ASSERT_EQ(u1[i], u0[i]) << e.name << " evolve u1 at " << i;
    std::vector<Complex> out(b.size());
    ops->copy(v.data(), out.data(), c);
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], copy_want[i]) << e.name << " copy at " << i;
  }
}

}  // namespace
