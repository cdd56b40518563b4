// Sparse matrices for the CG proxy: compressed sparse rows, and a column-blocked copy whose
// blocks each touch one window of the source vector (so that window stays in cache).
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

}  // namespace pxq::kernels
