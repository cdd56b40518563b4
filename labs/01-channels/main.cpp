// Lab 1 harness: ping-pong between ranks 0 and 1 over message sizes from 8 bytes to 4 MiB,
// with your one_way_seconds(). Every payload carries a pattern the receiver checks, so a
// message lost or garbled fails the verification.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "lab.hpp"
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
  sizes_.push_back(bytes);
  ++trips_;
}

namespace {

// Every clock read of the student's code: MPI_Wtime below is the harness's (through MPI's
// profiling interface), so the checker knows which round trips were timed and which were not.
struct Clock {
  const Link* link = nullptr;
  std::vector<std::pair<double, long>> reads;  // (the time returned, the round trips done by then)
} clock_log;

// What one size's call did: the round trips before the first clock read (the warm-up), the
// round trips between the first and last reads (the timed ones, every one of the size asked),
// and the one-way time those reads give. The student's figure must be a one-way time of those
// trips: between the fastest and the slowest that consecutive clock reads give (one interval:
// their mean; a read around every trip: from the minimum to the maximum, so a minimum-of-trips
// estimator is as right as the mean), within a timer's slack, and at most 1.5x their mean (the
// slowest trip is an outlier, not a message's time). No estimate from these reads lies below the
// fastest: the slack under it is 10%, so a divisor that counts the warm-up trips too (200 + 10
// for 200 timed, 20 + 10 for 20) or any other more than 10% too large is named.
struct Timing {
  long warmup = 0, timed = 0;  // warm-up: untimed round trips of the size asked (a size's first pays its set-up)
  long warmup_other = 0;       // untimed round trips of another size, which warm up another size's path
  double measured = 0;         // (last read - first read) / (2 x timed round trips)
  bool plausible = true;
  std::string why;
};

Timing judge(const Link& link, std::size_t bytes, long before, long after, double one_way) {
  Timing t;
  const auto& r = clock_log.reads;
  if (r.size() < 2) {
    t.timed = after - before;
    t.plausible = false;
    t.why =
        "your code read MPI_Wtime fewer than twice, so the harness saw nothing timed: the lab's contract is to "
        "time with MPI_Wtime (the harness sees which round trips its reads span; std::chrono or clock_gettime "
        "it cannot see)";
    return t;
  }
  for (long trip = before; trip < r.front().second; ++trip) ++(link.size_of(trip) == bytes ? t.warmup : t.warmup_other);
  t.timed = r.back().second - r.front().second;
  if (t.timed <= 0) {
    t.plausible = false;
    t.why = "no round trip between the first and last clock reads: the timed section is empty";
    return t;
  }
  for (long trip = r.front().second; trip < r.back().second; ++trip)
    if (link.size_of(trip) != bytes) {
      char text[240];
      std::snprintf(text, sizeof text,
                    "round trip %ld of the timed ones carried %zu bytes, not the %zu bytes asked for: time "
                    "round_trip(bytes) with the size your function is given",
                    trip - r.front().second + 1, link.size_of(trip), bytes);
      t.plausible = false;
      t.why = text;
      return t;
    }
  t.measured = (r.back().first - r.front().first) / (2.0 * static_cast<double>(t.timed));
  double fastest = t.measured, slowest = t.measured;  // one way, over consecutive reads that span trips
  for (std::size_t i = 1; i < r.size(); ++i)
    if (r[i].second > r[i - 1].second) {
      const double each = (r[i].first - r[i - 1].first) / (2.0 * static_cast<double>(r[i].second - r[i - 1].second));
      fastest = std::min(fastest, each), slowest = std::max(slowest, each);
    }
  if (!(one_way > 0) || !std::isfinite(one_way) || one_way < 0.9 * fastest || one_way > 1.5 * slowest + 1e-7) {
    t.plausible = false;
    char text[320];
    std::snprintf(text, sizeof text,
                  "%.3g us is not one message's one-way time: the clock your code read spans %ld round trips in "
                  "%.3g us, %.3g us one way; check the divisor (2 messages per round trip, times the round trips "
                  "timed) and the unit (seconds)",
                  one_way * 1e6, t.timed, (r.back().first - r.front().first) * 1e6, t.measured * 1e6);
    t.why = text;
  } else if (one_way > 1.5 * t.measured + 1e-7) {
    // Between the fastest and the slowest trip, but above their mean: the slowest trips (an
    // interrupt, a descheduled rank) are not one message's typical time.
    t.plausible = false;
    char text[320];
    std::snprintf(text, sizeof text,
                  "%.3g us is above 1.5x the mean of the %ld round trips timed (%.3g us one way): the slowest trip "
                  "is an outlier, not a message's time; return the mean over the timed trips, or the fastest",
                  one_way * 1e6, t.timed, t.measured * 1e6);
    t.why = text;
  }
  return t;
}

int run(const lab::World& w) {
  if (w.size < 2) throw std::invalid_argument("the ping-pong needs 2 ranks: mpirun -np 2");
  Link link(w);
  lab::Json sizes = lab::Json::array();
  if (w.rank == 0) std::printf("%10s %12s %12s %8s\n", "bytes", "latency_us", "MB/s", "trips");
  std::string wrong;
  for (std::size_t bytes = 8; bytes <= (4u << 20); bytes *= 8) {
    MPI_Barrier(w.comm);
    const long before = link.round_trips();
    clock_log.reads.clear();
    clock_log.link = &link;
    const double s = w.rank <= 1 ? one_way_seconds(link, bytes) : 0.0;
    clock_log.link = nullptr;
    const long trips = link.round_trips() - before;
    if (w.rank == 0) {
      const Timing t = judge(link, bytes, before, link.round_trips(), s);
      if (!t.plausible && wrong.empty()) wrong = std::to_string(bytes) + " B: " + t.why;
      std::printf("%10zu %12.2f %12.1f %8ld\n", bytes, s * 1e6, bytes / s / 1e6, trips);
      sizes.push_back({{"bytes", bytes},
                       {"seconds", s},
                       {"round_trips", trips},
                       {"warmup_trips", t.warmup},
                       {"warmup_other_trips", t.warmup_other},
                       {"timed_trips", t.timed},
                       {"clock_one_way_s", t.measured},
                       {"timing_plausible", t.plausible}});
    }
  }
  int ok = link.intact() && wrong.empty() ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, w.comm);
  return lab::finish(w, "01-channels", all == 1, {{"ranks", w.size}, {"sizes", sizes}},
                     "every payload arrived intact, every time is one message's",
                     wrong.empty() ? "a payload arrived garbled" : wrong);
}

}  // namespace
}  // namespace pingpong

// The clock the student's code reads: MPI's own (PMPI_Wtime), logged with the round trips done.
extern "C" double MPI_Wtime() {
  const double now = PMPI_Wtime();
  if (pingpong::clock_log.link != nullptr)
    pingpong::clock_log.reads.emplace_back(now, pingpong::clock_log.link->round_trips());
  return now;
}

int main(int argc, char** argv) {
  return lab::run(
      argc, argv, MPI_THREAD_SINGLE, [](CLI::App& app) { app.description("Lab 1: ping-pong (your pingpong.cpp)"); },
      [](const lab::World& w) { return pingpong::run(w); });
}
