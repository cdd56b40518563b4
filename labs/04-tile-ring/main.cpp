// Lab 4 harness: the ring. W ranks each own a block; every iteration each rank makes K passes
// of the update over its block (your compute()), then the blocks move one place along the
// ring. Verification is exact: every element is recomputed from its start value with the same
// updates in the same order and must match bit for bit.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "lab.hpp"
#include "ring.hpp"

namespace ring {
namespace {

constexpr double kA = 0.999999;
constexpr double kB = 1.0e-6;
std::size_t largest_span = 0;  // the most doubles one update() call touched: what tiling changes
long update_calls = 0;
// Reuse: for each update() call on data an earlier call of the same compute() updated (the
// same start), the doubles touched since that call, itself included. Tiled, K passes over one
// tile in a row: a tile. Pass by pass over every tile: the whole block, nothing left in cache.
std::unordered_map<const double*, std::size_t> last_touch;  // start -> doubles touched before that call
std::size_t touched = 0, largest_reuse = 0;

// Where element i of rank `origin`'s block starts: shifted by the run's seed.
double initial(int origin, std::size_t i) {
  return 1.0 + 0.5 * origin + 1.0e-3 * static_cast<double>((i + lab::seed() % 1000) % 1000);
}

// The harness's own untiled loop, for --reference: the baseline pxq lab check measures against.
void reference_compute(double* block, std::size_t elems, int passes) {
  for (int p = 0; p < passes; ++p) update(block, elems);
}

struct Options {
  std::string block = "32M", tile = "256K";
  int passes = 8, iterations = 4;
  bool reference = false;

  void add_to(CLI::App& app) {
    app.description("Lab 4: the ring, untiled or tiled (your ring_compute.cpp)");
    app.add_option("--block", block, "bytes per rank, e.g. 32M");
    app.add_option("--tile", tile, "tile size, e.g. 256K");
    app.add_option("--passes", passes, "passes of the update per iteration")->check(CLI::Range(1, 1000));
    app.add_option("--iterations", iterations, "timed iterations")->check(CLI::Range(1, 1000));
    app.add_flag("--reference", reference, "run the harness's untiled loop instead of yours");
  }
};

}  // namespace

// Never inlined: the harness's --reference loop and the student's compute() (another file) call
// the same update, so neither baseline nor student gets a loop the compiler merged across passes.
__attribute__((noinline)) void update(double* x, std::size_t count) {
  largest_span = std::max(largest_span, count);
  ++update_calls;
  const auto seen = last_touch.find(x);
  if (seen != last_touch.end()) largest_reuse = std::max(largest_reuse, touched - seen->second);
  last_touch[x] = touched;
  touched += count;
  for (std::size_t i = 0; i < count; ++i) x[i] = kA * x[i] + kB;
}

namespace {

// Every element of the block now on this rank started on rank `origin` and has seen
// `updates` updates: recompute each one and compare exactly.
bool verify(const std::vector<double>& block, int origin, long updates) {
  for (std::size_t i = 0; i < block.size(); ++i) {
    double x = initial(origin, i);
    for (long u = 0; u < updates; ++u) x = kA * x + kB;
    if (std::memcmp(&x, &block[i], sizeof x) != 0) return false;
  }
  return true;
}

int run(const lab::World& w, const Options& o) {
  const std::size_t bytes = lab::parse_bytes("--block", o.block);
  const std::size_t tile = lab::parse_bytes("--tile", o.tile);
  if (bytes < 8 || tile < 8) throw std::invalid_argument("--block and --tile: at least 8 bytes");
  const std::size_t elems = bytes / sizeof(double), tile_elems = tile / sizeof(double);
  std::vector<double> block(elems);
  for (std::size_t i = 0; i < elems; ++i) block[i] = initial(w.rank, i);
  const int next = (w.rank + 1) % w.size, prev = (w.rank + w.size - 1) % w.size;
  double compute_s = 0, exchange_s = 0;
  for (int it = -1; it < o.iterations; ++it) {  // iteration -1 warms up, untimed
    MPI_Barrier(w.comm);
    const double t0 = MPI_Wtime();
    last_touch.clear();  // reuse is counted within one compute(): the block moves on after it
    if (o.reference)
      reference_compute(block.data(), elems, o.passes);
    else
      compute(block.data(), elems, o.passes, tile_elems);
    const double t1 = MPI_Wtime();
    if (w.size > 1)
      MPI_Sendrecv_replace(block.data(), static_cast<int>(elems), MPI_DOUBLE, next, 0, prev, 0, w.comm,
                           MPI_STATUS_IGNORE);
    const double t2 = MPI_Wtime();
    if (it >= 0) compute_s += t1 - t0, exchange_s += t2 - t1;
  }
  const int moves = (o.iterations + 1) * (w.size > 1 ? 1 : 0);
  const int origin = ((w.rank - moves) % w.size + w.size) % w.size;
  const long updates = static_cast<long>(o.iterations + 1) * o.passes;
  int ok = verify(block, origin, updates) ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w.comm);
  double times[2] = {compute_s, exchange_s}, slowest[2];
  MPI_Allreduce(times, slowest, 2, MPI_DOUBLE, MPI_MAX, w.comm);
  unsigned long span = largest_span, span_max = 0, reuse = largest_reuse, reuse_max = 0;
  MPI_Allreduce(&span, &span_max, 1, MPI_UNSIGNED_LONG, MPI_MAX, w.comm);
  MPI_Allreduce(&reuse, &reuse_max, 1, MPI_UNSIGNED_LONG, MPI_MAX, w.comm);
  const std::string answer = lab::digest_over_ranks(w, lab::Digest().add_all(block.data(), block.size()));
  const double moved = 16.0 * static_cast<double>(elems) * o.passes * o.iterations;  // read + write
  if (w.rank == 0)
    std::printf("ring: %d ranks, %s per rank, %d passes, %s; compute %.3f s (%.1f GB/s per rank), exchange %.3f s\n",
                w.size, o.block.c_str(), o.passes, o.reference ? "reference (untiled)" : "your compute()", slowest[0],
                moved / slowest[0] / 1e9, slowest[1]);
  return lab::finish(w, "04-tile-ring", all_ok == 1,
                     {{"ranks", w.size},
                      {"block_bytes", bytes},
                      {"tile_bytes", tile},
                      {"passes", o.passes},
                      {"iterations", o.iterations},
                      {"reference", o.reference},
                      {"compute_s", slowest[0]},
                      {"exchange_s", slowest[1]},
                      {"total_s", slowest[0] + slowest[1]},
                      {"largest_span_bytes", span_max * sizeof(double)},
                      {"update_calls", update_calls},
                      {"largest_reuse_bytes", reuse_max * sizeof(double)},
                      {"answer", answer}},
                     "every element matches bit for bit", "elements differ from the exact recomputation");
}

}  // namespace
}  // namespace ring

PXQ_LAB_MAIN(ring, MPI_THREAD_SINGLE)
