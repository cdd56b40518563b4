// Sparse matrices for the CG proxy: compressed sparse rows, a column-blocked copy whose
// blocks each touch one window of the source vector (so that window stays in cache), and a
// symmetric matrix's upper triangle, which moves half the bytes per product.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pxq::kernels {

struct CsrMatrix {
  int nrows = 0;
  int ncols = 0;
  std::vector<std::int64_t> rowptr;  // nrows + 1 offsets into col/val
  std::vector<std::int32_t> col;     // 0-based local column of each entry
  std::vector<double> val;
  std::size_t nnz() const { return val.size(); }
};

// The columns split into windows of `window` columns; block b holds, row by row, the
// entries whose column falls in window b, in their original order within the row.
// One block (window >= ncols) is the CSR matrix itself.
struct BlockedCsr {
  int nrows = 0;
  int ncols = 0;
  int window = 0;
  int nblocks = 0;
  std::vector<std::int64_t> rowptr;  // nblocks * (nrows + 1): block b's row offsets
  std::vector<std::int32_t> col;
  std::vector<double> val;
  const std::int64_t* block_rowptr(int b) const {
    return rowptr.data() + static_cast<std::size_t>(b) * (static_cast<std::size_t>(nrows) + 1);
  }
  int block_begin(int b) const { return b * window; }
  int block_end(int b) const { return b + 1 == nblocks ? ncols : (b + 1) * window; }
};

// Throws std::invalid_argument when window < 1.
BlockedCsr block_columns(const CsrMatrix& a, int window);

// A symmetric matrix stored once: the diagonal, and row by row the entries right of it
// (column > row, in their original order within the row). y = A x applies each stored entry
// twice: a(i,j) x(j) to row i, and the same value times x(i) to row j.
struct SymmetricCsr {
  int n = 0;
  std::vector<double> diag;          // a(i,i), zero where the row has none
  std::vector<std::int64_t> rowptr;  // n + 1 offsets into col/val
  std::vector<std::int32_t> col;     // > the row
  std::vector<double> val;
  // Entries of the whole matrix the triangle stands for (diagonal ones counted where nonzero).
  std::size_t represented_nnz() const;
};

// The first row of part `part` of `parts` when the rows are split into contiguous parts
// holding about as many stored entries each (the upper triangle's rows shorten down the
// matrix, so equal row counts would leave the first part most of the work); part == parts
// gives n.
int symmetric_part_begin(const SymmetricCsr& a, int part, int parts);

// The upper triangle of `a`, whose a(j,i) is taken to equal a(i,j). Throws
// std::invalid_argument when `a` is not square, or when an entry has no mirror entry or one
// differing by more than `rel_tolerance` relative to the larger (the message names the first).
SymmetricCsr upper_triangle(const CsrMatrix& a, double rel_tolerance);

}  // namespace pxq::kernels
