// The ring: W = ranks x threads workers in a ring, each owning a block. Every iteration a
// worker runs K passes of the update on its block, then the block moves one place along the
// ring. Within a rank the move is an ownership change (no copy); between ranks it is an MPI
// message, sent tile by tile when tiled. Ring order within rank r: thread T-1 receives from
// rank r-1, blocks flow down to thread 0 (the thread that calls MPI), which sends to rank
// r+1. So ring position of (rank r, thread t) is r*T + (T-1-t).
#include "ring.hpp"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "pxq/comm/peer_traffic.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/comm/ring_exchange.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/ring_update.hpp"
#include "pxq/tiling/cache_info.hpp"
#include "pxq/tiling/chunks.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::ring {
namespace {

using common::MpiWorld;

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Block = std::unique_ptr<double, FreeDeleter>;

// Blocks are 2 MiB aligned and asked to be backed by transparent huge pages: fewer TLB
// misses in the kernel, and far fewer pages for the MPI library to pin when it copies a
// tile between processes (single-copy transfers pin every page they touch).
Block allocate_block(std::size_t elems) {
  constexpr std::size_t kHuge = 2u << 20;
  const std::size_t bytes = (elems * sizeof(double) + kHuge - 1) / kHuge * kHuge;
  void* p = nullptr;
  if (posix_memalign(&p, kHuge, bytes) != 0)
    throw std::runtime_error("cannot allocate a block of " + std::to_string(bytes) + " bytes");
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the block still works
#endif
  return Block(static_cast<double*>(p));
}

struct Verification {
  bool passed = false;
  double max_rel_error = 0;
  double checksum_rel_error = 0;
  double tolerance = 0;
};

// Closed form: the block now at ring position `pos` started at pos - total_iterations and
// has seen m = total_iterations * passes * flops updates: x = scale * x0 + shift.
Verification verify(const MpiWorld& w, const std::vector<double*>& blocks, std::size_t elems,
                    int threads, long total_iterations, const kernels::RingParams& p) {
  const long workers = static_cast<long>(w.size) * threads;
  const double m = static_cast<double>(total_iterations) * p.passes * p.flops;
  const kernels::AffinePower f = kernels::affine_power(p, m);
  Verification v;
  // Each update rounds once (twice without FMA) and |a| < 1 keeps old errors from growing.
  v.tolerance = 4.0 * std::max(1.0, m) * std::numeric_limits<double>::epsilon();
  double local[2] = {0, 0};
  for (int t = 0; t < threads; ++t) {
    const long pos = static_cast<long>(w.rank) * threads + (threads - 1 - t);
    const long origin = ((pos - total_iterations) % workers + workers) % workers;
    long double sum = 0, expected_sum = 0;
    for (std::size_t i = 0; i < elems; ++i) {
      const double expected = f.scale * kernels::ring_initial_value(origin, i) + f.shift;
      const double x = blocks[t][i];
      const double err = std::fabs(x - expected) / std::fabs(expected);
      if (!(err <= local[0])) local[0] = std::isnan(err) ? INFINITY : err;
      sum += x;
      expected_sum += expected;
    }
    const double cs = static_cast<double>(std::fabs((sum - expected_sum) / expected_sum));
    if (!(cs <= local[1])) local[1] = std::isnan(cs) ? INFINITY : cs;
  }
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, w.comm);
  v.max_rel_error = global[0];
  v.checksum_rel_error = global[1];
  v.passed = v.max_rel_error <= v.tolerance && v.checksum_rel_error <= v.tolerance;
  return v;
}

}  // namespace

void add_ring_options(CLI::App& app, RingOptions& o) {
  app.add_option("--block", o.block, "Bytes per worker (a multiple of 8), e.g. 64M");
  app.add_option("--passes", o.passes, "Passes of the update per iteration (K)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--flops", o.flops, "Affine updates per element per pass (2 flops each)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--iterations", o.iterations, "Timed iterations")->check(CLI::Range(1, 1 << 24));
  app.add_option("--warmup", o.warmup, "Untimed iterations before timing")
      ->check(CLI::Range(0, 1 << 20));
}

int run_ring(const MpiWorld& w, const common::CommonOptions& co, const RingOptions& ro) {
  // ---- validate everything before any MPI work ----
  const common::Variant variant = common::resolve_variant(co);
  std::size_t block_bytes = 0;
  try {
    block_bytes = tiling::parse_bytes(ro.block);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--block: ") + e.what());
  }
  if (block_bytes % sizeof(double) != 0)
    throw std::invalid_argument("--block " + ro.block + " is not a multiple of 8 bytes (one " +
                                "double): use e.g. " + tiling::format_bytes(block_bytes / 8 * 8 + 8));
  const std::size_t elems = block_bytes / sizeof(double);
  const common::RunStart start = common::start_run(w, co, variant, block_bytes, "ring_pass");
  const tiling::TileResolution& tile = start.tile;
  const auto& placement = start.placement;
  const common::LayoutFacts& facts = start.facts;
  const int T = variant.threads;

  kernels::RingParams params;
  params.passes = ro.passes;
  params.flops = ro.flops;
  const long workers = static_cast<long>(w.size) * T;
  const bool mpi_ring = w.size > 1;

  // ---- set-up: each worker first-touches its own block ----
  std::vector<Block> storage;
  for (int t = 0; t < T + (mpi_ring ? 1 : 0); ++t) storage.push_back(allocate_block(elems));
  std::vector<double*> blocks(T);
  for (int t = 0; t < T; ++t) blocks[t] = storage[t].get();
  double* spare = mpi_ring ? storage[T].get() : nullptr;
#pragma omp parallel for num_threads(T) schedule(static, 1)
  for (int t = 0; t < T; ++t) {
    const long pos = static_cast<long>(w.rank) * T + (T - 1 - t);
    for (std::size_t i = 0; i < elems; ++i) blocks[t][i] = kernels::ring_initial_value(pos, i);
  }
  if (spare) std::fill(spare, spare + elems, 0.0);

  std::unique_ptr<comm::RingExchange> exchange;
  if (mpi_ring)
    exchange = std::make_unique<comm::RingExchange>(w.comm, (w.rank - 1 + w.size) % w.size,
                                                    (w.rank + 1) % w.size, elems, tile.elements);

  common::PhaseTimers timers;
  // One iteration, tile by tile. With MPI, tile j of the incoming block is waited for just
  // before it is computed (so it arrives in cache), and sent on right after its K passes
  // (while it is still in cache). Tile j at iteration i+1 depends only on tile j at
  // iteration i, so this dataflow gives exactly the answer of the bulk-synchronous ring.
  auto iterate = [&](common::PhaseTimers& tm) {
    tiling::for_each_tile(elems, tile.elements, [&](std::size_t b, std::size_t e) {
      const std::size_t j = b / tile.elements;
      if (exchange) tm.time("comm", [&] { exchange->wait_receive(j); });
      tm.time("compute", [&] {
        kernels::ring_passes_workers(variant.backend, blocks.data(), T, b, e, params);
      });
      if (exchange)
        tm.time("comm", [&] {
          exchange->wait_send(j);  // last round's send of spare's tile j is done: reuse it
          exchange->send(blocks[0], j);
          exchange->post_receive(spare, j);
          exchange->progress();
        });
    });
    // Hand-over: thread t+1's block goes to thread t; thread T-1 takes what arrives.
    double* outgoing = blocks[0];
    for (int t = 0; t + 1 < T; ++t) blocks[t] = blocks[t + 1];
    if (exchange) {
      blocks[T - 1] = spare;
      spare = outgoing;
    } else {
      blocks[T - 1] = outgoing;
    }
  };

  common::PhaseTimers warm;
  for (int i = 0; i < ro.warmup; ++i) iterate(warm);
  const std::uint64_t warm_msgs = exchange ? exchange->messages_sent() : 0;
  const std::uint64_t warm_bytes = exchange ? exchange->bytes_sent() : 0;
  timers.add("compute", 0.0);
  timers.add("comm", 0.0);
  const double t0 = common::synced_time(w.comm);
  for (int i = 0; i < ro.iterations; ++i) iterate(timers);
  if (exchange) timers.time("comm", [&] { exchange->wait_all(); });
  const double local_total = MPI_Wtime() - t0;
  double total = 0;
  MPI_Allreduce(&local_total, &total, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  const auto phases = timers.max_over_ranks(w.comm);

  const long total_iterations = static_cast<long>(ro.warmup) + ro.iterations;
  const Verification ver = verify(w, blocks, elems, T, total_iterations, params);

  // Bytes that really moved, per channel: each rank sends only to its right neighbour.
  comm::PeerTraffic traffic(w.size);
  if (exchange)
    traffic.add((w.rank + 1) % w.size, exchange->messages_sent() - warm_msgs,
                exchange->bytes_sent() - warm_bytes);
  const nlohmann::json messages = traffic.summarize(w.comm, placement);

  if (w.rank != 0) return ver.passed ? common::kExitOk : common::kExitVerificationFailed;

  // ---- report (rank 0) ----
  const std::uint64_t mpi_bytes = messages["bytes"], mpi_msgs = messages["messages"];
  const double streamed =
      static_cast<double>(workers) * block_bytes * 2.0 * params.passes * ro.iterations;
  const double gbs = streamed / total / 1e9;
  std::vector<std::string> notes = common::start_notes(start);
  if (workers == 1) notes.push_back("ring of one worker: it only computes; nothing is handed over");

  std::ostringstream out;
  out << "\n pxq ring\n"
      << " layout        " << facts.nodes << "x" << facts.ranks_per_node << "x" << T << " ("
      << w.size << " ranks x " << T << " threads = " << workers << " workers, "
      << facts.observed_nodes << " node(s) observed, "
      << co.alloc << ")\n"
      << " block         " << tiling::format_bytes(block_bytes) << " per worker, " << params.passes
      << " passes x " << params.flops << " update(s), " << ro.iterations << " iterations (+"
      << ro.warmup << " warm-up)\n"
      << " variant       " << variant.mode << ", tile "
      << (tile.tiled ? tiling::format_bytes(tile.bytes) + " (" + tile.source + ")" : "off")
      << ", backend " << kernels::backend_name(variant.backend) << "\n"
      << " time          " << common::fmt("%.4f", total) << " s total, " << common::fmt("%.4f", phases.at("compute"))
      << " s compute, " << common::fmt("%.4f", phases.at("comm")) << " s exposed comm (slowest rank)\n"
      << " bandwidth     " << common::fmt("%.2f", gbs) << " GB/s effective (K passes x read+write of every block)\n"
      << " MPI           " << common::fmt("%.3f", mpi_bytes / 1e9) << " GB in " << mpi_msgs << " messages\n";
  for (const auto& n : notes) out << " note          " << n << "\n";
  out << " Verification  = " << (ver.passed ? "PASSED" : "FAILED") << " (max rel error "
      << common::fmt("%.3e", ver.max_rel_error) << ", checksum rel error "
      << common::fmt("%.3e", ver.checksum_rel_error) << ", tolerance " << common::fmt("%.3e", ver.tolerance)
      << ")\n";
  std::fputs(out.str().c_str(), stdout);
  std::fflush(stdout);

  if (!co.json_path.empty()) {
    nlohmann::json rec = common::record_frame("ring", ver.passed, co, variant, start, w.size, notes);
    rec.update(nlohmann::json{
        {"size",
         {{"block_bytes", block_bytes},
          {"passes", params.passes},
          {"flops", params.flops},
          {"iterations", ro.iterations},
          {"warmup", ro.warmup}}},
        {"time", {{"total", total}, {"compute", phases.at("compute")}, {"comm", phases.at("comm")}}},
        {"metrics",
         {{"effective_gbs", gbs}, {"mpi_bytes", mpi_bytes}, {"mpi_messages", mpi_msgs}}},
        {"messages", messages},
        {"verification",
         {{"passed", ver.passed},
          {"max_rel_error", ver.max_rel_error},
          {"checksum_rel_error", ver.checksum_rel_error},
          {"tolerance", ver.tolerance},
          {"method", "closed form of the affine update, every element and block checksum"}}}});
    common::append_record(co.json_path, rec);
  }
  return ver.passed ? common::kExitOk : common::kExitVerificationFailed;
}

}  // namespace pxq::ring
