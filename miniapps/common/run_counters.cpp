// The lifecycle's counters and their reduction into the record.
#include "pxq/common/run_counters.hpp"

#ifdef PXQ_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
// Built without valgrind's header: never under the simulator, as far as the run can tell.
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(label) static_cast<void>(label)
#endif

#include <cmath>
#include <cstdio>
#include <limits>

namespace pxq::common {
namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// One value per counter_names() entry, NaN where the source does not count it.
std::vector<double> by_name(const Counters& c, const std::vector<double>& values) {
  std::vector<double> out(counter_names().size(), kNone);
  for (std::size_t e = 0; e < c.events().size(); ++e)
    for (std::size_t n = 0; n < counter_names().size(); ++n)
      if (counter_names()[n] == c.events()[e].name) out[n] = values[e];
  return out;
}

nlohmann::json named(const double* values) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t n = 0; n < counter_names().size(); ++n)
    if (!std::isnan(values[n])) j[counter_names()[n]] = std::llround(values[n]);
  return j;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

RunCounters::RunCounters(MPI_Comm comm, const std::string& how, const std::function<CounterOpen()>& open)
    : how_(how == "off" ? "" : how) {
  int ok = 1;
  if (how_ == "hw") {
    CounterOpen o = open();
    counters_ = std::move(o.counters);
    reason_ = o.reason;
    ok = counters_ ? 1 : 0;
  } else if (how_ == "sim") {
    ok = RUNNING_ON_VALGRIND ? 1 : 0;
  }
  int all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
  if (how_ == "hw" && !all && counters_) {
    counters_.reset();
    reason_ = "another rank could not open hardware counters, so none counts. " + simulated_hint();
  }
  under_valgrind_ = how_ == "sim" && all;
}

void RunCounters::start() {
  if (counters_) at_start_ = counters_->read();
  if (under_valgrind_) CALLGRIND_ZERO_STATS;
}

void RunCounters::stop(int rank) {
  if (under_valgrind_) {
    const std::string label = "pxq rank " + std::to_string(rank) + " timed iterations";
    CALLGRIND_DUMP_STATS_AT(label.c_str());
  }
  if (!counters_) return;
  const std::vector<double> now = counters_->read();
  counted_.assign(now.size(), 0.0);
  for (std::size_t i = 0; i < now.size(); ++i) counted_[i] = now[i] - at_start_[i];
}

nlohmann::json RunCounters::summarize(MPI_Comm comm, int rank, const std::map<std::string, std::vector<double>>& phases,
                                      const std::vector<std::string>& phase_names) const {
  if (!on()) return nullptr;
  nlohmann::json out = {{"scope", "timed iterations"}};
  if (how_ == "sim") {
    out.update({{"source", under_valgrind_ ? "callgrind" : "none"}, {"simulated", true}});
    out["note"] = under_valgrind_ ? "simulated counts, read by the driver from callgrind's dumps"
                                  : "--counters sim: this run is not under valgrind's cache simulator; start it "
                                    "with pxq run --counters sim, which does that";
    return rank == 0 ? out : nlohmann::json(nullptr);
  }
  if (!counters_) {
    out.update({{"source", "none"}, {"simulated", false}, {"note", reason_}});
    return rank == 0 ? out : nlohmann::json(nullptr);
  }
  const std::size_t n = counter_names().size();
  int size = 1;
  MPI_Comm_size(comm, &size);
  const std::vector<double> mine = by_name(*counters_, counted_);
  std::vector<double> all(n * static_cast<std::size_t>(size));
  MPI_Gather(mine.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm);
  // Per phase: the counts and whether the phase was counted at all (1), summed over the ranks.
  std::vector<double> local((n + 1) * phase_names.size(), 0.0), summed(local.size(), 0.0);
  for (std::size_t p = 0; p < phase_names.size(); ++p) {
    const auto it = phases.find(phase_names[p]);
    if (it == phases.end()) continue;
    const std::vector<double> v = by_name(*counters_, it->second);
    std::copy(v.begin(), v.end(), local.begin() + static_cast<long>(p * (n + 1)));
    local[p * (n + 1) + n] = 1.0;
  }
  MPI_Reduce(local.data(), summed.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
  if (rank != 0) return nullptr;
  nlohmann::json events = nlohmann::json::object(), per_rank = nlohmann::json::array();
  for (const auto& e : counters_->events()) events[e.name] = e.native;
  std::vector<double> total(n, 0.0);
  for (int r = 0; r < size; ++r) {
    per_rank.push_back(named(&all[static_cast<std::size_t>(r) * n]));
    for (std::size_t i = 0; i < n; ++i) total[i] += all[static_cast<std::size_t>(r) * n + i];
  }
  nlohmann::json by_phase = nlohmann::json::object();
  for (std::size_t p = 0; p < phase_names.size(); ++p)
    if (summed[p * (n + 1) + n] > 0) by_phase[phase_names[p]] = named(&summed[p * (n + 1)]);
  out.update({{"source", counters_->source()},
              {"simulated", false},
              {"events", events},
              {"per_rank", per_rank},
              {"total", named(total.data())},
              {"phases", by_phase}});
  if (!counters_->skipped.empty()) out["skipped"] = counters_->skipped;
  return out;
}

std::string counters_line(const nlohmann::json& c) {
  if (c.is_null()) return "";
  if (c.value("source", "none") == "none") return "not counted: " + c.value("note", std::string("no reason given"));
  if (!c.contains("total")) return c.value("source", std::string()) + " (" + c.value("note", std::string()) + ")";
  std::string line = c["source"].get<std::string>() + ", timed iterations, all ranks:";
  for (const auto& [name, v] : c["total"].items()) line += " " + name + " " + sci(v.get<double>());
  return line;
}

}  // namespace pxq::common
