// Lab 2: which grid cell each rank owns decides which halo messages stay on a node.
#include "decomp.hpp"

namespace stencil {

Cell cell_of(int rank, int rows, int cols, int ranks_per_node) {
  // LAB: row-major order puts the q ranks of a node in one row of the process grid (with
  // 16 ranks as 4 x 4 and 4 per node: a node owns a 1 x 4 strip). Predict the share of halo
  // messages that stay on a node, check it with ./pxq lab check 2, then give each node a
  // compact block of cells instead (2 x 2 for 4 ranks per node) and predict again. Write it
  // for any grid and any ranks_per_node: the checker also asks cell_of() for other grids.
  (void)rows;
  (void)ranks_per_node;
  return {rank / cols, rank % cols};
}

}  // namespace stencil
