// pxq-stream: STREAM-style triad bandwidth with T threads, the yardstick for "effective
// GB/s" figures (the ring's untiled run should approach it; tiled runs may exceed it).
// A probe that reports; never a test.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "pxq/common/cli.hpp"
#include "pxq/kernels/stream.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace {

int run(int argc, char** argv) {
  pxq::cli::App app{"pxq stream: triad bandwidth a[i] = b[i] + s*c[i]", "pxq-stream"};
  std::string size = "256M";
  int threads = 1, repeats = 10;
  bool json = false;
  app.add_option("--size", size, "Bytes per array (three arrays)");
  app.add_option("--threads", threads, "OpenMP threads")->range(1, 4096);
  app.add_option("--repeat", repeats, "Timed repetitions (best is reported)")->range(1, 100000);
  app.add_flag("--json", json, "Print one JSON object instead of text");
  PXQ_CLI_PARSE(app, argc, argv);
  std::size_t bytes = 0;
  try {
    bytes = pxq::tiling::parse_bytes(size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pxq-stream: error: --size: %s\n", e.what());
    return 2;
  }
  const std::size_t n = bytes / sizeof(double);
  if (n == 0) {
    std::fprintf(stderr, "pxq-stream: error: --size %s holds no double\n", size.c_str());
    return 2;
  }
  std::vector<double> a(n), b(n), c(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  std::vector<double> times;
  for (int r = 0; r < repeats + 1; ++r) {
    const double t0 = omp_get_wtime();
    pxq::kernels::stream_triad(a.data(), b.data(), c.data(), 3.0, n, threads);
    const double t = omp_get_wtime() - t0;
    if (r > 0) times.push_back(t);  // first call untimed (page faults, clocks)
  }
  if (a[n / 2] != 7.0) {
    std::fprintf(stderr, "pxq-stream: triad result wrong (%g, expected 7)\n", a[n / 2]);
    return 1;
  }
  std::sort(times.begin(), times.end());
  const double moved = 3.0 * static_cast<double>(n) * sizeof(double);
  const double best = moved / times.front() / 1e9, median = moved / times[times.size() / 2] / 1e9;
  if (json) {
    nlohmann::json j = {{"probe", "stream_triad"}, {"threads", threads},   {"array_bytes", n * 8},
                        {"best_gbs", best},        {"median_gbs", median}, {"repeats", repeats}};
    std::puts(j.dump().c_str());
  } else {
    std::printf("triad  %d thread(s)  %s per array  best %.2f GB/s  median %.2f GB/s\n", threads,
                pxq::tiling::format_bytes(n * 8).c_str(), best, median);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return pxq::cli::guarded_main("pxq-stream", run, argc, argv); }
