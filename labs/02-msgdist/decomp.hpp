// Lab 2, the harness's side: a 2-D stencil on a rows x cols grid of ranks. Each rank owns one
// cell of that grid and swaps halos with the cells above, below, left and right of it.
// Nodes are filled in block order: ranks 0..q-1 on node 0, q..2q-1 on node 1, ...
#pragma once

namespace stencil {

struct Cell {
  int row = 0, col = 0;
};

// Yours (decomp.cpp): the cell of the rows x cols process grid that `rank` owns. Every rank
// must own a different cell. ranks_per_node is q, the ranks that share a node.
Cell cell_of(int rank, int rows, int cols, int ranks_per_node);

}  // namespace stencil
