// Lab 3 harness: ns per access of the stride kernel over array sizes from 16 KiB up, first
// alone (rank 0 only, the other ranks idle), then on every core with your run_copies().
// Reports how many copies overlapped in time, and checks every word the sweeps touched.
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "lab.hpp"
#include "stride.hpp"

namespace stride {

namespace {

// What this rank's sweeps did inside run_copies(), as the harness's own sweep() saw them: when
// the first began and the last ended on MPI_Wtime's clock (to hold them against the window the
// student's code reports) and on the host's monotonic clock (to hold them against the other
// ranks': MPI_Wtime may count from each process's own start), and how long they ran in all. The
// copies are judged from these, not from the windows: windows that overlap around sweeps that
// took turns measure each copy alone.
struct Swept {
  bool on = false;  // inside run_copies()
  double first = 0, last = 0, host_first = 0, host_last = 0, busy = 0;
} swept;

double host_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

void sweep(std::uint64_t* array, std::size_t bytes, std::size_t stride, int reps) {
  const double t0 = swept.on ? MPI_Wtime() : 0.0, h0 = swept.on ? host_now() : 0.0;
  const std::size_t step = stride / sizeof(std::uint64_t), words = bytes / sizeof(std::uint64_t);
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < words; i += step) array[i] += 1;
  if (swept.on) {
    const double h1 = host_now(), t1 = MPI_Wtime();
    if (swept.busy == 0.0) swept.first = t0, swept.host_first = h0;
    swept.last = t1;
    swept.host_last = h1;
    swept.busy += h1 - h0;
  }
}

namespace {

// Of two sweeps' spans [first, last], the share of the shorter one the other overlaps.
double overlap(double a0, double a1, double b0, double b1) {
  const double shorter = std::min(a1 - a0, b1 - b0);
  return shorter > 0 ? std::max(0.0, std::min(a1, b1) - std::max(a0, b0)) / shorter : 0.0;
}

// A rank's sweeps ran alongside rank 0's (each given as {host_first, host_last, busy}): their
// spans overlap by at least half the shorter one, and each rank swept for at least 3/4 of its
// span (N ranks whose R repetitions take turns have overlapping spans but sweep for R / (N (R - 1)
// + 1) of them: 2/3 at most for 2 ranks and 2 repetitions, about 1/N for many).
bool alongside(const double* mine, const double* zero) {
  const double span = mine[1] - mine[0], span0 = zero[1] - zero[0];
  return mine[2] > 0 && zero[2] > 0 && mine[2] >= 0.75 * span && zero[2] >= 0.75 * span0 &&
         overlap(mine[0], mine[1], zero[0], zero[1]) >= 0.5;
}

// Rank 0's reading of one size, from every rank's {ran, window start, window end, host_first,
// host_last, busy}: how many copies' sweeps ran alongside rank 0's (rank 0 itself included) and
// the median ns per access over the windows the copies reported.
std::pair<int, double> copies_of(const std::vector<double>& all, int ranks, double accesses) {
  std::vector<double> ns;
  int overlapping = 0;
  for (int r = 0; r < ranks; ++r) {
    if (r == 0 ? all[5] > 0 : alongside(&all[6 * r + 3], &all[3])) ++overlapping;
    if (all[6 * r] == 0.0) continue;
    ns.push_back((all[6 * r + 2] - all[6 * r + 1]) / accesses * 1e9);
  }
  std::sort(ns.begin(), ns.end());
  return {overlapping, ns.empty() ? 0.0 : ns[ns.size() / 2]};
}

struct Options {
  std::string max = "64M", stride = "256";
  long accesses = 4 << 20;  // per size and phase

  void add_to(CLI::App& app) {
    app.description("Lab 3: the stride kernel alone and on every core (your copies.cpp)");
    app.add_option("--max", max, "the largest array per rank, e.g. 64M");
    app.add_option("--stride", stride, "bytes between the words touched, e.g. 256");
    app.add_option("--accesses", accesses, "accesses per size and phase")->check(CLI::Range(1000L, 1L << 34));
  }
};

int run(const lab::World& w, const Options& o) {
  const std::size_t max = lab::parse_bytes("--max", o.max), stride = lab::parse_bytes("--stride", o.stride);
  if (stride < 8 || stride % 8 != 0) throw std::invalid_argument("--stride: a multiple of 8 bytes");
  if (max < 16384) throw std::invalid_argument("--max: at least 16K");
  // Every word starts at a value of the run's seed; the sweeps add to it.
  std::vector<std::uint64_t> array(max / sizeof(std::uint64_t)), expected(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) array[i] = expected[i] = (lab::seed() + i) * 0x9E3779B97F4A7C15ull;
  lab::Json sizes = lab::Json::array();
  if (w.rank == 0) std::printf("%10s %10s %12s %8s\n", "bytes", "alone_ns", "all_ns", "overlap");
  sweep(array.data(), max, stride, 1);  // warm-up on every rank: pages faulted in, clocks running
  for (std::size_t i = 0; i < expected.size(); i += stride / sizeof(std::uint64_t)) expected[i] += 1;
  long unheld = 0;  // sizes at which this rank's window did not hold its sweeps
  for (std::size_t bytes = 16384; bytes <= max; bytes *= 4) {
    const long per_sweep = static_cast<long>(bytes / stride);
    const int reps = static_cast<int>(std::max(1L, o.accesses / per_sweep));
    auto note = [&](int times) {
      for (std::size_t i = 0; i < bytes / sizeof(std::uint64_t); i += stride / sizeof(std::uint64_t))
        expected[i] += static_cast<std::uint64_t>(times);
    };
    MPI_Barrier(w.comm);
    double alone = 0;
    if (w.rank == 0) {
      const double t0 = MPI_Wtime();
      sweep(array.data(), bytes, stride, reps);
      alone = (MPI_Wtime() - t0) / (static_cast<double>(per_sweep) * reps) * 1e9;
      note(reps);
    }
    MPI_Barrier(w.comm);
    swept = Swept{true};
    const Window win = run_copies(w, array.data(), bytes, stride, reps);
    swept.on = false;
    if (win.ran) note(reps);
    // A window that does not hold its rank's sweeps times something else than the copy.
    if (swept.busy > 0 && (!win.ran || win.start > swept.first || win.end < swept.last)) ++unheld;
    double mine[6] = {win.ran ? 1.0 : 0.0, win.start, win.end, swept.host_first, swept.host_last, swept.busy};
    std::vector<double> all(6 * w.size);
    MPI_Gather(mine, 6, MPI_DOUBLE, all.data(), 6, MPI_DOUBLE, 0, w.comm);
    if (w.rank == 0) {
      const auto [overlapping, median] = copies_of(all, w.size, static_cast<double>(per_sweep) * reps);
      std::printf("%10zu %10.2f %12.2f %5d/%d\n", bytes, alone, median, overlapping, w.size);
      sizes.push_back({{"bytes", bytes}, {"alone_ns", alone}, {"all_ns", median}, {"copies", overlapping}});
    }
  }
  const int ok = array == expected ? 1 : 0;
  int all_ok = 0;
  long unheld_all = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w.comm);
  MPI_Allreduce(&unheld, &unheld_all, 1, MPI_LONG, MPI_SUM, w.comm);
  // The answer: rank 0's words, which every correct program sweeps the same number of times.
  const std::string answer = w.rank == 0 ? lab::Digest().add_all(array.data(), array.size()).hex() : "";
  return lab::finish(w, "03-contention", all_ok == 1 && unheld_all == 0,
                     {{"ranks", w.size}, {"stride", stride}, {"sizes", sizes}, {"answer", answer}},
                     "every word holds the count of sweeps that touched it, each timed inside its window",
                     all_ok == 1 ? "a window does not hold its rank's sweeps (Window.start and .end are "
                                   "MPI_Wtime() just before and just after the sweep)"
                                 : "a word's count differs from the sweeps reported");
}

}  // namespace
}  // namespace stride

PXQ_LAB_MAIN(stride, MPI_THREAD_SINGLE)
