// Lab 1 harness: ping-pong between ranks 0 and 1 over message sizes from 8 bytes to 4 MiB,
// with your one_way_seconds(). Every payload carries a pattern the receiver checks, so a
// message lost or garbled fails the verification.
#include <cstdio>

#include "pingpong.hpp"

namespace pingpong {

namespace {
unsigned char pattern(long trip, std::size_t k, int hop) { return static_cast<unsigned char>(trip * 31 + k * 7 + hop); }

// The bytes that carry the pattern: all of a small message, 64 spread over a large one and
// its last byte, so that marking and checking cost far less than the transfer.
template <class F>
void marked(std::size_t bytes, F&& f) {
  const std::size_t step = bytes > 512 ? bytes / 64 : 1;
  for (std::size_t k = 0; k < bytes; k += step) f(k);
  if (bytes > 0) f(bytes - 1);
}
}  // namespace

Link::Link(const lab::World& w) : w_(w), send_(4u << 20), recv_(4u << 20) {}

void Link::round_trip(std::size_t bytes) {
  if (bytes > send_.size()) throw std::invalid_argument("round_trip: at most 4 MiB");
  const int n = static_cast<int>(bytes);
  const int hop_in = w_.rank == 0 ? 1 : 0;  // rank 1 receives hop 0, rank 0 receives hop 1
  if (w_.rank == 0) {
    marked(bytes, [&](std::size_t k) { send_[k] = pattern(trips_, k, 0); });
    MPI_Send(send_.data(), n, MPI_BYTE, 1, 0, w_.comm);
    MPI_Recv(recv_.data(), n, MPI_BYTE, 1, 0, w_.comm, MPI_STATUS_IGNORE);
  } else if (w_.rank == 1) {
    MPI_Recv(recv_.data(), n, MPI_BYTE, 0, 0, w_.comm, MPI_STATUS_IGNORE);
    marked(bytes, [&](std::size_t k) { send_[k] = pattern(trips_, k, 1); });
    MPI_Send(send_.data(), n, MPI_BYTE, 0, 0, w_.comm);
  }
  if (w_.rank <= 1) marked(bytes, [&](std::size_t k) { intact_ = intact_ && recv_[k] == pattern(trips_, k, hop_in); });
  ++trips_;
}

namespace {

int run(const lab::World& w) {
  if (w.size < 2) throw std::invalid_argument("the ping-pong needs 2 ranks: mpirun -np 2");
  Link link(w);
  lab::Json sizes = lab::Json::array();
  if (w.rank == 0) std::printf("%10s %12s %12s %8s\n", "bytes", "latency_us", "MB/s", "trips");
  for (std::size_t bytes = 8; bytes <= (4u << 20); bytes *= 8) {
    MPI_Barrier(w.comm);
    const long before = link.round_trips();
    const double s = w.rank <= 1 ? one_way_seconds(link, bytes) : 0.0;
    const long trips = link.round_trips() - before;
    if (w.rank == 0) {
      std::printf("%10zu %12.2f %12.1f %8ld\n", bytes, s * 1e6, bytes / s / 1e6, trips);
      sizes.push_back({{"bytes", bytes}, {"seconds", s}, {"round_trips", trips}});
    }
  }
  int ok = link.intact() ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, w.comm);
  lab::emit(w, {{"lab", "01-channels"}, {"verified", all == 1}, {"ranks", w.size}, {"sizes", sizes}});
  return lab::report_verification(w, all == 1, all == 1 ? "every payload arrived intact" : "a payload arrived garbled");
}

}  // namespace
}  // namespace pingpong

int main(int argc, char** argv) {
  return lab::run(
      argc, argv, MPI_THREAD_SINGLE, [](CLI::App& app) { app.description("Lab 1: ping-pong (your pingpong.cpp)"); },
      [](const lab::World& w) { return pingpong::run(w); });
}
