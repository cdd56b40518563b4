// The shared-memory ring's ordering, made deterministic: every rank but the last sleeps
// before writing and publishing each tile, so a rank that read its left neighbour's tile
// without waiting for it would read the old value. Each rank writes a tile's value for
// iteration g and, at g + 1, checks that the block it works on (its left neighbour's at g)
// holds the left neighbour's value for g, tile by tile. Prints "PASS: shm ring order" on
// rank 0 when every rank saw every tile as published; exits 1 otherwise.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "pxq/comm/ring_shm.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr std::size_t kElems = 4096, kTile = 1024;
  constexpr long kIterations = 4;
  long bad = 0;
  {
    pxq::comm::ShmRing ring(MPI_COMM_WORLD, 1, kElems, kTile);
    const int left = (rank - 1 + size) % size;
    for (long g = 0; g < kIterations; ++g) {
      double* block = ring.block(((rank - g) % size + size) % size);
      for (std::size_t j = 0; j < ring.tiles(); ++j) {
        if (g > 0) {
          ring.wait_left(g, j);
          const double want = 1000.0 * left + 10.0 * static_cast<double>(g - 1) + static_cast<double>(j);
          for (std::size_t i = j * kTile; i < (j + 1) * kTile; ++i) bad += block[i] != want;
        }
        if (rank != size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (std::size_t i = j * kTile; i < (j + 1) * kTile; ++i)
          block[i] = 1000.0 * rank + 10.0 * static_cast<double>(g) + static_cast<double>(j);
        ring.done(g, j);
      }
    }
    ring.finish(kIterations);
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf(bad == 0 ? "PASS: shm ring order\n" : "FAIL: %ld elements read before published\n", bad);
  MPI_Finalize();
  return bad == 0 ? 0 : 1;
}
