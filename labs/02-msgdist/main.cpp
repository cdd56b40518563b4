// Lab 2 harness: a Jacobi 5-point stencil on an N x N grid split over a rows x cols grid of
// ranks (MPI_Dims_create), each rank owning the cell your cell_of() gives it. Checks that the
// cells are a permutation, then the result bit for bit against one process's computation.
// Profile it with pxq's message profiler to see which messages stay on a node.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "decomp.hpp"
#include "lab.hpp"

namespace stencil {
namespace {

double initial(int i, int j) { return ((i * 31 + j * 17 + static_cast<int>(lab::seed() % 23)) % 23) / 23.0; }

struct Block {
  int n = 0, h = 0, w = 0, i0 = 0, j0 = 0;  // global size, block size, global origin
  std::vector<double> u, next;              // (h + 2) x (w + 2) with halos
  double& at(std::vector<double>& v, int i, int j) { return v[static_cast<std::size_t>(i) * (w + 2) + j]; }
};

// The stencil at global point (i, j) from its four neighbours; the grid's edge stays fixed.
inline double relax(double c, double n, double s, double e, double w) { return 0.5 * c + 0.125 * (n + s + e + w); }

// What is wrong with the cells cell_of() gives the ranks ("" when each rank owns one cell of
// the grid and each cell one rank): the student's answer, so a wrong one is a wrong result.
std::string check_cells(const lab::World& w, Cell mine, int rows, int cols) {
  std::vector<int> all(2 * w.size);
  int pair[2] = {mine.row, mine.col};
  MPI_Allgather(pair, 2, MPI_INT, all.data(), 2, MPI_INT, w.comm);
  std::vector<int> owner(rows * cols, -1);
  for (int r = 0; r < w.size; ++r) {
    const int row = all[2 * r], col = all[2 * r + 1];
    if (row < 0 || row >= rows || col < 0 || col >= cols)
      return "cell_of(" + std::to_string(r) + ") = (" + std::to_string(row) + ", " + std::to_string(col) +
             "): outside the " + std::to_string(rows) + " x " + std::to_string(cols) + " grid";
    if (owner[row * cols + col] >= 0)
      return "ranks " + std::to_string(owner[row * cols + col]) + " and " + std::to_string(r) + " both own cell (" +
             std::to_string(row) + ", " + std::to_string(col) + ")";
    owner[row * cols + col] = r;
  }
  return "";
}

std::vector<double> reference(int n, int iterations) {
  std::vector<double> u(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) u[static_cast<std::size_t>(i) * n + j] = initial(i, j);
  std::vector<double> next = u;
  auto at = [n](std::vector<double>& v, int i, int j) -> double& { return v[static_cast<std::size_t>(i) * n + j]; };
  for (int it = 0; it < iterations; ++it) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
        at(next, i, j) = relax(at(u, i, j), at(u, i - 1, j), at(u, i + 1, j), at(u, i, j + 1), at(u, i, j - 1));
    std::swap(u, next);
  }
  return u;
}

// cell_of() at other grids and node sizes, never run: a decomposition written for this run's
// 4 x 4 grid and 4 ranks a node alone is not the lesson (rows, cols, q; q divides rows x cols).
lab::Json other_layouts() {
  lab::Json others = lab::Json::array();
  for (const auto& [r, c, q] : {std::array<int, 3>{8, 8, 8}, {6, 6, 4}, {8, 4, 2}, {2, 8, 4}}) {
    lab::Json at = lab::Json::array();
    for (int k = 0; k < r * c; ++k) {
      const Cell cell = cell_of(k, r, c, q);
      at.push_back({cell.row, cell.col});
    }
    others.push_back({{"grid", {r, c}}, {"ranks_per_node", q}, {"cells", at}});
  }
  return others;
}

struct Options {
  int n = 512, iterations = 20, ranks_per_node = 4;

  void add_to(CLI::App& app) {
    app.description("Lab 2: a 2-D stencil whose ranks own the cells your decomp.cpp gives them");
    app.add_option("--n", n, "grid points per side")->check(CLI::Range(8, 1 << 14));
    app.add_option("--iterations", iterations, "Jacobi iterations")->check(CLI::Range(1, 100000));
    app.add_option("--ranks-per-node", ranks_per_node, "q: ranks that share a node (block order)")
        ->check(CLI::Range(1, 1 << 16));
  }
};

int run(const lab::World& w, const Options& o) {
  int dims[2] = {0, 0};
  MPI_Dims_create(w.size, 2, dims);
  const int rows = dims[0], cols = dims[1];
  if (o.n % rows != 0 || o.n % cols != 0)
    throw std::invalid_argument("--n " + std::to_string(o.n) + " is not a multiple of the " + std::to_string(rows) +
                                " x " + std::to_string(cols) + " process grid: use a multiple of both");
  if (o.ranks_per_node < 1 || w.size % o.ranks_per_node != 0)
    throw std::invalid_argument("--ranks-per-node must divide the " + std::to_string(w.size) + " ranks");
  const Cell me = cell_of(w.rank, rows, cols, o.ranks_per_node);
  const std::string wrong = check_cells(w, me, rows, cols);
  if (!wrong.empty())  // every rank saw the same cells: all of them stop here
    return lab::finish(w, "02-msgdist", false, {{"ranks", w.size}, {"grid", {rows, cols}}}, "",
                       wrong + ": cell_of() must give each rank its own cell of the grid");
  std::vector<Cell> cells(w.size);  // every rank's cell, to find the neighbours' ranks
  for (int r = 0; r < w.size; ++r) cells[r] = cell_of(r, rows, cols, o.ranks_per_node);
  auto rank_at = [&](int row, int col) {
    if (row < 0 || row >= rows || col < 0 || col >= cols) return static_cast<int>(MPI_PROC_NULL);
    for (int r = 0; r < w.size; ++r)
      if (cells[r].row == row && cells[r].col == col) return r;
    return static_cast<int>(MPI_PROC_NULL);
  };
  Block b;
  b.n = o.n, b.h = o.n / rows, b.w = o.n / cols, b.i0 = me.row * b.h, b.j0 = me.col * b.w;
  b.u.assign(static_cast<std::size_t>(b.h + 2) * (b.w + 2), 0.0);
  for (int i = 0; i < b.h; ++i)
    for (int j = 0; j < b.w; ++j) b.at(b.u, i + 1, j + 1) = initial(b.i0 + i, b.j0 + j);
  b.next = b.u;
  const int up = rank_at(me.row - 1, me.col), down = rank_at(me.row + 1, me.col);
  const int left = rank_at(me.row, me.col - 1), right = rank_at(me.row, me.col + 1);
  MPI_Datatype column;
  MPI_Type_vector(b.h, 1, b.w + 2, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  for (int it = 0; it < o.iterations; ++it) {
    MPI_Sendrecv(&b.at(b.u, 1, 1), b.w, MPI_DOUBLE, up, 0, &b.at(b.u, b.h + 1, 1), b.w, MPI_DOUBLE, down, 0, w.comm,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&b.at(b.u, b.h, 1), b.w, MPI_DOUBLE, down, 1, &b.at(b.u, 0, 1), b.w, MPI_DOUBLE, up, 1, w.comm,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&b.at(b.u, 1, 1), 1, column, left, 2, &b.at(b.u, 1, b.w + 1), 1, column, right, 2, w.comm,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&b.at(b.u, 1, b.w), 1, column, right, 3, &b.at(b.u, 1, 0), 1, column, left, 3, w.comm,
                 MPI_STATUS_IGNORE);
    for (int i = 1; i <= b.h; ++i)
      for (int j = 1; j <= b.w; ++j) {
        const int gi = b.i0 + i - 1, gj = b.j0 + j - 1;
        b.at(b.next, i, j) = (gi == 0 || gj == 0 || gi == o.n - 1 || gj == o.n - 1)
                                 ? b.at(b.u, i, j)
                                 : relax(b.at(b.u, i, j), b.at(b.u, i - 1, j), b.at(b.u, i + 1, j), b.at(b.u, i, j + 1),
                                         b.at(b.u, i, j - 1));
      }
    std::swap(b.u, b.next);
  }
  MPI_Type_free(&column);
  // Verification: every block against the one-process grid, on rank 0.
  std::vector<double> mine(static_cast<std::size_t>(b.h) * b.w), all;
  for (int i = 0; i < b.h; ++i)
    for (int j = 0; j < b.w; ++j) mine[static_cast<std::size_t>(i) * b.w + j] = b.at(b.u, i + 1, j + 1);
  if (w.rank == 0) all.resize(mine.size() * w.size);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
             MPI_DOUBLE, 0, w.comm);
  int ok = 1;
  if (w.rank == 0) {
    const std::vector<double> ref = reference(o.n, o.iterations);
    for (int r = 0; r < w.size && ok; ++r)
      for (int i = 0; i < b.h && ok; ++i) {
        const double* got = &all[(static_cast<std::size_t>(r) * b.h + i) * b.w];
        const double* want = &ref[static_cast<std::size_t>(cells[r].row * b.h + i) * o.n + cells[r].col * b.w];
        ok = std::memcmp(got, want, sizeof(double) * b.w) == 0;
      }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, w.comm);
  // The answer: the whole grid the ranks computed, in the grid's own order.
  lab::Digest answer;
  if (w.rank == 0) {
    std::vector<double> grid(static_cast<std::size_t>(o.n) * o.n);
    for (int r = 0; r < w.size; ++r)
      for (int i = 0; i < b.h; ++i)
        std::memcpy(&grid[static_cast<std::size_t>(cells[r].row * b.h + i) * o.n + cells[r].col * b.w],
                    &all[(static_cast<std::size_t>(r) * b.h + i) * b.w], sizeof(double) * b.w);
    answer.add_all(grid.data(), grid.size());
  }
  lab::Json placement = lab::Json::array();
  for (const Cell& c : cells) placement.push_back({c.row, c.col});
  const lab::Json others = w.rank == 0 ? other_layouts() : lab::Json::array();
  if (w.rank == 0)
    std::printf("stencil: %d ranks as a %d x %d grid, %d per node, %d x %d points, %d iterations\n", w.size, rows, cols,
                o.ranks_per_node, o.n, o.n, o.iterations);
  return lab::finish(w, "02-msgdist", ok == 1,
                     {{"ranks", w.size},
                      {"grid", {rows, cols}},
                      {"ranks_per_node", o.ranks_per_node},
                      {"cells", placement},
                      {"other_layouts", others},
                      {"answer", answer.hex()}},
                     "the grid matches the one-process computation bit for bit",
                     "the grid differs from the one-process computation");
}

}  // namespace
}  // namespace stencil

PXQ_LAB_MAIN(stencil, MPI_THREAD_SINGLE)
