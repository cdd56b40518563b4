// Timing rules in one place: named phases, wall-clock seconds, reduced to the slowest rank.
#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "pxq/common/counters.hpp"
#include "pxq/common/trace.hpp"

namespace pxq::common {

class PhaseTimers {
 public:
  // Adds the time spent in `fn` to `phase`, and what the counters counted in it when set; with
  // a trace asked for, keeps the span too (the same two clock readings).
  template <class Fn>
  void time(const std::string& phase, Fn&& fn) {
    if (counters_ == nullptr) {
      const double t0 = MPI_Wtime();
      fn();
      const double t1 = MPI_Wtime();
      seconds_[phase] += t1 - t0;
      if (trace::enabled()) trace::span(phase, "phase", t0, t1);
      return;
    }
    const std::vector<double> before = counters_->read();
    const double t0 = MPI_Wtime();
    fn();
    const double t1 = MPI_Wtime();
    seconds_[phase] += t1 - t0;
    if (trace::enabled()) trace::span(phase, "phase", t0, t1);
    const std::vector<double> after = counters_->read();
    std::vector<double>& sum = counts_[phase];
    sum.resize(after.size(), 0.0);
    for (std::size_t i = 0; i < after.size(); ++i) sum[i] += after[i] - before[i];
  }
  // Counts every timed phase with `c` too (nullptr: time only). The counters outlive the timers' use.
  void count_with(Counters* c) { counters_ = c; }
  // Per phase timed with counters set, one value per counters event.
  const std::map<std::string, std::vector<double>>& counts() const { return counts_; }
  void add(const std::string& phase, double s) { seconds_[phase] += s; }
  double get(const std::string& phase) const {
    auto it = seconds_.find(phase);
    return it == seconds_.end() ? 0.0 : it->second;
  }
  void reset() {
    seconds_.clear();
    counts_.clear();
  }
  // Per phase, the maximum over the ranks of `comm` (collective; phases must be the same
  // set on every rank).
  std::map<std::string, double> max_over_ranks(MPI_Comm comm) const;

 private:
  std::map<std::string, double> seconds_;
  Counters* counters_ = nullptr;
  std::map<std::string, std::vector<double>> counts_;
};

// Barrier, then the time: every rank starts a timed region together.
inline double synced_time(MPI_Comm comm) {
  MPI_Barrier(comm);
  return MPI_Wtime();
}

}  // namespace pxq::common
