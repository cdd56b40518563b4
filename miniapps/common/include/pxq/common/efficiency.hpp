// The POP efficiency breakdown of one run, from every rank's elapsed and communication time
// (no MPI here, so the unit tests check it directly):
//   useful       = elapsed - communication, per rank
//   load balance = mean(useful) / max(useful)
//   communication efficiency = max(useful) / runtime (the slowest rank's elapsed time)
//   parallel efficiency      = load balance x communication efficiency = mean(useful) / runtime
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pxq::common {

struct Efficiency {
  double load_balance = 0.0, communication = 0.0, parallel = 0.0;  // 0: nothing to judge
  std::vector<double> useful, comm;                                // per rank, seconds
};

inline Efficiency efficiency_of(const std::vector<double>& elapsed, const std::vector<double>& comm) {
  Efficiency e;
  double runtime = 0.0, sum = 0.0, most = 0.0;
  for (std::size_t i = 0; i < elapsed.size() && i < comm.size(); ++i) {
    const double useful = std::max(0.0, elapsed[i] - comm[i]);
    e.useful.push_back(useful);
    e.comm.push_back(comm[i]);
    runtime = std::max(runtime, elapsed[i]);
    sum += useful;
    most = std::max(most, useful);
  }
  if (e.useful.empty() || runtime <= 0.0 || most <= 0.0) return e;
  e.load_balance = sum / static_cast<double>(e.useful.size()) / most;
  e.communication = most / runtime;
  e.parallel = e.load_balance * e.communication;
  return e;
}

}  // namespace pxq::common
