// A planned ring exchange: a block flows from the left neighbour and to the right one,
// tile by tile, with non-blocking messages. Receives are posted before any send; tile i
// is sent as soon as it is computed, so its transfer overlaps the compute of tile i+1.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pxq::comm {

class RingExchange {
 public:
  // Plans the messages of one block of `block_elems` doubles cut into `tile_elems` tiles.
  RingExchange(MPI_Comm comm, int left, int right, std::size_t block_elems,
               std::size_t tile_elems);

  // Posts one receive per tile into `recv_block` (before any send of this round).
  void post_receives(double* recv_block);
  // Sends elements [begin, end) of `block` (one planned tile) to the right neighbour.
  void send_tile(const double* block, std::size_t begin, std::size_t end);
  // Lets the MPI library move data without blocking: tests the oldest pending requests
  // (any test drives the whole progress engine), so a call costs O(1) amortised.
  void progress();
  // Completes every receive and send of this round.
  void wait_all();

  std::uint64_t messages_sent() const { return messages_sent_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  int right() const { return right_; }

 private:
  MPI_Comm comm_;
  int left_, right_;
  std::size_t block_elems_, tile_elems_;
  std::vector<MPI_Request> requests_;  // in posting order
  std::size_t oldest_ = 0;             // requests_[0, oldest_) are complete
  std::uint64_t messages_sent_ = 0, bytes_sent_ = 0;
};

}  // namespace pxq::comm
