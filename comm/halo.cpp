// The planned halo exchange (see halo.hpp).
#include "pxq/comm/halo.hpp"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "pxq/comm/mpi_check.hpp"

namespace pxq::comm {
namespace {

inline std::size_t at(const int n[3], int i1, int i2, int i3) {
  return (static_cast<std::size_t>(i3) * static_cast<std::size_t>(n[1]) + static_cast<std::size_t>(i2)) *
             static_cast<std::size_t>(n[0]) +
         static_cast<std::size_t>(i1);
}

// A face's outer index runs over [outer_begin, outer_end): i3's interior for axes 0 and 1, all
// of i2 for axis 2.
inline int outer_begin(int axis) { return axis == 2 ? 0 : 1; }
inline int outer_end(const int n[3], int axis) { return axis == 2 ? n[1] : n[2] - 1; }

// Row `o` (the outer index) of the face of axis `axis` at index `i` along it, as NAS walks it:
// axis 0 over the interior of i2; axis 1 and 2 over all i1.
template <class Fn>
void for_face_row(const int n[3], int axis, int i, int o, Fn&& fn) {
  if (axis == 0) {
    for (int i2 = 1; i2 < n[1] - 1; ++i2) fn(at(n, i, i2, o));
  } else if (axis == 1) {
    for (int i1 = 0; i1 < n[0]; ++i1) fn(at(n, i1, i, o));
  } else {
    for (int i1 = 0; i1 < n[0]; ++i1) fn(at(n, i1, o, i));
  }
}

// The whole face, row by row.
template <class Fn>
void for_face(const int n[3], int axis, int i, Fn&& fn) {
  for (int o = outer_begin(axis); o < outer_end(n, axis); ++o) for_face_row(n, axis, i, o, fn);
}

// Below this many points a periodic face is copied by one thread: the fork would cost more
// than the copy (the coarse levels of the V-cycle).
constexpr int kParallelFacePoints = 16384;

}  // namespace

HaloPlan::HaloPlan(MPI_Comm comm, int self, int n1, int n2, int n3, const HaloNeighbours& nbr, int tag_base)
    : comm_(comm), self_(self), n_{n1, n2, n3}, nbr_(nbr), tag_base_(tag_base) {
  if (n1 < 3 || n2 < 3 || n3 < 3)
    throw std::invalid_argument("halo plan: a block needs at least one interior point per axis, got " +
                                std::to_string(n1) + "x" + std::to_string(n2) + "x" + std::to_string(n3));
  int largest = 0;
  for (int axis = 0; axis < 3; ++axis) largest = std::max(largest, face_size(axis));
  for (auto* b : {&send_lo_, &send_hi_, &recv_lo_, &recv_hi_}) b->assign(static_cast<std::size_t>(largest), 0.0);
}

int HaloPlan::face_size(int axis) const {
  if (axis == 0) return (n_[1] - 2) * (n_[2] - 2);
  if (axis == 1) return n_[0] * (n_[2] - 2);
  return n_[0] * n_[1];
}

bool HaloPlan::local_only() const {
  for (int axis = 0; axis < 3; ++axis)
    if (nbr_.lower[axis] != self_ || nbr_.upper[axis] != self_) return false;
  return true;
}

std::uint64_t HaloPlan::messages_per_exchange() const {
  std::uint64_t m = 0;
  for (int axis = 0; axis < 3; ++axis)
    if (nbr_.lower[axis] != self_ || nbr_.upper[axis] != self_) m += 2;
  return m;
}

std::uint64_t HaloPlan::bytes_per_exchange() const {
  std::uint64_t b = 0;
  for (int axis = 0; axis < 3; ++axis)
    if (nbr_.lower[axis] != self_ || nbr_.upper[axis] != self_)
      b += 2 * static_cast<std::uint64_t>(face_size(axis)) * sizeof(double);
  return b;
}

void HaloPlan::pack(const double* u, int axis, bool upper_face, double* buf) const {
  std::size_t k = 0;
  for_face(n_, axis, upper_face ? n_[axis] - 2 : 1, [&](std::size_t p) { buf[k++] = u[p]; });
}

void HaloPlan::unpack(double* u, int axis, bool upper_halo, const double* buf) const {
  std::size_t k = 0;
  for_face(n_, axis, upper_halo ? n_[axis] - 1 : 0, [&](std::size_t p) { u[p] = buf[k++]; });
}

void HaloPlan::copy_periodic(double* u, int axis) const {
  const int n = n_[axis];
  // The lower halo gets the top interior face, the upper halo the bottom one. A rank's threads
  // (a hybrid run's) share the rows of a large face: axis 0's is a point per row of the block,
  // a cache line each.
  const std::ptrdiff_t stride = static_cast<std::ptrdiff_t>(axis == 0 ? 1 : (axis == 1 ? n_[0] : n_[0] * n_[1]));
  const auto top = static_cast<std::size_t>(stride * (n - 2)), halo = static_cast<std::size_t>(stride * (n - 1));
  const auto first = static_cast<std::size_t>(stride);
  const int nt = face_size(axis) >= kParallelFacePoints ? omp_get_max_threads() : 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int o = outer_begin(axis); o < outer_end(n_, axis); ++o)
    for_face_row(n_, axis, 0, o, [&](std::size_t p) {
      u[p] = u[p + top];
      u[p + halo] = u[p + first];
    });
}

void HaloPlan::exchange(double* u, PeerTraffic& traffic) {
  for (int axis = 0; axis < 3; ++axis) exchange_axis(u, axis, traffic);
}

void HaloPlan::exchange_axis(double* u, int axis, PeerTraffic& traffic) {
  if (axis < 0 || axis > 2)
    throw std::invalid_argument("halo plan: axis " + std::to_string(axis) + " is not 0, 1 or 2");
  const int lo = nbr_.lower[axis], hi = nbr_.upper[axis];
  if (lo == self_ && hi == self_) {
    copy_periodic(u, axis);
    return;
  }
  const int count = face_size(axis);
  // Tags name the direction of travel: "upward" messages fill the receiver's lower halo.
  const int tag_up = tag_base_ + 2 * axis, tag_down = tag_base_ + 2 * axis + 1;
  MPI_Request req[4];
  check_mpi(MPI_Irecv(recv_lo_.data(), count, MPI_DOUBLE, lo, tag_up, comm_, &req[0]), "MPI_Irecv (halo)");
  check_mpi(MPI_Irecv(recv_hi_.data(), count, MPI_DOUBLE, hi, tag_down, comm_, &req[1]), "MPI_Irecv (halo)");
  pack(u, axis, true, send_hi_.data());
  pack(u, axis, false, send_lo_.data());
  check_mpi(MPI_Isend(send_hi_.data(), count, MPI_DOUBLE, hi, tag_up, comm_, &req[2]), "MPI_Isend (halo)");
  check_mpi(MPI_Isend(send_lo_.data(), count, MPI_DOUBLE, lo, tag_down, comm_, &req[3]), "MPI_Isend (halo)");
  check_mpi(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall (halo)");
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * sizeof(double);
  traffic.count(hi, bytes);
  traffic.count(lo, bytes);
  unpack(u, axis, false, recv_lo_.data());
  unpack(u, axis, true, recv_hi_.data());
}

}  // namespace pxq::comm
