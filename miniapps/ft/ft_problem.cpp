// The NAS FT problem: class table, process grids, the plan of the 3-D FFTs, the initial
// conditions and the checksum (see ft_problem.hpp for the layouts).
#include "ft_problem.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "pxq/common/nas_setup.hpp"
#include "pxq/kernels/nas_random.hpp"

namespace pxq::ft {
namespace {

using kernels::BlockCopy;
using kernels::FftDirection;
using kernels::LineMap;

// NAS FT 3.4: grid and iterations of every class; the reference checksum of every iteration
// from ft_checksums.def.
std::array<FtClass, 5> make_classes() {
  std::array<FtClass, 5> c{{{'S', 64, 64, 64, 6, {}},
                            {'W', 128, 128, 32, 6, {}},
                            {'A', 256, 256, 128, 6, {}},
                            {'B', 512, 256, 256, 20, {}},
                            {'C', 512, 512, 512, 20, {}}}};
  const auto set = [&c](char name, int iteration, double re, double im) {
    for (FtClass& k : c)
      if (k.name == name) k.checksum.at(static_cast<std::size_t>(iteration - 1)) = {re, im};
  };
#define PXQ_FT_CHECKSUM(name, iteration, re, im) set(name, iteration, re, im);
#include "ft_checksums.def"
#undef PXQ_FT_CHECKSUM
  return c;
}

const std::array<FtClass, 5> kClasses = make_classes();

constexpr double kPi = 3.141592653589793238;

std::string dims_text(int nx, int ny, int nz) {
  return std::to_string(nx) + " x " + std::to_string(ny) + " x " + std::to_string(nz);
}

bool fits(const FtGrid& g) { return g.p1 <= std::min(g.nx, g.ny) && g.p2 <= std::min(g.nz, g.ny); }

// i * stride for i < n.
std::vector<std::int64_t> strided(int n, std::int64_t stride) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = i * stride;
  return t;
}

// Element i of a line cut into runs of m, run r in block r of a send or receive buffer:
// (i / m) * block + (i % m) * stride.
std::vector<std::int64_t> blocked(int n, int m, std::int64_t block, std::int64_t stride) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = (i / m) * block + (i % m) * stride;
  return t;
}

// The pack before an all-to-all: every one of `rows` rows (`span` long) holds a segment of `seg`
// for each peer in turn; peer p's segments go to its block (at p * blk), one after another.
BlockCopy peer_segments(int peers, int rows, std::int64_t seg, std::int64_t span, std::int64_t blk) {
  return {{peers, rows, 1}, {seg, span, 0}, {blk, seg, 0}, seg};
}

// The same copy the other way: each peer's block back into its segment of every row.
BlockCopy reversed(BlockCopy c) {
  std::swap(c.src_stride, c.dst_stride);
  return c;
}

// The column all-to-all's unpack, which transposes: peer p's block holds lines [a][b] (`line`
// long, a < na, b < nb); line (a, b) goes to row b (`span` long) at line p * na + a.
BlockCopy peer_blocks_transposed(int peers, int na, int nb, std::int64_t line, std::int64_t span, std::int64_t blk) {
  return {{peers, na, nb}, {blk, nb * line, line}, {na * line, line, span}, line};
}

// The sizes both plans are built from: the grid and the local extents, whether there are row
// and column exchanges, the block each peer gets in them, and the array in layout B.
struct PlanDims {
  int nx, ny, nz, mx1, my1, my2, mz;
  bool row, col;
  std::int64_t blk1, blk2;
  Buffer yb;
};

PlanDims plan_dims(const FtGrid& g) {
  const int mx1 = g.mx1(), my1 = g.my1(), my2 = g.my2(), mz = g.mz();
  const bool row = g.p1 > 1, col = g.p2 > 1;
  const std::int64_t blk1 = std::int64_t{mz} * my1 * mx1, blk2 = std::int64_t{mz} * my2 * mx1;
  return {g.nx, g.ny, g.nz, mx1, my1, my2, mz, row, col, blk1, blk2, row ? Buffer::b : Buffer::a};
}

}  // namespace

const FtClass& ft_class(const std::string& name) { return common::find_nas_class(kClasses, name); }

double nas_operation_count(const FtClass& c) {
  const double n = static_cast<double>(c.nx) * c.ny * c.nz;
  return n * (14.8157 + 7.19641 * std::log(n) + (5.23518 + 7.21113 * std::log(n)) * c.niter);
}

FtGrid make_ft_grid(int nx, int ny, int nz, const std::string& decomp, int nprocs, int rank) {
  common::require_power_of_two("ft", nprocs);
  FtGrid g;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.nprocs = nprocs;
  g.rank = rank;
  auto squarest = [](int p) {
    const int l = common::log2_floor(p);
    return std::pair<int, int>{1 << ((l + 1) / 2), p >> ((l + 1) / 2)};
  };
  if (decomp == "1d" || (decomp == "auto" && nprocs <= nz)) {
    g.decomp = "1d";
    g.p1 = 1;
    g.p2 = nprocs;
    if (!fits(g)) {
      const int most = std::min(nz, ny);
      throw std::invalid_argument("ft --decomp 1d splits the " + dims_text(nx, ny, nz) +
                                  " grid into slabs of z, then y: at most " + std::to_string(most) +
                                  " processes, got " + std::to_string(nprocs) + ": use --decomp 2d, or at most " +
                                  std::to_string(most) + " processes");
    }
  } else if (decomp == "2d" || decomp == "auto") {
    g.decomp = "2d";
    if (decomp == "auto") {
      g.p1 = nz;  // NAS's 2-D grid beyond nz processes
      g.p2 = nprocs / nz;
    } else {
      std::tie(g.p1, g.p2) = squarest(nprocs);
    }
    if (!fits(g)) {
      int most = 1;
      for (;;) {
        FtGrid t = g;
        std::tie(t.p1, t.p2) = squarest(most * 2);
        if (!fits(t)) break;
        most *= 2;
      }
      throw std::invalid_argument("ft --decomp " + decomp + " cannot split the " + dims_text(nx, ny, nz) +
                                  " grid into pencils over " + std::to_string(nprocs) + " processes: use at most " +
                                  std::to_string(most));
    }
  } else {
    throw std::invalid_argument("unknown --decomp '" + decomp + "': use 1d, 2d or auto");
  }
  g.me2 = rank % g.p2;
  g.me1 = rank / g.p2;
  return g;
}

std::vector<double> evolve_factors(int n) {
  const double ap = -4.0 * kAlpha * kPi * kPi;
  std::vector<double> f(static_cast<std::size_t>(n));
  for (int g = 0; g < n; ++g) {
    const int k = (g + n / 2) % n - n / 2;
    f[static_cast<std::size_t>(g)] = std::exp(ap * static_cast<double>(k) * static_cast<double>(k));
  }
  return f;
}

FtPlan::FtPlan(const FtGrid& grid, bool fused, kernels::FftEngine engine) : grid_(grid), engine_(engine) {
  const std::vector<double> fx = evolve_factors(grid.nx), fy = evolve_factors(grid.ny);
  ez_ = evolve_factors(grid.nz);
  const auto x0 = fx.begin() + static_cast<std::ptrdiff_t>(grid.me1) * grid.mx1();
  const auto y0 = fy.begin() + static_cast<std::ptrdiff_t>(grid.me2) * grid.my2();
  ex_.assign(x0, x0 + grid.mx1());
  ey_.assign(y0, y0 + grid.my2());
  use(Buffer::a);
  use(Buffer::c);
  if (grid.p1 > 1) use(Buffer::b);
  if (grid.p1 > 1 || grid.p2 > 1) {
    use(Buffer::send);
    use(Buffer::recv);
  }
  if (!fused) use(Buffer::c1);
  build_forward(fused);
  build_inverse(fused);
}

const std::int64_t* FtPlan::table(std::vector<std::int64_t> t) {
  tables_.push_back(std::move(t));
  return tables_.back().data();
}

const kernels::FftPlan* FtPlan::plan(int n) {
  auto& p = plans_[n];
  if (!p) p = std::make_unique<kernels::FftPlan>(n, engine_);
  return p.get();
}

Step FtPlan::fft(const char* what, int n, FftDirection dir, int outer, int lines, Buffer src, LineMap sm, Buffer dst,
                 LineMap dm) {
  Step s;
  s.kind = Step::Kind::fft;
  s.what = what;
  s.src = src;
  s.dst = dst;
  s.pass.plan = plan(n);
  s.pass.dir = dir;
  s.pass.outer_count = outer;
  s.pass.line_count = lines;
  s.pass.src = sm;
  s.pass.dst = dm;
  return s;
}

Step FtPlan::copy(const char* what, Buffer src, Buffer dst, BlockCopy c) {
  Step s;
  s.kind = Step::Kind::copy;
  s.what = what;
  s.src = src;
  s.dst = dst;
  s.copy = c;
  return s;
}

Step FtPlan::alltoall(const char* what, bool row, std::int64_t per_peer) {
  Step s;
  s.kind = Step::Kind::alltoall;
  s.what = what;
  s.src = Buffer::send;
  s.dst = Buffer::recv;
  s.row_comm = row;
  s.per_peer = per_peer;
  return s;
}

// An all-to-all in the row (or column) communicator with, unless fused, the pack of `from` into
// the send buffer before it and the unpack of the receive buffer into `to` (layout `layout`) after.
void FtPlan::exchange(std::vector<Step>& s, bool fused, bool row, std::int64_t per_peer, Buffer from, BlockCopy pack,
                      Buffer to, const char* layout, BlockCopy unpack) {
  const std::string comm = row ? "row" : "column";
  if (!fused) s.push_back(copy(("pack for the " + comm + " all-to-all").c_str(), from, Buffer::send, pack));
  s.push_back(alltoall((comm + " all-to-all").c_str(), row, per_peer));
  if (!fused) s.push_back(copy(("unpack into layout " + std::string(layout)).c_str(), Buffer::recv, to, unpack));
}

// A -> x-FFT -> (row exchange) -> B -> y-FFT -> (column exchange) -> C -> z-FFT.
void FtPlan::build_forward(bool fused) {
  const auto [nx, ny, nz, mx1, my1, my2, mz, row, col, blk1, blk2, yb] = plan_dims(grid_);
  const FftDirection dir = FftDirection::forward;
  auto& s = forward_;

  const LineMap a_rows{0, nx, table(strided(nx, 1))};
  if (fused && row)
    s.push_back(fft("x-FFT, packed for the row all-to-all", nx, dir, 1, mz * my1, Buffer::a, a_rows, Buffer::send,
                    {0, mx1, table(blocked(nx, mx1, blk1, 1))}));
  else
    s.push_back(fft("x-FFT", nx, dir, 1, mz * my1, Buffer::a, a_rows, Buffer::a, a_rows));
  if (row)
    exchange(s, fused, true, blk1, Buffer::a, peer_segments(grid_.p1, mz * my1, mx1, nx, blk1), Buffer::b, "B",
             reversed(peer_segments(grid_.p1, mz, std::int64_t{my1} * mx1, std::int64_t{ny} * mx1, blk1)));

  const LineMap b_lines{std::int64_t{ny} * mx1, 1, table(strided(ny, mx1))};
  Buffer ysrc = yb;
  LineMap ysm = b_lines;
  if (fused && row) {
    ysrc = Buffer::recv;
    ysm = {std::int64_t{my1} * mx1, 1, table(blocked(ny, my1, blk1, mx1))};
  }
  if (!col)
    s.push_back(fft("y-FFT, into layout C", ny, dir, mz, mx1, ysrc, ysm, Buffer::c,
                    {mx1, 1, table(strided(ny, std::int64_t{nz} * mx1))}));
  else if (fused)
    s.push_back(fft("y-FFT, packed for the column all-to-all", ny, dir, mz, mx1, ysrc, ysm, Buffer::send,
                    {std::int64_t{my2} * mx1, 1, table(blocked(ny, my2, blk2, mx1))}));
  else
    s.push_back(fft("y-FFT", ny, dir, mz, mx1, ysrc, ysm, yb, b_lines));
  if (col)
    exchange(s, fused, false, blk2, yb,
             peer_segments(grid_.p2, mz, std::int64_t{my2} * mx1, std::int64_t{ny} * mx1, blk2), Buffer::c, "C",
             peer_blocks_transposed(grid_.p2, mz, my2, mx1, std::int64_t{nz} * mx1, blk2));

  const LineMap c_lines{std::int64_t{nz} * mx1, 1, table(strided(nz, mx1))};
  Buffer zsrc = Buffer::c;
  LineMap zsm = c_lines;
  if (fused && col) {
    zsrc = Buffer::recv;
    zsm = {mx1, 1, table(blocked(nz, mz, blk2, std::int64_t{my2} * mx1))};
  }
  s.push_back(fft("z-FFT", nz, dir, my2, mx1, zsrc, zsm, Buffer::c, c_lines));
}

// The evolution as a step of its own (untiled): C -> C1, elementwise by the three factors.
Step FtPlan::evolve_step(int mx1, int nz, int my2) const {
  Step e;
  e.kind = Step::Kind::evolve;
  e.what = "evolve";
  e.src = Buffer::c;
  e.dst = Buffer::c1;
  e.n1 = mx1;
  e.n2 = nz;
  e.n3 = my2;
  e.f1 = ex_.data();
  e.f2 = ez_.data();
  e.f3 = ey_.data();
  return e;
}

// evolve C -> z-FFT -> (column exchange) -> B -> y-FFT -> (row exchange) -> A -> x-FFT.
void FtPlan::build_inverse(bool fused) {
  const auto [nx, ny, nz, mx1, my1, my2, mz, row, col, blk1, blk2, yb] = plan_dims(grid_);
  const FftDirection dir = FftDirection::inverse;
  auto& s = inverse_;

  const LineMap c_lines{std::int64_t{nz} * mx1, 1, table(strided(nz, mx1))};
  Buffer zsrc = Buffer::c;
  if (!fused) {
    s.push_back(evolve_step(mx1, nz, my2));
    zsrc = Buffer::c1;
  }
  Step z;
  if (!col)
    z = fft("z-FFT, into layout B", nz, dir, my2, mx1, zsrc, c_lines, yb,
            {mx1, 1, table(strided(nz, std::int64_t{ny} * mx1))});
  else if (fused)
    z = fft("z-FFT, packed for the column all-to-all", nz, dir, my2, mx1, zsrc, c_lines, Buffer::send,
            {std::int64_t{mz} * mx1, 1, table(blocked(nz, mz, blk2, mx1))});
  else
    z = fft("z-FFT", nz, dir, my2, mx1, zsrc, c_lines, Buffer::c1, c_lines);
  if (fused) {
    z.what = "evolve + " + z.what;
    z.pass.evolve = {ey_.data(), ex_.data(), ez_.data()};  // outer y, line x, element z
  }
  s.push_back(z);
  if (col)
    exchange(s, fused, false, blk2, Buffer::c1,
             peer_segments(grid_.p2, my2, std::int64_t{mz} * mx1, std::int64_t{nz} * mx1, blk2), yb, "B",
             peer_blocks_transposed(grid_.p2, my2, mz, mx1, std::int64_t{ny} * mx1, blk2));

  const LineMap b_lines{std::int64_t{ny} * mx1, 1, table(strided(ny, mx1))};
  Buffer ysrc = yb;
  LineMap ysm = b_lines;
  if (fused && col) {
    ysrc = Buffer::recv;
    ysm = {mx1, 1, table(blocked(ny, my2, blk2, std::int64_t{mz} * mx1))};
  }
  if (fused && row)
    s.push_back(fft("y-FFT, packed for the row all-to-all", ny, dir, mz, mx1, ysrc, ysm, Buffer::send,
                    {std::int64_t{my1} * mx1, 1, table(blocked(ny, my1, blk1, mx1))}));
  else
    s.push_back(fft("y-FFT", ny, dir, mz, mx1, ysrc, ysm, yb, b_lines));
  if (row)
    exchange(s, fused, true, blk1, Buffer::b,
             peer_segments(grid_.p1, mz, std::int64_t{my1} * mx1, std::int64_t{ny} * mx1, blk1), Buffer::a, "A",
             reversed(peer_segments(grid_.p1, mz * my1, mx1, nx, blk1)));

  const LineMap a_rows{0, nx, table(strided(nx, 1))};
  if (fused && row)
    s.push_back(fft("x-FFT", nx, dir, 1, mz * my1, Buffer::recv, {0, mx1, table(blocked(nx, mx1, blk1, 1))}, Buffer::a,
                    a_rows));
  else
    s.push_back(fft("x-FFT", nx, dir, 1, mz * my1, Buffer::a, a_rows, Buffer::a, a_rows));
}

void initial_conditions(const FtGrid& g, Complex* a, int threads) {
  const int my1 = g.my1(), mz = g.mz();
  const std::int64_t rows = std::int64_t{mz} * my1;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t z = std::int64_t{g.me2} * mz + r / my1;
    const std::int64_t y = std::int64_t{g.me1} * my1 + r % my1;
    kernels::NasRandom rng;
    rng.skip(static_cast<std::uint64_t>(2 * std::int64_t{g.nx} * (y + g.ny * z)));
    Complex* row = a + r * g.nx;
    for (int x = 0; x < g.nx; ++x) {
      const double re = rng.next();
      row[x] = Complex(re, rng.next());
    }
  }
}

Complex local_checksum(const FtGrid& g, const Complex* a) {
  const int my1 = g.my1(), mz = g.mz();
  const int y0 = g.me1 * my1, z0 = g.me2 * mz;
  Complex sum{0.0, 0.0};
  for (int j = 1; j <= kChecksumPoints; ++j) {
    const int q = j % g.nx, r = 3 * j % g.ny, s = 5 * j % g.nz;
    if (r >= y0 && r < y0 + my1 && s >= z0 && s < z0 + mz)
      sum += a[(static_cast<std::int64_t>(s - z0) * my1 + (r - y0)) * g.nx + q];
  }
  return sum;
}

}  // namespace pxq::ft
