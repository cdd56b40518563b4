// A planned halo exchange for a block of a 3-D grid with a one-point halo (i1 fastest), as
// NAS MG's comm3 does it: axis by axis (1, 2, then 3), each axis carrying the halo the
// earlier axes filled, so edges and corners arrive without diagonal messages. Per axis, the
// receives from both neighbours are posted before the faces are packed and sent; then the
// received faces are unpacked into the halo.
//
// An axis whose neighbour is this rank itself (one process along that axis, or a level every
// rank holds whole) is a periodic copy in memory: no message.
//
// Planned once per level: neighbours, face sizes, buffers and tags are fixed at
// construction; exchange() only packs, talks and unpacks.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "pxq/comm/peer_traffic.hpp"

namespace pxq::comm {

// Per axis (0 = i1, 1 = i2, 2 = i3): the rank holding the block below and above this one.
// A neighbour equal to `self` means a periodic copy.
struct HaloNeighbours {
  std::array<int, 3> lower{};
  std::array<int, 3> upper{};
};

class HaloPlan {
 public:
  // n1 x n2 x n3 points including the halo (each at least 3). `tag_base` keeps the plans of
  // different levels apart (6 tags from it are used).
  HaloPlan(MPI_Comm comm, int self, int n1, int n2, int n3, const HaloNeighbours& nbr, int tag_base);

  // Refreshes the halo of `u` (n1*n2*n3 doubles). Counts every message in `traffic`.
  // Throws std::runtime_error when MPI reports an error.
  void exchange(double* u, PeerTraffic& traffic);
  // One axis of exchange() (0 = i1, 1 = i2, 2 = i3): both faces of that axis only, for a
  // caller that needs one face refreshed early. Throws std::invalid_argument for another axis.
  void exchange_axis(double* u, int axis, PeerTraffic& traffic);

  // Messages and bytes one exchange() sends.
  std::uint64_t messages_per_exchange() const;
  std::uint64_t bytes_per_exchange() const;
  bool local_only() const;

 private:
  void pack(const double* u, int axis, bool upper_face, double* buf) const;
  void unpack(double* u, int axis, bool upper_halo, const double* buf) const;
  void copy_periodic(double* u, int axis) const;
  int face_size(int axis) const;

  MPI_Comm comm_;
  int self_;
  int n_[3];
  HaloNeighbours nbr_;
  int tag_base_;
  std::vector<double> send_lo_, send_hi_, recv_lo_, recv_hi_;
};

}  // namespace pxq::comm
