// The NAS CG problem: class parameters, the 2-D process grid with its reduction and
// transpose partners, and this rank's block of the random sparse matrix. No MPI here, so
// all of it is testable for any process count on one core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pxq/kernels/sparse.hpp"

namespace pxq::cg {

struct CgClass {
  char name = 'S';
  int na = 0;        // matrix order
  int nonzer = 0;    // nonzeros per generated sparse vector
  int niter = 0;     // outer (inverse power) iterations
  double shift = 0;  // eigenvalue shift
  double zeta = 0;   // NAS verification value
};

inline constexpr double kRcond = 0.1;
inline constexpr int kCgIterations = 25;         // inner conjugate gradient iterations
inline constexpr double kZetaTolerance = 1e-10;  // relative, as NAS

// S, W, A, B or C (case-insensitive); std::invalid_argument naming the accepted classes.
const CgClass& cg_class(const std::string& name);

// NAS's operation count for the whole timed run (what Mop/s is computed from).
double nas_operation_count(const CgClass& c);

// One reduction step along the process row: exchange with `partner`, send
// w[send_start, +send_len), receive into [recv_start, +recv_len) and add it there.
struct ReduceStep {
  int partner = 0;
  int send_start = 0, send_len = 0;
  int recv_start = 0, recv_len = 0;
};

// NAS CG's decomposition, 0-based and half-open: nprows x npcols processes (powers of two,
// npcols = nprows or 2 nprows); this rank owns rows [row_begin, row_end) and columns
// [col_begin, col_end) of the matrix.
struct CgGrid {
  int nprocs = 1, rank = 0;
  int nprows = 1, npcols = 1;
  int proc_row = 0, proc_col = 0;
  int row_begin = 0, row_end = 0;
  int col_begin = 0, col_end = 0;
  int send_start = 0, send_len = 0;  // the piece of the row sum this rank sends on
  int exch_proc = 0;                 // transpose partner
  int exch_recv_len = 0;
  std::vector<ReduceStep> steps;     // in the order they run (NAS: l2npcols down to 1)
  std::vector<int> scalar_partners;  // dot-product reduction partners (NAS: 1 up to l2npcols)
  int nrows() const { return row_end - row_begin; }
  int ncols() const { return col_end - col_begin; }
};

// Throws std::invalid_argument when `nprocs` is not a power of two (naming the nearest
// valid counts) or leaves a process without columns (naming the largest valid count).
CgGrid make_grid(int na, int nprocs, int rank);

// This rank's block of NAS's matrix, columns shifted to local indices. Every rank draws the
// whole random stream (as NAS does) and keeps its own entries.
kernels::CsrMatrix make_matrix(const CgClass& c, const CgGrid& g);

}  // namespace pxq::cg
