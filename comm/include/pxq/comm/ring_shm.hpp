// The ring's hand-over through MPI-3 shared memory (the ring proxy's --exchange shm): every
// block of the ring lives in one shared window over the node's ranks, and a block moves to
// the right neighbour by ownership, not by copy. Rank r's thread t at iteration g works on
// block (pos - g) mod W, wherever it lives; the receiver reads the tile its left neighbour
// has just computed straight from that neighbour's memory (and cache) in its first pass.
//
// Each rank publishes one counter, the tiles it has finished (g * tiles + j + 1 after tile j
// of iteration g), stored with release order; before computing tile j of iteration g >= 1 a
// rank waits, with acquire order, until its left neighbour's counter shows tile j of g - 1.
// That is the only dependency: the block a rank writes at iteration g is the one its left
// neighbour finished at g - 1, and no one else touches it until it comes round again.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pxq::comm {

class ShmRing {
 public:
  // A window of `threads` blocks of `block_elems` doubles per rank of `comm`, blocks cut in
  // tiles of `tile_elems`. Throws std::invalid_argument unless every rank of comm shares
  // one node's memory.
  ShmRing(MPI_Comm comm, int threads, std::size_t block_elems, std::size_t tile_elems);
  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  std::size_t tiles() const { return tiles_; }
  // Block `id` (0 .. W-1, W = ranks x threads): slot id % threads of rank id / threads.
  double* block(long id) const;
  // After every rank has first-touched its own blocks: waits for all ranks, then maps every
  // page of every block into this process (one read per page), so the timed iterations
  // take no page fault on the blocks that come round from other ranks.
  void map_all() const;
  // Waits until the left neighbour has finished tile `tile` of iteration g - 1 (g >= 1).
  void wait_left(long g, std::size_t tile) const;
  // Publishes tile `tile` of iteration g as finished.
  void done(long g, std::size_t tile);
  // After `iterations` iterations: waits for the left neighbour's last tile, then for every
  // rank (so no rank reads a block its owner is still computing).
  void finish(long iterations) const;

 private:
  MPI_Comm comm_;
  MPI_Win blocks_win_ = MPI_WIN_NULL, flags_win_ = MPI_WIN_NULL;
  int threads_;
  std::size_t block_elems_, tiles_;
  std::vector<double*> bases_;     // each rank's blocks
  std::uint64_t* mine_ = nullptr;  // this rank's counter
  std::uint64_t* left_ = nullptr;  // the left neighbour's counter
};

}  // namespace pxq::comm
