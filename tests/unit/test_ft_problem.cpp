// The FT problem: the class table, the process grids (and the errors that name the fix),
// the initial conditions against NAS's stream drawn in order, and the plans of every rank of
// a grid run in one process, the all-to-alls done by copying blocks between the ranks'
// buffers: the forward transform must equal the 3-D DFT of the whole field, the inverse the
// inverse DFT of the evolved spectrum, for 1-D and 2-D grids, fused and not.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ft_problem.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/kernels/nas_random.hpp"

// The tests live in pxq::ft, beside what they test.
namespace pxq::ft {
namespace {

TEST(FtProblem, ClassTableHasNasSizesAndChecksums) {
  const auto& a = ft_class("a");
  EXPECT_EQ(a.nx, 256);
  EXPECT_EQ(a.ny, 256);
  EXPECT_EQ(a.nz, 128);
  EXPECT_EQ(a.niter, 6);
  EXPECT_DOUBLE_EQ(a.checksum[0].real(), 504.6735008193);
  EXPECT_DOUBLE_EQ(ft_class("C").checksum[19].imag(), 512.3465164008);
  EXPECT_EQ(ft_class("B").niter, 20);
  EXPECT_THROW(ft_class("D"), std::invalid_argument);
}

std::string error_of(int nx, int ny, int nz, const std::string& decomp, int nprocs) {
  try {
    make_ft_grid(nx, ny, nz, decomp, nprocs, 0);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FtProblem, GridsFollowNasAndNameTheFix) {
  auto grid = [](const std::string& d, int p, int nz = 64) { return make_ft_grid(64, 64, nz, d, p, p - 1); };
  EXPECT_EQ(grid("auto", 1).decomp, "1d");
  EXPECT_EQ(grid("auto", 8).p2, 8);
  EXPECT_EQ(grid("auto", 64).p1, 1);
  const FtGrid beyond = grid("auto", 128, 32);  // beyond nz: NAS's nz x p/nz
  EXPECT_EQ(beyond.decomp, "2d");
  EXPECT_EQ(beyond.p1, 32);
  EXPECT_EQ(beyond.p2, 4);
  const FtGrid two = grid("2d", 2);
  EXPECT_EQ(two.p1, 2);
  EXPECT_EQ(two.p2, 1);
  const FtGrid eight = grid("2d", 8);
  EXPECT_EQ(eight.p1, 4);
  EXPECT_EQ(eight.p2, 2);
  EXPECT_EQ(eight.me1, 3);  // rank 7 = me1 * p2 + me2
  EXPECT_EQ(eight.me2, 1);
  EXPECT_NE(error_of(64, 64, 64, "1d", 3).find("use 2 or 4"), std::string::npos);
  EXPECT_NE(error_of(128, 128, 32, "1d", 64).find("use --decomp 2d, or at most 32"), std::string::npos);
  EXPECT_NE(error_of(64, 64, 64, "2d", 8192).find("use at most 4096"), std::string::npos);
  EXPECT_NE(error_of(64, 64, 64, "3d", 2).find("use 1d, 2d or auto"), std::string::npos);
}

TEST(FtProblem, InitialConditionsAreNasStreamInGlobalOrder) {
  const int nx = 8, ny = 4, nz = 4;
  const FtGrid whole = make_ft_grid(nx, ny, nz, "1d", 1, 0);
  std::vector<Complex> a(static_cast<std::size_t>(whole.local_points()));
  initial_conditions(whole, a.data(), 2);
  pxq::kernels::NasRandom rng;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double re = rng.next();
    ASSERT_EQ(a[i], Complex(re, rng.next())) << "point " << i;
  }
  // Every rank of a 2-D grid holds its part of the same field.
  for (int r = 0; r < 4; ++r) {
    const FtGrid g = make_ft_grid(nx, ny, nz, "2d", 4, r);
    std::vector<Complex> part(static_cast<std::size_t>(g.local_points()));
    initial_conditions(g, part.data(), 1);
    for (int k = 0; k < g.mz(); ++k)
      for (int y = 0; y < g.my1(); ++y)
        for (int x = 0; x < nx; ++x) {
          const std::size_t global =
              (static_cast<std::size_t>(g.me2 * g.mz() + k) * ny + static_cast<std::size_t>(g.me1 * g.my1() + y)) * nx +
              x;
          ASSERT_EQ(part[(static_cast<std::size_t>(k) * g.my1() + y) * nx + x], a[global]) << "rank " << r;
        }
  }
}

// The whole grid, x fastest: v[(z*ny + y)*nx + x].
struct Field {
  int nx, ny, nz;
  std::vector<Complex> v;
  Complex& at(int x, int y, int z) { return v[(static_cast<std::size_t>(z) * ny + y) * nx + x]; }
  Complex get(int x, int y, int z) const { return v[(static_cast<std::size_t>(z) * ny + y) * nx + x]; }
};

// The 3-D DFT by definition, one axis at a time (each 1-D DFT summed in long double).
Field naive_3d(Field f, pxq::kernels::FftDirection dir) {
  const long double sign = dir == pxq::kernels::FftDirection::forward ? -1.0L : 1.0L;
  const long double pi = 3.141592653589793238462643383279L;
  auto dft = [&](std::vector<Complex>& line) {
    const std::size_t n = line.size();
    std::vector<Complex> out(n);
    for (std::size_t k = 0; k < n; ++k) {
      long double re = 0, im = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const long double a = sign * 2 * pi * static_cast<long double>((j * k) % n) / static_cast<long double>(n);
        re += line[j].real() * std::cos(a) - line[j].imag() * std::sin(a);
        im += line[j].real() * std::sin(a) + line[j].imag() * std::cos(a);
      }
      out[k] = Complex(static_cast<double>(re), static_cast<double>(im));
    }
    line = out;
  };
  for (int axis = 0; axis < 3; ++axis) {
    const int n = axis == 0 ? f.nx : axis == 1 ? f.ny : f.nz;
    for (int a = 0; a < (axis == 0 ? f.ny : f.nx); ++a)
      for (int b = 0; b < (axis == 2 ? f.ny : f.nz); ++b) {
        std::vector<Complex> line(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
          Complex& p = axis == 0 ? f.at(i, a, b) : axis == 1 ? f.at(a, i, b) : f.at(a, b, i);
          line[static_cast<std::size_t>(i)] = p;
        }
        dft(line);
        for (int i = 0; i < n; ++i) {
          Complex& p = axis == 0 ? f.at(i, a, b) : axis == 1 ? f.at(a, i, b) : f.at(a, b, i);
          p = line[static_cast<std::size_t>(i)];
        }
      }
  }
  return f;
}

// Every rank's plan and buffers in one process; the all-to-alls copy between ranks.
class EmulatedRanks {
 public:
  EmulatedRanks(int nx, int ny, int nz, const std::string& decomp, int nprocs, bool fused)
      : ops_(pxq::kernels::make_ft_ops("openmp", 1, fused ? 3000 : 0)) {
    for (int r = 0; r < nprocs; ++r) {
      plans_.push_back(std::make_unique<FtPlan>(make_ft_grid(nx, ny, nz, decomp, nprocs, r), fused));
      bufs_.emplace_back();
      for (std::size_t b = 0; b < static_cast<std::size_t>(Buffer::count); ++b)
        bufs_.back()[b].assign(static_cast<std::size_t>(plans_.back()->grid().local_points()), Complex{});
    }
  }
  const FtGrid& grid(int r) const { return plans_[static_cast<std::size_t>(r)]->grid(); }
  std::vector<Complex>& buf(int r, Buffer b) { return bufs_[static_cast<std::size_t>(r)][static_cast<std::size_t>(b)]; }
  int size() const { return static_cast<int>(plans_.size()); }

  void run(bool forward) {
    const std::size_t steps = (forward ? plans_[0]->forward() : plans_[0]->inverse()).size();
    for (std::size_t k = 0; k < steps; ++k)
      for (int r = 0; r < size(); ++r) {
        const auto& list =
            forward ? plans_[static_cast<std::size_t>(r)]->forward() : plans_[static_cast<std::size_t>(r)]->inverse();
        ASSERT_EQ(list.size(), steps);
        const Step& s = list[k];
        switch (s.kind) {
          case Step::Kind::fft:
            ops_->fft(buf(r, s.src).data(), buf(r, s.dst).data(), s.pass);
            break;
          case Step::Kind::copy:
            ops_->copy(buf(r, s.src).data(), buf(r, s.dst).data(), s.copy);
            break;
          case Step::Kind::evolve:
            ops_->evolve(buf(r, s.src).data(), buf(r, s.dst).data(), s.n1, s.n2, s.n3, s.f1, s.f2, s.f3);
            break;
          case Step::Kind::alltoall: {
            // Member i of my group sends me its block number (my index in the group).
            const FtGrid& g = grid(r);
            const int members = s.row_comm ? g.p1 : g.p2;
            const int mine = s.row_comm ? g.me1 : g.me2;
            const auto count = static_cast<std::size_t>(s.per_peer);
            for (int i = 0; i < members; ++i) {
              const int peer = s.row_comm ? g.row_member(i) : g.column_member(i);
              const auto& send = buf(peer, Buffer::send);
              std::copy(send.begin() + static_cast<std::ptrdiff_t>(mine * count),
                        send.begin() + static_cast<std::ptrdiff_t>((mine + 1) * count),
                        buf(r, Buffer::recv).begin() + static_cast<std::ptrdiff_t>(i * count));
            }
            break;
          }
        }
      }
  }

 private:
  std::unique_ptr<pxq::kernels::FtOps> ops_;
  std::vector<std::unique_ptr<FtPlan>> plans_;
  std::vector<std::array<std::vector<Complex>, static_cast<std::size_t>(Buffer::count)>> bufs_;
};

TEST(FtProblem, PlansOfEveryRankComputeThe3dDftAndItsEvolvedInverse) {
  const int nx = 16, ny = 8, nz = 8;
  Field initial{nx, ny, nz, std::vector<Complex>(static_cast<std::size_t>(nx) * ny * nz)};
  initial_conditions(make_ft_grid(nx, ny, nz, "1d", 1, 0), initial.v.data(), 1);
  const Field spectrum = naive_3d(initial, pxq::kernels::FftDirection::forward);
  // NAS's evolve once: each point times the factors of its three wavenumbers.
  Field evolved = spectrum;
  const auto fx = evolve_factors(nx), fy = evolve_factors(ny), fz = evolve_factors(nz);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        evolved.at(x, y, z) *=
            fx[static_cast<std::size_t>(x)] * fy[static_cast<std::size_t>(y)] * fz[static_cast<std::size_t>(z)];
  const Field back = naive_3d(evolved, pxq::kernels::FftDirection::inverse);

  struct Case {
    std::string decomp;
    int nprocs;
  };
  for (const Case& c : {Case{"1d", 1}, Case{"1d", 2}, Case{"1d", 8}, Case{"2d", 2}, Case{"2d", 4}, Case{"2d", 8}})
    for (const bool fused : {false, true}) {
      const std::string what = c.decomp + " on " + std::to_string(c.nprocs) + (fused ? " fused" : " unfused");
      EmulatedRanks ranks(nx, ny, nz, c.decomp, c.nprocs, fused);
      for (int r = 0; r < ranks.size(); ++r) initial_conditions(ranks.grid(r), ranks.buf(r, Buffer::a).data(), 1);
      ranks.run(true);
      Complex checksum{0.0, 0.0};
      for (int r = 0; r < ranks.size(); ++r) {
        const FtGrid& g = ranks.grid(r);
        const auto& cbuf = ranks.buf(r, Buffer::c);  // layout C [my2][nz][mx1]
        for (int y = 0; y < g.my2(); ++y)
          for (int z = 0; z < nz; ++z)
            for (int x = 0; x < g.mx1(); ++x) {
              const Complex got = cbuf[(static_cast<std::size_t>(y) * nz + z) * g.mx1() + x];
              const Complex want = spectrum.get(g.me1 * g.mx1() + x, g.me2 * g.my2() + y, z);
              ASSERT_LT(std::abs(got - want), 1e-11) << what << " forward, rank " << r;
            }
      }
      ranks.run(false);
      for (int r = 0; r < ranks.size(); ++r) {
        const FtGrid& g = ranks.grid(r);
        const auto& abuf = ranks.buf(r, Buffer::a);  // layout A [mz][my1][nx]
        for (int z = 0; z < g.mz(); ++z)
          for (int y = 0; y < g.my1(); ++y)
            for (int x = 0; x < nx; ++x) {
              const Complex got = abuf[(static_cast<std::size_t>(z) * g.my1() + y) * nx + x];
              const Complex want = back.get(x, g.me1 * g.my1() + y, g.me2 * g.mz() + z);
              ASSERT_LT(std::abs(got - want), 1e-9) << what << " inverse, rank " << r;
            }
        checksum += local_checksum(g, abuf.data());
      }
      // The checksum's points, summed over the ranks, from the whole field.
      Complex whole{0.0, 0.0};
      for (int j = 1; j <= kChecksumPoints; ++j) whole += back.get(j % nx, 3 * j % ny, 5 * j % nz);
      EXPECT_LT(std::abs(checksum - whole), 1e-9 * std::abs(whole)) << what;
    }
}

}  // namespace
}  // namespace pxq::ft
