// The NAS FT problem: class parameters and checksums, the process grid of each
// decomposition, the three data layouts a rank holds, the plan of one forward and one
// inverse 3-D FFT as a list of steps, the initial conditions and the checksum. No MPI here:
// the plan names its all-to-alls and the caller runs them, so a unit test can run the plans
// of every rank of a grid in one process.
//
// Layouts (x, y, z the global axes; x always fastest in memory):
//   A [nz/P2][ny/P1][nx]      x-lines whole: the initial conditions, the checksum
//   B [nz/P2][ny][nx/P1]      y-lines whole (after the all-to-all in the row communicator)
//   C [ny/P2][nz][nx/P1]      z-lines whole (after the all-to-all in the column communicator)
// on a P1 x P2 process grid, rank = me1 * P2 + me2 (NAS's order). The row communicator holds
// the P1 ranks sharing me2, the column communicator the P2 ranks sharing me1. 1-D slabs are
// P1 = 1 (B is A, one all-to-all over everyone), 2-D pencils P1, P2 > 1. A transpose over a
// single process is no exchange at all: the FFT before it writes the next layout directly.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pxq/kernels/fft.hpp"
#include "pxq/kernels/ft_ops.hpp"

namespace pxq::ft {

using kernels::Complex;

constexpr int kMaxIterations = 20;

struct FtClass {
  char name = 'S';
  int nx = 0, ny = 0, nz = 0;
  int niter = 0;
  std::array<Complex, kMaxIterations> checksum{};  // NAS's reference checksum per iteration
};

inline constexpr double kChecksumTolerance = 1e-12;  // relative, on every iteration (NAS's)
inline constexpr double kAlpha = 1e-6;               // NAS's diffusion constant
inline constexpr int kChecksumPoints = 1024;

// S, W, A, B or C (case-insensitive); std::invalid_argument naming the accepted classes.
const FtClass& ft_class(const std::string& name);

// NAS's operation count for the timed run (FT's Mop/s formula).
double nas_operation_count(const FtClass& c);

struct FtGrid {
  std::string decomp;  // "1d" or "2d" (1 x 1 is "1d": no exchange at all)
  int nprocs = 1, rank = 0;
  int p1 = 1, p2 = 1;    // process grid
  int me1 = 0, me2 = 0;  // this rank's coordinates: rank = me1 * p2 + me2
  int nx = 0, ny = 0, nz = 0;
  // Block extents: A [mz][my1][nx], B [mz][ny][mx1], C [my2][nz][mx1].
  int mx1() const { return nx / p1; }
  int my1() const { return ny / p1; }
  int my2() const { return ny / p2; }
  int mz() const { return nz / p2; }
  std::int64_t local_points() const { return static_cast<std::int64_t>(nx) * ny * nz / nprocs; }
  // World ranks of the row (same me2) and column (same me1) communicators, in their order.
  int row_member(int i) const { return i * p2 + me2; }
  int column_member(int j) const { return me1 * p2 + j; }
};

// The grid for `decomp` ("1d", "2d" or "auto") on `nprocs` processes of a class's nx x ny x
// nz grid. auto follows NAS: 1 process no exchange, up to nz processes 1-D, beyond that 2-D
// on nz x nprocs/nz. An explicit 2d uses the squarest grid, p1 >= p2. Throws
// std::invalid_argument naming the fix for a process count that is not a power of two or
// that the decomposition cannot split the grid over.
FtGrid make_ft_grid(int nx, int ny, int nz, const std::string& decomp, int nprocs, int rank);

// The arrays a plan uses, each local_points() complex numbers.
enum class Buffer { a, b, c, c1, send, recv, count };

struct Step {
  enum class Kind { fft, copy, alltoall, evolve };
  Kind kind = Kind::fft;
  Buffer src = Buffer::a, dst = Buffer::a;
  kernels::FftPass pass;       // fft
  kernels::BlockCopy copy;     // copy
  bool row_comm = false;       // alltoall: row (true) or column communicator
  std::int64_t per_peer = 0;   // alltoall: complex numbers to each member
  int n1 = 0, n2 = 0, n3 = 0;  // evolve: block [n3][n2][n1] with factors f1, f2, f3
  const double *f1 = nullptr, *f2 = nullptr, *f3 = nullptr;
  std::string what;  // e.g. "y-FFT (to send buffer)"
};

// NAS's time evolution factor per axis: e^{-4 alpha pi^2 k^2} for the signed wavenumber k of
// global index g (0, 1, .., n/2-1, -n/2, .., -1).
std::vector<double> evolve_factors(int n);

class FtPlan {
 public:
  // `fused`: the tiled variant's plan (transform straight into send buffers and out of receive
  // buffers, evolve folded into the first inverse pass, no u1 array); else NAS's order with
  // explicit pack and unpack copies and a separate evolve.
  FtPlan(const FtGrid& grid, bool fused, kernels::FftEngine engine = kernels::FftEngine::pxq);
  FtPlan(const FtPlan&) = delete;
  FtPlan& operator=(const FtPlan&) = delete;

  const std::vector<Step>& forward() const { return forward_; }  // A -> C (u0)
  const std::vector<Step>& inverse() const { return inverse_; }  // evolve C, then C -> A
  bool uses(Buffer b) const { return used_[static_cast<std::size_t>(b)]; }
  const FtGrid& grid() const { return grid_; }

 private:
  const std::int64_t* table(std::vector<std::int64_t> t);
  const kernels::FftPlan* plan(int n);
  Step fft(const char* what, int n, kernels::FftDirection dir, int outer, int lines, Buffer src, kernels::LineMap sm,
           Buffer dst, kernels::LineMap dm);
  Step copy(const char* what, Buffer src, Buffer dst, kernels::BlockCopy c);
  Step alltoall(const char* what, bool row, std::int64_t per_peer);
  void exchange(std::vector<Step>& s, bool fused, bool row, std::int64_t per_peer, Buffer from, kernels::BlockCopy pack,
                Buffer to, const char* layout, kernels::BlockCopy unpack);
  void use(Buffer b) { used_[static_cast<std::size_t>(b)] = true; }
  void build_forward(bool fused);
  void build_inverse(bool fused);
  Step evolve_step(int mx1, int nz, int my2) const;

  FtGrid grid_;
  kernels::FftEngine engine_;
  std::map<int, std::unique_ptr<kernels::FftPlan>> plans_;
  std::deque<std::vector<std::int64_t>> tables_;  // element offsets; a deque keeps them in place
  std::vector<double> ex_, ey_, ez_;              // evolve factors of this rank's x, y, z ranges
  std::array<bool, static_cast<std::size_t>(Buffer::count)> used_{};
  std::vector<Step> forward_, inverse_;
};

// NAS compute_initial_conditions on layout A: the complex number at global (x, y, z) is the
// pair of draws 2 (x + nx (y + ny z)) + 1 and + 2 of NAS's stream from its seed.
void initial_conditions(const FtGrid& g, Complex* a, int threads);

// This rank's share of NAS's checksum (before the division by nx ny nz): the sum over the
// points j = 1..1024 at (j mod nx, 3j mod ny, 5j mod nz) that it holds in layout A.
Complex local_checksum(const FtGrid& g, const Complex* a);

}  // namespace pxq::ft
