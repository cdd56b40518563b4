// Ring exchange by tiles with non-blocking point-to-point messages; the tag is the tile index.
#include "pxq/comm/ring_exchange.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "pxq/comm/mpi_check.hpp"

namespace pxq::comm {

RingExchange::RingExchange(MPI_Comm comm, int left, int right, std::size_t block_elems,
                           std::size_t tile_elems)
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
                                " tiles per block exceed this MPI's tag limit of " +
                                std::to_string(*tag_ub) + ": use a larger tile");
  requests_.reserve(2 * ((block_elems + tile_elems - 1) / tile_elems));
}

void RingExchange::post_receives(double* recv_block) {
  int tag = 0;
  for (std::size_t b = 0; b < block_elems_; b += tile_elems_, ++tag) {
    const int n = static_cast<int>(std::min(tile_elems_, block_elems_ - b));
    MPI_Request r;
    check_mpi(MPI_Irecv(recv_block + b, n, MPI_DOUBLE, left_, tag, comm_, &r), "MPI_Irecv");
    requests_.push_back(r);
  }
}

void RingExchange::send_tile(const double* block, std::size_t begin, std::size_t end) {
  const int n = static_cast<int>(end - begin);
  const int tag = static_cast<int>(begin / tile_elems_);
  MPI_Request r;
  check_mpi(MPI_Isend(block + begin, n, MPI_DOUBLE, right_, tag, comm_, &r), "MPI_Isend");
  requests_.push_back(r);
  ++messages_sent_;
  bytes_sent_ += static_cast<std::uint64_t>(n) * sizeof(double);
}

void RingExchange::progress() {
  while (oldest_ < requests_.size()) {
    int done = 0;
    check_mpi(MPI_Test(&requests_[oldest_], &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) break;
    ++oldest_;
  }
}

void RingExchange::wait_all() {
  const int pending = static_cast<int>(requests_.size() - oldest_);
  check_mpi(MPI_Waitall(pending, requests_.data() + oldest_, MPI_STATUSES_IGNORE), "MPI_Waitall");
  requests_.clear();
  oldest_ = 0;
}

}  // namespace pxq::comm
