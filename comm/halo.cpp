// The planned halo exchange (see halo.hpp).
#include "pxq/comm/halo.hpp"

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

// The face of axis `axis` at index `i` along it, as NAS walks it: axis 0 over the interior
// of i2 and i3; axis 1 over all i1 and interior i3; axis 2 over all i1 and i2.
template <class Fn>
void for_face(const int n[3], int axis, int i, Fn&& fn) {
  if (axis == 0) {
    for (int i3 = 1; i3 < n[2] - 1; ++i3)
      for (int i2 = 1; i2 < n[1] - 1; ++i2) fn(at(n, i, i2, i3));
  } else if (axis == 1) {
    for (int i3 = 1; i3 < n[2] - 1; ++i3)
      for (int i1 = 0; i1 < n[0]; ++i1) fn(at(n, i1, i, i3));
  } else {
    for (int i2 = 0; i2 < n[1]; ++i2)
      for (int i1 = 0; i1 < n[0]; ++i1) fn(at(n, i1, i2, i));
  }
}

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
  // The lower halo gets the top interior face, the upper halo the bottom one.
  const std::ptrdiff_t stride = static_cast<std::ptrdiff_t>(axis == 0 ? 1 : (axis == 1 ? n_[0] : n_[0] * n_[1]));
  for_face(n_, axis, 0, [&](std::size_t p) {
    u[p] = u[p + static_cast<std::size_t>(stride * (n - 2))];
    u[p + static_cast<std::size_t>(stride * (n - 1))] = u[p + static_cast<std::size_t>(stride)];
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
