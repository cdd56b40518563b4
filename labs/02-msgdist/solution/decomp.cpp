// Lab 2, solution: each node owns a compact block of bh x bw cells (as square as the grid
// allows), and the nodes' blocks tile the grid row by row.
#include "decomp.hpp"

namespace stencil {

Cell cell_of(int rank, int rows, int cols, int ranks_per_node) {
  int bh = 1;  // the block's height: the largest divisor of q up to sqrt(q) that fits
  for (int h = 1; h * h <= ranks_per_node; ++h)
    if (ranks_per_node % h == 0 && rows % h == 0 && cols % (ranks_per_node / h) == 0) bh = h;
  const int bw = ranks_per_node / bh;
  if (rows % bh != 0 || cols % bw != 0) return {rank / cols, rank % cols};  // no block fits: rows
  const int node = rank / ranks_per_node, slot = rank % ranks_per_node;
  const int blocks_per_row = cols / bw;
  return {(node / blocks_per_row) * bh + slot / bw, (node % blocks_per_row) * bw + slot % bw};
}

}  // namespace stencil
