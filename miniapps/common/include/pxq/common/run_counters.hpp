// The lifecycle's counters (--counters hw|sim): opened on every rank after the warm-up, read
// around the timed iterations, and reduced into the record's "counters", the same shape for
// every source. Without counters the record says why and how to get simulated ones; it never
// holds zeros in their place.
#pragma once

#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pxq/common/counters.hpp"

namespace pxq::common {

class RunCounters {
 public:
  // `how`: "" or "off" (no counters), "hw" (PAPI or perf_event), "sim" (the ranks run under
  // valgrind's callgrind, started by the driver). Collective: every rank counts, or none does.
  // `open` opens the hardware counters (the tests pass their own source).
  RunCounters(MPI_Comm comm, const std::string& how, const std::function<CounterOpen()>& open = open_hardware_counters);
  bool on() const { return how_ == "hw" || how_ == "sim"; }
  Counters* counters() { return counters_.get(); }
  // Around the timed iterations. With "sim", callgrind's counts are zeroed at start and dumped
  // at stop, labelled with the rank, for the driver to read.
  void start();
  void stop(int rank);
  // Collective: the record's "counters" on rank 0 (null elsewhere and when off). `phases` are
  // the per-phase counts of the phase timers, over the phase names every rank has.
  nlohmann::json summarize(MPI_Comm comm, int rank, const std::map<std::string, std::vector<double>>& phases,
                           const std::vector<std::string>& phase_names) const;

 private:
  std::string how_;
  std::unique_ptr<Counters> counters_;
  std::string reason_;
  std::vector<double> at_start_, counted_;
  bool under_valgrind_ = false;
};

// The banner's line for a record's "counters".
std::string counters_line(const nlohmann::json& counters);

}  // namespace pxq::common
