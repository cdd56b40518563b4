// Lab 1: three channels. This measurement works, and its numbers cannot be trusted.
#include "pingpong.hpp"

namespace pingpong {

double one_way_seconds(Link& link, std::size_t bytes) {
  // LAB: this times a single round trip. The first message of a size pays for setting up the
  // connection, faulting in the buffers and warming the caches, and MPI_Wtime's resolution
  // is close to a small message's latency. Make a few untimed warm-up round trips, then time
  // many (say 100 for small messages, 20 for large ones) and divide: half a round trip is one
  // message one way. Both ranks must make the same number of calls.
  const double t0 = MPI_Wtime();
  link.round_trip(bytes);
  return (MPI_Wtime() - t0) / 2.0;
}

}  // namespace pingpong
