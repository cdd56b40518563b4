// The NAS MG problem: class parameters and operators, the 3-D process grid, each level's
// block of this rank, and the right-hand side's charges (NAS zran3). No MPI here, so all of
// it is testable for any process count on one core.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pxq/comm/halo.hpp"
#include "pxq/kernels/mg_ops.hpp"

namespace pxq::mg {

struct MgClass {
  char name = 'S';
  int nx = 0;                 // grid points per axis on the finest level (the grid is a cube)
  int nit = 0;                // V-cycle iterations
  int lt = 0;                 // levels: nx = 2^lt
  kernels::Stencil smoother;  // S(a) for S, W, A; S(b) for B, C
  double rnm2 = 0;            // NAS verification value (L2 norm of the final residual)
};

// NAS's residual operator A.
inline constexpr kernels::Stencil kOperatorA{{-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0}};
inline constexpr double kRnm2Tolerance = 1e-8;  // relative, as NAS
inline constexpr int kCharges = 10;             // +1 at the 10 largest, -1 at the 10 smallest

// S, W, A, B or C (case-insensitive); std::invalid_argument naming the accepted classes.
const MgClass& mg_class(const std::string& name);

// NAS's operation count for the timed run: 58 nit nx^3.
double nas_operation_count(const MgClass& c);

// NAS MG's process grid: p = 2^l processes split as pi = (2^(l/3), 2^((l - l/3)/2), rest),
// rank = idi[0] + pi[0] (idi[1] + pi[1] idi[2]).
struct ProcGrid {
  int nprocs = 1, rank = 0;
  std::array<int, 3> pi{1, 1, 1};
  std::array<int, 3> idi{0, 0, 0};
  int rank_of(const std::array<int, 3>& id) const { return id[0] + pi[0] * (id[1] + pi[1] * id[2]); }
};

// Throws std::invalid_argument when `nprocs` is not a power of two (naming the nearest valid
// counts) or is too many for the class's finest grid (naming the largest valid count).
ProcGrid make_proc_grid(const MgClass& c, int nprocs, int rank);

// One level of the hierarchy as this rank holds it. A level is distributed when every axis
// has at least one point per process along it; coarser levels are replicated: every rank
// holds the whole (tiny) grid and computes it redundantly, with periodic halos in memory.
struct Level {
  int k = 0;   // 1 (coarsest) .. lt (finest)
  int ng = 0;  // global points per axis
  bool distributed = true;
  std::array<int, 3> offset{};      // global index of the first interior point per axis
  std::array<int, 3> extent{};      // interior points per axis
  kernels::Box box;                 // extent + halo
  comm::HaloNeighbours neighbours;  // self for replicated levels and single-process axes
  std::size_t interior() const {
    return static_cast<std::size_t>(extent[0]) * static_cast<std::size_t>(extent[1]) *
           static_cast<std::size_t>(extent[2]);
  }
};

// Levels 1..lt (index 0 unused).
std::vector<Level> make_levels(const MgClass& c, const ProcGrid& g);

// A charge candidate: a value of NAS's random field and its global index
// i1 + nx (i2 + nx i3).
struct Candidate {
  double value = 0;
  std::int64_t index = 0;
};

// This rank's 10 largest and 10 smallest values of NAS's random field over its block of the
// finest level (largest first, smallest first). The field's value at global point m is the
// (m+1)-th number of NAS's stream from seed 314159265.
struct Extremes {
  std::vector<Candidate> largest, smallest;
};
Extremes local_extremes(const MgClass& c, const Level& top);

// The global charges from every rank's candidates: {+1 positions, -1 positions}.
struct Charges {
  std::vector<std::int64_t> plus, minus;
};
Charges select_charges(const std::vector<Candidate>& largest, const std::vector<Candidate>& smallest);

// v = the charges that fall in this rank's interior, zero elsewhere (halo included).
void place_charges(const Charges& ch, const Level& top, int nx, double* v);

}  // namespace pxq::mg
