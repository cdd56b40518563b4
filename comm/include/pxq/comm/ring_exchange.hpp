// A planned ring exchange: a block flows from the left neighbour and to the right one,
// tile by tile, with non-blocking messages (one request per tile and direction, the tag is
// the tile index). The caller decides the schedule: in the ring proxy a tile is waited for
// just before it is computed and sent just after, so it crosses the node while in cache.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pxq::comm {

class RingExchange {
 public:
  // Plans the messages of one block of `block_elems` doubles cut into `tile_elems` tiles.
  RingExchange(MPI_Comm comm, int left, int right, std::size_t block_elems, std::size_t tile_elems);
  ~RingExchange();
  RingExchange(const RingExchange&) = delete;
  RingExchange& operator=(const RingExchange&) = delete;

  std::size_t tiles() const { return recv_.size(); }
  std::size_t tile_begin(std::size_t tile) const { return tile * tile_elems_; }
  std::size_t tile_end(std::size_t tile) const;

  // Receive tile `tile` of the next block from the left into `block` (its tile's range).
  void post_receive(double* block, std::size_t tile);
  void wait_receive(std::size_t tile);
  // Send tile `tile` of `block` to the right; `block` must stay untouched until wait_send.
  void send(const double* block, std::size_t tile);
  void wait_send(std::size_t tile);
  // Lets the MPI library move data without blocking (one test: it drives the engine).
  void progress();
  // Completes every request still pending.
  void wait_all();

  std::uint64_t messages_sent() const { return messages_sent_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  MPI_Comm comm_;
  int left_, right_;
  std::size_t block_elems_, tile_elems_;
  std::vector<MPI_Request> recv_, send_;
  std::size_t last_send_ = 0;
  std::uint64_t messages_sent_ = 0, bytes_sent_ = 0;
};

}  // namespace pxq::comm
