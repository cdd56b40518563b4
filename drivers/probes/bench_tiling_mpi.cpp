// pxq-bench-tiling-mpi: the ring's tiled compute + exchange pipeline over MPI ranks, with
// Google Benchmark, which has no MPI support of its own. Run it under mpirun:
//
//   mpirun -np 2 build/bin/pxq-bench-tiling-mpi [--benchmark_* flags]
//
//   ring_pipeline/tile:T/threads:N   one ring iteration: every tile of a rank's 16 MiB block
//                                    gets K = 8 passes, is sent right and the next block's
//                                    tile received from the left (the ring proxy's schedule)
//
// Every iteration starts with a barrier; each rank times its own iteration and the slowest
// rank's time (an all-reduce MAX) is the iteration's manual time. Every rank therefore sees
// the same times, so Google Benchmark picks the same iteration counts on every rank and the
// collectives stay matched (so --benchmark_enable_random_interleaving, which would shuffle
// each rank differently, is refused). Rank 0 reports; the other ranks report nothing.
#include <benchmark/benchmark.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "pxq/comm/ring_exchange.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/ring_update.hpp"

namespace {

constexpr std::size_t kBlockBytes = std::size_t{16} * 1024 * 1024;

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

void ring_pipeline(benchmark::State& state) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int T = static_cast<int>(state.range(1));
  const std::size_t elems = kBlockBytes / sizeof(double);
  const std::size_t tile =
      std::max<std::size_t>(1, std::min(elems, static_cast<std::size_t>(state.range(0)) / sizeof(double)));
  // T blocks computed by T threads, plus the spare that receives the incoming block.
  std::vector<std::vector<double>> storage(static_cast<std::size_t>(T) + 1, std::vector<double>(elems, 1.0));
  std::vector<double*> blocks;
  blocks.reserve(static_cast<std::size_t>(T));
  for (int t = 0; t < T; ++t) blocks.push_back(storage[static_cast<std::size_t>(t)].data());
  double* spare = storage.back().data();
  pxq::comm::RingExchange ring(MPI_COMM_WORLD, (rank - 1 + size) % size, (rank + 1) % size, elems, tile);
  const pxq::kernels::RingParams p;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (std::size_t j = 0; j < ring.tiles(); ++j) {
      ring.wait_receive(j);
      pxq::kernels::ring_passes_workers("openmp", blocks.data(), T, ring.tile_begin(j), ring.tile_end(j), p);
      ring.wait_send(j);
      ring.send(blocks[0], j);
      ring.post_receive(spare, j);
      ring.progress();
    }
    ring.wait_all();
    // The ring proxy's hand-over: thread t+1's block to thread t, the arrival to the last.
    double* outgoing = blocks[0];
    for (int t = 0; t + 1 < T; ++t) blocks[static_cast<std::size_t>(t)] = blocks[static_cast<std::size_t>(t) + 1];
    blocks[static_cast<std::size_t>(T) - 1] = spare;
    spare = outgoing;
    double mine = MPI_Wtime() - t0, slowest = 0.0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    state.SetIterationTime(slowest);
  }
  const double updates = static_cast<double>(elems) * T * p.passes * size;
  state.SetBytesProcessed(static_cast<std::int64_t>(updates * 2 * sizeof(double)) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(updates) * state.iterations());
  state.counters["ranks"] = size;
  state.counters["tiles"] = static_cast<double>(ring.tiles());
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Every rank must run the same benchmark at the same time; a random order would differ
  // between ranks and leave their collectives unmatched.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--benchmark_enable_random_interleaving", 0) == 0 &&
        arg != "--benchmark_enable_random_interleaving=false") {
      if (rank == 0)
        std::fprintf(stderr,
                     "pxq-bench-tiling-mpi: %s is not supported: the ranks would run different benchmarks at "
                     "once; drop it (repetitions still work)\n",
                     arg.c_str());
      MPI_Finalize();
      return 2;
    }
  }
  // Only rank 0 writes --benchmark_out: a second rank opening the same file would truncate it
  // under rank 0's feet (the file then starts with zeros and is no JSON).
  if (rank != 0) {
    int kept = 1;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]).rfind("--benchmark_out", 0) != 0) argv[kept++] = argv[i];
    argc = kept;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    MPI_Finalize();
    return 2;
  }
  const int max_threads = std::max(1, omp_get_num_procs());
  auto* b = benchmark::RegisterBenchmark("ring_pipeline", ring_pipeline);
  b->ArgNames({"tile", "threads"})->UseManualTime()->Unit(benchmark::kMillisecond);
  for (std::int64_t tile = 4096; tile <= static_cast<std::int64_t>(kBlockBytes); tile *= 2)
    for (int t = 1; t <= max_threads; ++t) b->Args({tile, t});
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  benchmark::AddCustomContext("mpi_ranks", std::to_string(size));
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    NullReporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
