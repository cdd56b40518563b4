// Phase timers reduced to the slowest rank.
#include "pxq/common/timer.hpp"

#include <vector>

namespace pxq::common {

std::map<std::string, double> PhaseTimers::max_over_ranks(MPI_Comm comm) const {
  std::vector<double> local;
  local.reserve(seconds_.size());
  for (const auto& kv : seconds_) local.push_back(kv.second);
  std::vector<double> global(local.size());
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, comm);
  std::map<std::string, double> out;
  std::size_t i = 0;
  for (const auto& kv : seconds_) out[kv.first] = global[i++];
  return out;
}

}  // namespace pxq::common
