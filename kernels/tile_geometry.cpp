// The tile's geometry that every backend's executors share (declared in mg_ops.hpp and
// ft_ops.hpp): how many rows of MG's planes, and how many of FT's lines, a tile holds.
#include <algorithm>
#include <cstddef>

#include "ft_batch.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/kernels/mg_ops.hpp"
#include "pxq/tiling/chunks.hpp"

namespace pxq::kernels {

int rows_per_block(std::size_t tile_bytes, int n1, int streams, int n2_interior) {
  return tiling::rows_per_tile(tile_bytes, static_cast<std::size_t>(std::max(1, n1)) * sizeof(double), streams,
                               n2_interior);
}

int edges_between(int rows, int per_block) {
  if (rows <= 0 || per_block <= 0) return 0;
  const int blocks = (rows + per_block - 1) / per_block;
  return blocks - 1;
}

double block_edges(std::size_t tile_bytes, int n1, int streams, int rows) {
  if (tile_bytes == 0 || rows <= 0) return 0.0;
  return static_cast<double>(edges_between(rows, rows_per_block(tile_bytes, n1, streams, rows)));
}

int ft_batch_lines(std::size_t tile_bytes, int n, bool rows) {
  if (tile_bytes == 0) return kNasFftBlock;
  const int lines =
      tiling::power_of_two_fitting(tile_bytes, [n](int k) { return fft_batch_doubles(n, k) * sizeof(double); });
  return rows ? std::min(lines, kTransposeLines) : lines;
}

}  // namespace pxq::kernels
