// Ring exchange by tiles with non-blocking point-to-point messages; the tag is the tile index
// (messages of one tile between the same pair never overtake each other, so successive
// rounds of the same tile match in order).
#include "pxq/comm/ring_exchange.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "pxq/comm/mpi_check.hpp"

namespace pxq::comm {

RingExchange::RingExchange(MPI_Comm comm, int left, int right, std::size_t block_elems, std::size_t tile_elems)
    : comm_(comm), left_(left), right_(right), block_elems_(block_elems), tile_elems_(tile_elems) {
  if (tile_elems == 0 || tile_elems > block_elems)
    throw std::invalid_argument("ring exchange: tile must be 1..block elements");
  if (tile_elems > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("ring exchange: a tile of more than INT_MAX doubles");
  int* tag_ub = nullptr;
  int flag = 0;
  check_mpi(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &flag), "MPI_Comm_get_attr");
  const std::size_t tiles = (block_elems + tile_elems - 1) / tile_elems;
  if (flag && tiles > static_cast<std::size_t>(*tag_ub))
    throw std::invalid_argument("ring exchange: " + std::to_string(tiles) +
                                " tiles per block exceed this MPI's tag limit of " + std::to_string(*tag_ub) +
                                ": use a larger tile");
  recv_.assign(tiles, MPI_REQUEST_NULL);
  send_.assign(tiles, MPI_REQUEST_NULL);
}

RingExchange::~RingExchange() {
  // Never leave requests behind (an exception unwinding past a round): cancel receives,
  // complete sends.
  for (auto& r : recv_)
    if (r != MPI_REQUEST_NULL) {
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
}

std::size_t RingExchange::tile_end(std::size_t tile) const { return std::min(block_elems_, (tile + 1) * tile_elems_); }

void RingExchange::post_receive(double* block, std::size_t tile) {
  const std::size_t b = tile_begin(tile);
  check_mpi(MPI_Irecv(block + b, static_cast<int>(tile_end(tile) - b), MPI_DOUBLE, left_, static_cast<int>(tile), comm_,
                      &recv_[tile]),
            "MPI_Irecv");
}

void RingExchange::wait_receive(std::size_t tile) { check_mpi(MPI_Wait(&recv_[tile], MPI_STATUS_IGNORE), "MPI_Wait"); }

void RingExchange::send(const double* block, std::size_t tile) {
  const std::size_t b = tile_begin(tile);
  const int n = static_cast<int>(tile_end(tile) - b);
  check_mpi(MPI_Isend(block + b, n, MPI_DOUBLE, right_, static_cast<int>(tile), comm_, &send_[tile]), "MPI_Isend");
  last_send_ = tile;
  ++messages_sent_;
  bytes_sent_ += static_cast<std::uint64_t>(n) * sizeof(double);
}

void RingExchange::wait_send(std::size_t tile) { check_mpi(MPI_Wait(&send_[tile], MPI_STATUS_IGNORE), "MPI_Wait"); }

void RingExchange::progress() {
  int done = 0;
  check_mpi(MPI_Test(&send_[last_send_], &done, MPI_STATUS_IGNORE), "MPI_Test");
}

void RingExchange::wait_all() {
  check_mpi(MPI_Waitall(static_cast<int>(recv_.size()), recv_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  check_mpi(MPI_Waitall(static_cast<int>(send_.size()), send_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

}  // namespace pxq::comm
