// Timing rules in one place: named phases, wall-clock seconds, reduced to the slowest rank.
#pragma once

#include <mpi.h>

#include <map>
#include <string>

namespace pxq::common {

class PhaseTimers {
 public:
  // Adds the time spent in `fn` to `phase`.
  template <class Fn>
  void time(const std::string& phase, Fn&& fn) {
    const double t0 = MPI_Wtime();
    fn();
    seconds_[phase] += MPI_Wtime() - t0;
  }
  void add(const std::string& phase, double s) { seconds_[phase] += s; }
  double get(const std::string& phase) const {
    auto it = seconds_.find(phase);
    return it == seconds_.end() ? 0.0 : it->second;
  }
  void reset() { seconds_.clear(); }
  // Per phase, the maximum over the ranks of `comm` (collective; phases must be the same
  // set on every rank).
  std::map<std::string, double> max_over_ranks(MPI_Comm comm) const;

 private:
  std::map<std::string, double> seconds_;
};

// Barrier, then the time: every rank starts a timed region together.
inline double synced_time(MPI_Comm comm) {
  MPI_Barrier(comm);
  return MPI_Wtime();
}

}  // namespace pxq::common
