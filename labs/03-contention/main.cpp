// Lab 3 harness: ns per access of the stride kernel over array sizes from 16 KiB up, first
// alone (rank 0 only, the other ranks idle), then on every core with your run_copies().
// Reports how many copies overlapped in time, and checks every word the sweeps touched.
#include <algorithm>
#include <string>
#include <vector>

#include "lab.hpp"
#include "stride.hpp"

namespace stride {

void sweep(std::uint64_t* array, std::size_t bytes, std::size_t stride, int reps) {
  const std::size_t step = stride / sizeof(std::uint64_t), words = bytes / sizeof(std::uint64_t);
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < words; i += step) array[i] += 1;
}

namespace {

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
    const Window win = run_copies(w, array.data(), bytes, stride, reps);
    if (win.ran) note(reps);
    double mine[3] = {win.ran ? 1.0 : 0.0, win.start, win.end};
    std::vector<double> all(3 * w.size);
    MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, w.comm);
    if (w.rank == 0) {
      std::vector<double> ns;
      int overlapping = 0;  // copies whose sweep overlapped rank 0's in time
      for (int r = 0; r < w.size; ++r) {
        if (all[3 * r] == 0.0) continue;
        ns.push_back((all[3 * r + 2] - all[3 * r + 1]) / (static_cast<double>(per_sweep) * reps) * 1e9);
        if (all[3 * r + 1] < all[2] && all[3 * r + 2] > all[1]) ++overlapping;
      }
      std::sort(ns.begin(), ns.end());
      const double median = ns.empty() ? 0.0 : ns[ns.size() / 2];
      std::printf("%10zu %10.2f %12.2f %5d/%d\n", bytes, alone, median, overlapping, w.size);
      sizes.push_back({{"bytes", bytes}, {"alone_ns", alone}, {"all_ns", median}, {"copies", overlapping}});
    }
  }
  const int ok = array == expected ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w.comm);
  // The answer: rank 0's words, which every correct program sweeps the same number of times.
  const std::string answer = w.rank == 0 ? lab::Digest().add_all(array.data(), array.size()).hex() : "";
  return lab::finish(
      w, "03-contention", all_ok == 1, {{"ranks", w.size}, {"stride", stride}, {"sizes", sizes}, {"answer", answer}},
      "every word holds the count of sweeps that touched it", "a word's count differs from the sweeps reported");
}

}  // namespace
}  // namespace stride

PXQ_LAB_MAIN(stride, MPI_THREAD_SINGLE)
