// The lifecycle's counters under MPI with a counting source of known steps: per rank, in all
// and per phase reduced to rank 0 exactly; an event the source does not count is absent; a rank
// that cannot open counters makes every rank go without, with the reason. Exit 0 on success.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "pxq/common/run_counters.hpp"
#include "pxq/common/timer.hpp"

namespace {

using pxq::common::CounterEvent;
using pxq::common::CounterOpen;

// Every read moves instructions by 100 x (rank + 1) and L2 misses by 3.
class Stepping final : public pxq::common::Counters {
 public:
  explicit Stepping(int rank) : step_(100.0 * (rank + 1)) {}
  std::string source() const override { return "stepping"; }
  const std::vector<CounterEvent>& events() const override { return events_; }
  std::vector<double> read() override {
    ++reads_;
    return {step_ * reads_, 3.0 * reads_};
  }

 private:
  double step_;
  double reads_ = 0;
  std::vector<CounterEvent> events_ = {{"instructions", "STEP_INS"}, {"l2_misses", "STEP_L2"}};
};

int failures = 0;

void expect(bool ok, const std::string& what, const nlohmann::json& got) {
  if (ok) return;
  ++failures;
  std::printf("FAIL: %s\n%s\n", what.c_str(), got.dump(1).c_str());
}

nlohmann::json counted(MPI_Comm comm, int rank, bool open_here) {
  pxq::common::RunCounters rc(comm, "hw", [&] {
    CounterOpen o;
    if (open_here)
      o.counters = std::make_unique<Stepping>(rank);
    else
      o.reason = "rank " + std::to_string(rank) + " has no counters";
    return o;
  });
  pxq::common::PhaseTimers tm;
  tm.count_with(rc.counters());
  rc.start();           // read 1
  tm.time("a", [] {});  // reads 2, 3
  tm.time("a", [] {});  // reads 4, 5
  tm.time("b", [] {});  // reads 6, 7
  tm.add("c", 0.0);     // timed apart: no counts
  rc.stop(rank);        // read 8: 7 steps since the start
  return rc.summarize(comm, rank, tm.counts(), {"a", "b", "c"});
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const nlohmann::json c = counted(MPI_COMM_WORLD, rank, true);
  // instructions: 7 steps per rank, step 100 (r + 1); a: 2 steps, b: 1 step; L2: 3 per step.
  long ins = 0, a = 0, b = 0;
  for (int r = 0; r < size; ++r) {
    ins += 700L * (r + 1);
    a += 200L * (r + 1);
    b += 100L * (r + 1);
  }
  if (rank == 0) {
    expect(c["source"] == "stepping" && c["simulated"] == false, "the source and label", c);
    expect(c["events"] == nlohmann::json({{"instructions", "STEP_INS"}, {"l2_misses", "STEP_L2"}}), "events", c);
    expect(c["per_rank"].size() == static_cast<std::size_t>(size), "one entry per rank", c);
    expect(c["per_rank"][size - 1]["instructions"] == 700L * size, "the last rank's own count", c);
    expect(c["total"] == nlohmann::json({{"instructions", ins}, {"l2_misses", 21L * size}}), "totals", c);
    expect(!c["total"].contains("cycles"), "an event not counted is absent, not zero", c);
    expect(c["phases"]["a"]["instructions"] == a && c["phases"]["b"]["instructions"] == b, "phases", c);
    expect(!c["phases"].contains("c"), "a phase timed apart has no counts", c);
  } else {
    expect(c.is_null(), "only rank 0 holds the record's counters", c);
  }
  // The last rank cannot count: nobody does, and the record says why.
  const nlohmann::json none = counted(MPI_COMM_WORLD, rank, rank != size - 1);
  if (rank == 0) {
    expect(none["source"] == "none" && !none.contains("total"), "none counts when a rank cannot", none);
    expect(none["note"].get<std::string>().find("another rank") != std::string::npos || size == 1,
           "the note names the other rank", none);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0)
    std::printf("PASS: counters reduced over %d ranks, per rank, in all and per phase\n", size);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
