// Column blocking of a CSR matrix.
#include "pxq/kernels/sparse.hpp"

#include <stdexcept>

namespace pxq::kernels {

BlockedCsr block_columns(const CsrMatrix& a, int window) {
  if (window < 1) throw std::invalid_argument("column window must be at least one column");
  BlockedCsr b;
  b.nrows = a.nrows;
  b.ncols = a.ncols;
  b.window = window;
  b.nblocks = a.ncols == 0 ? 1 : (a.ncols + window - 1) / window;
  const std::size_t stride = static_cast<std::size_t>(a.nrows) + 1;
  b.rowptr.assign(static_cast<std::size_t>(b.nblocks) * stride, 0);
  // Count entries per (block, row), then prefix-sum block-major.
  std::vector<std::int64_t> count(static_cast<std::size_t>(b.nblocks) * stride, 0);
  for (int i = 0; i < a.nrows; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k)
      ++count[static_cast<std::size_t>(a.col[k] / window) * stride + i];
  std::int64_t offset = 0;
  for (int blk = 0; blk < b.nblocks; ++blk) {
    std::int64_t* rp = b.rowptr.data() + static_cast<std::size_t>(blk) * stride;
    for (int i = 0; i < a.nrows; ++i) {
      rp[i] = offset;
      offset += count[static_cast<std::size_t>(blk) * stride + i];
    }
    rp[a.nrows] = offset;
  }
  b.col.resize(a.nnz());
  b.val.resize(a.nnz());
  std::vector<std::int64_t> next(b.rowptr);
  for (int i = 0; i < a.nrows; ++i)
    for (std::int64_t k = a.rowptr[i]; k < a.rowptr[i + 1]; ++k) {
      const std::size_t slot = static_cast<std::size_t>(a.col[k] / window) * stride + i;
      const std::int64_t dst = next[slot]++;
      b.col[dst] = a.col[k];
      b.val[dst] = a.val[k];
    }
  return b;
}

}  // namespace pxq::kernels
