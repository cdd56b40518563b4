// What the point-to-point probes share: the byte pattern that validation checks and one
// ping-pong round trip between two ranks.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace pxq::probes {

// Byte i of a message stamped `stamp`: differs from message to message and byte to byte.
inline unsigned char pattern(std::size_t i, long stamp) {
  return static_cast<unsigned char>((i * 131 + static_cast<std::size_t>(stamp) * 7 + 1) & 0xff);
}
inline void fill(unsigned char* buf, std::size_t n, long stamp) {
  for (std::size_t i = 0; i < n; ++i) buf[i] = pattern(i, stamp);
}
// Bytes of `buf` that are not the pattern.
inline long wrong_bytes(const unsigned char* buf, std::size_t n, long stamp) {
  long bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += buf[i] != pattern(i, stamp);
  return bad;
}

// One round trip with `peer`: the first side sends and then receives, the other the reverse.
inline void round_trip(const unsigned char* send, unsigned char* recv, int n, int peer, bool first, int tag,
                       MPI_Comm comm) {
  if (first) {
    MPI_Send(send, n, MPI_BYTE, peer, tag, comm);
    MPI_Recv(recv, n, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(recv, n, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
    MPI_Send(send, n, MPI_BYTE, peer, tag, comm);
  }
}

}  // namespace pxq::probes
