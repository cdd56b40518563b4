// The ring: W = ranks x threads workers in a ring, each owning a block. Every iteration a
// worker runs K passes of the update on its block, then the block moves one place along the
// ring. Within a rank the move is an ownership change (no copy); between ranks it is an MPI
// message, sent tile by tile when tiled, or with --exchange shm an ownership change too:
// every block lives in one MPI-3 shared-memory window (comm/ring_shm.hpp). Ring order within rank r: thread T-1
// receives from rank r-1, blocks flow down to thread 0 (the thread that calls MPI), which sends to rank r+1. So ring
// position of (rank r, thread t) is r*T + (T-1-t).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pxq/comm/peer_traffic.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/comm/ring_exchange.hpp"
#include "pxq/comm/ring_shm.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/huge_array.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/kernels/ring_update.hpp"
#include "pxq/tiling/cache_info.hpp"
#include "pxq/tiling/chunks.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::ring {
namespace {

struct RingOptions {
  std::string block = "64M";     // bytes per worker
  int passes = 8;                // K passes of the update per iteration
  int flops = 1;                 // affine updates per element per pass (2 flops each)
  int iterations = 10;           // timed iterations
  int warmup = 1;                // untimed iterations first
  std::string exchange = "p2p";  // hand-over between ranks: p2p (MPI messages) or shm (MPI-3 shared window)

  void add_to(pxq::cli::App& cli) {
    cli.add_option("--block", block, "Bytes per worker (a multiple of 8), e.g. 64M");
    cli.add_option("--passes", passes, "Passes of the update per iteration (K)")->range(1, 1 << 20);
    cli.add_option("--flops", flops, "Affine updates per element per pass (2 flops each)")->range(1, 1 << 20);
    cli.add_option("--iterations", iterations, "Timed iterations")->range(1, 1 << 24);
    cli.add_option("--warmup", warmup, "Untimed iterations before timing")->range(0, 1 << 20);
    common::add_app_choice(cli, exchange, "ring", "exchange");
  }
};

using common::MpiWorld;

using Block = common::HugeArray;

struct Verification {
  bool passed = false;
  double max_rel_error = 0;
  double checksum_rel_error = 0;
  double tolerance = 0;
};

// Closed form: the block now at ring position `pos` started at pos - total_iterations and
// has seen m = total_iterations * passes * flops updates: x = scale * x0 + shift.
Verification verify(const MpiWorld& w, const std::vector<double*>& blocks, std::size_t elems, int threads,
                    long total_iterations, const kernels::RingParams& p) {
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

// Bytes per worker from --block: a multiple of 8 (one double).
std::size_t block_bytes_of(const std::string& text) {
  std::size_t bytes = 0;
  try {
    bytes = tiling::parse_bytes(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--block: ") + e.what());
  }
  if (bytes % sizeof(double) != 0)
    throw std::invalid_argument("--block " + text + " is not a multiple of 8 bytes (one " + "double): use e.g. " +
                                tiling::format_bytes(bytes / 8 * 8 + 8));
  return bytes;
}

// The ring's steps in the common lifecycle.
class RingProxy final : public common::Proxy {
 public:
  RingProxy(const MpiWorld& w, const common::Variant& v, const RingOptions& o, const common::CommonOptions& co)
      : Proxy(w, v), o_(o), bytes_(block_bytes_of(o.block)), elems_(bytes_ / sizeof(double)) {
    params_.passes = o.passes;
    params_.flops = o.flops;
    if (o.exchange == "shm" && co.nodes > 1)
      throw std::invalid_argument(
          "--exchange shm hands blocks over through one node's shared memory, but the "
          "layout has " +
          std::to_string(co.nodes) + " nodes: use a 1xQ layout, or --exchange p2p");
  }

  std::size_t tile_buffer_bytes() const override { return bytes_; }

  // Each worker first-touches its own block.
  void set_up(const common::RunStart& start) override {
    const int T = v_.threads;
    const bool mpi_ring = w_.size > 1 && o_.exchange == "p2p";
    blocks_.resize(static_cast<std::size_t>(T));
    if (w_.size > 1 && o_.exchange == "shm") {
      shm_ = std::make_unique<comm::ShmRing>(w_.comm, T, elems_, tile_.elements);
      place_shm_blocks(0);
    } else {
      for (int t = 0; t < T + (mpi_ring ? 1 : 0); ++t) storage_.push_back(common::huge_array(elems_, "a block"));
      for (int t = 0; t < T; ++t) blocks_[t] = storage_[t].get();
    }
    spare_ = mpi_ring ? storage_[T].get() : nullptr;
    const std::size_t elems = elems_;
    double* const* blocks = blocks_.data();
    const int rank = w_.rank;
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
      const long pos = static_cast<long>(rank) * T + (T - 1 - t);
      for (std::size_t i = 0; i < elems; ++i) blocks[t][i] = kernels::ring_initial_value(pos, i);
    }
    if (shm_) shm_->map_all();
    if (spare_) std::fill(spare_, spare_ + elems_, 0.0);
    if (mpi_ring) {
      const int next = (w_.rank + 1) % w_.size;
      exchange_ = std::make_unique<comm::RingExchange>(w_.comm, (w_.rank - 1 + w_.size) % w_.size, next, elems_,
                                                       tile_.elements);
      const auto& p = start.placement;
      next_on_node_ = p.size() == static_cast<std::size_t>(w_.size) &&
                      comm::classify(p[static_cast<std::size_t>(w_.rank)], p[static_cast<std::size_t>(next)]) !=
                          comm::Channel::inter_node;
    }
  }

  void warm_up() override {
    common::PhaseTimers warm;
    for (int i = 0; i < o_.warmup; ++i) iteration(warm);
    warm_msgs_ = exchange_ ? exchange_->messages_sent() : 0;
    warm_bytes_ = exchange_ ? exchange_->bytes_sent() : 0;
  }

  std::vector<std::string> phases() const override { return {"compute", "comm"}; }

  void iterate() override {
    for (int i = 0; i < o_.iterations; ++i) iteration(timers_);
    if (exchange_) timers_.time("comm", [&] { exchange_->wait_all(); });
    if (shm_) timers_.time("comm", [&] { shm_->finish(iteration_); });
  }

  // Bytes that really moved, per channel: each rank sends only to its right neighbour.
  void after_timing() override {
    if (exchange_)
      traffic_.add((w_.rank + 1) % w_.size, exchange_->messages_sent() - warm_msgs_,
                   exchange_->bytes_sent() - warm_bytes_);
  }

  bool verify() override {
    const long total_iterations = static_cast<long>(o_.warmup) + o_.iterations;
    ver_ = ring::verify(w_, blocks_, elems_, v_.threads, total_iterations, params_);
    return ver_.passed;
  }

  common::Summary summarize(const common::Measured& m, bool quiet) const override;

  // Per worker and iteration: K passes, each reading and writing the whole block (16 B and
  // 2 x flops per element); the block arrives and leaves once per iteration (compulsory);
  // between passes a worker reuses its tile (untiled: the whole block).
  common::Work work() const override {
    const double T = v_.threads, n = static_cast<double>(elems_), N = o_.iterations, K = params_.passes;
    const double block = static_cast<double>(bytes_);
    const double tile = static_cast<double>(std::min(tile_.tiled ? tile_.elements : elems_, elems_)) * sizeof(double);
    common::PhaseWork compute{"compute",
                              T * n * K * 2.0 * params_.flops * N,
                              T * block * 2.0 * K * N,
                              T * block * 2.0 * N,
                              (T + (exchange_ ? 1.0 : 0.0)) * block,
                              tile,
                              "K passes x read+write of every block; the block read and written once per iteration "
                              "from memory",
                              "effective_gbs"};
    compute.over_total = true;
    if (!exchange_ || !next_on_node_) return {compute};
    // The hand-over to a rank of this node: MPI copies the block through shared memory, one
    // message a rank and iteration (threads pass theirs by pointer): the copy reads the block,
    // reads the destination's lines (write-allocate) and writes them, 3 x block bytes, all
    // compulsory. To another node the link binds, which the ceilings do not measure: that
    // hand-over is not declared, and its time stays outside the model.
    common::PhaseWork comm{"comm",
                           0.0,
                           3.0 * block * N,
                           3.0 * block * N,
                           2.0 * block,
                           block,
                           "one block a rank and iteration copied to the next rank through shared memory: read, "
                           "write-allocate read and write of every byte"};
    return {compute, comm};
  }

 private:
  void iteration(common::PhaseTimers& tm);
  void shm_iteration(common::PhaseTimers& tm);
  // Shared memory: thread t works on block (pos - g) mod W at iteration g.
  void place_shm_blocks(long g) {
    const int T = v_.threads;
    const long workers = static_cast<long>(w_.size) * T;
    for (int t = 0; t < T; ++t) {
      const long pos = static_cast<long>(w_.rank) * T + (T - 1 - t);
      blocks_[static_cast<std::size_t>(t)] = shm_->block(((pos - g) % workers + workers) % workers);
    }
  }

  RingOptions o_;
  std::size_t bytes_, elems_;
  kernels::RingParams params_;
  std::vector<Block> storage_;
  std::vector<double*> blocks_;
  double* spare_ = nullptr;
  std::unique_ptr<comm::RingExchange> exchange_;
  std::unique_ptr<comm::ShmRing> shm_;
  long iteration_ = 0;  // iterations run so far, warm-up included
  std::uint64_t warm_msgs_ = 0, warm_bytes_ = 0;
  bool next_on_node_ = false;  // the right neighbour shares this rank's node (its hand-over is a copy)
  Verification ver_;
};

// One iteration, tile by tile. Without MPI each worker walks its own block's tiles in one
// call (the workers never wait for each other within an iteration). With MPI, tile j of the
// incoming block is waited for just before it is computed (so it arrives in cache), and sent
// on right after its K passes (while it is still in cache). Tile j at iteration i+1 depends
// only on tile j at iteration i, so this dataflow gives exactly the answer of the
// bulk-synchronous ring.
void RingProxy::iteration(common::PhaseTimers& tm) {
  const int T = v_.threads;
  if (shm_) {
    shm_iteration(tm);
    return;
  }
  if (!exchange_) {  // nothing leaves the rank: each worker walks all its tiles in one call
    kernels::RingParams tiled = params_;
    tiled.tile = tile_.elements;
    tm.time("compute", [&] { kernels::ring_passes_workers(v_.backend, blocks_.data(), T, 0, elems_, tiled); });
  } else {
    tiling::for_each_tile(elems_, tile_.elements, [&](std::size_t b, std::size_t e) {
      const std::size_t j = b / tile_.elements;
      tm.time("comm", [&] { exchange_->wait_receive(j); });
      tm.time("compute", [&] { kernels::ring_passes_workers(v_.backend, blocks_.data(), T, b, e, params_); });
      tm.time("comm", [&] {
        exchange_->wait_send(j);  // last round's send of spare's tile j is done: reuse it
        exchange_->send(blocks_[0], j);
        exchange_->post_receive(spare_, j);
        exchange_->progress();
      });
    });
  }
  // Hand-over: thread t+1's block goes to thread t; thread T-1 takes what arrives.
  double* outgoing = blocks_[0];
  for (int t = 0; t + 1 < T; ++t) blocks_[t] = blocks_[t + 1];
  if (exchange_) {
    blocks_[T - 1] = spare_;
    spare_ = outgoing;
  } else {
    blocks_[T - 1] = outgoing;
  }
}

// Shared memory: tile j of the block the left neighbour finished last iteration is read in
// place as soon as the neighbour has published it, and published in turn once computed.
void RingProxy::shm_iteration(common::PhaseTimers& tm) {
  const long g = iteration_;
  place_shm_blocks(g);
  tiling::for_each_tile(elems_, tile_.elements, [&](std::size_t b, std::size_t e) {
    const std::size_t j = b / tile_.elements;
    if (g > 0) tm.time("comm", [&] { shm_->wait_left(g, j); });
    tm.time("compute", [&] { kernels::ring_passes_workers(v_.backend, blocks_.data(), v_.threads, b, e, params_); });
    shm_->done(g, j);
  });
  ++iteration_;
  place_shm_blocks(iteration_);
}

common::Summary RingProxy::summarize(const common::Measured& m, bool /*quiet*/) const {
  const long workers = static_cast<long>(w_.size) * v_.threads;
  common::Summary s;
  s.title = "RING";
  s.head = {{"Block", tiling::format_bytes(bytes_) + " per worker"},
            {"Passes", std::to_string(params_.passes) + " x " + std::to_string(params_.flops) + " update(s)"},
            {"Iterations", std::to_string(o_.iterations) + " (+" + std::to_string(o_.warmup) + " warm-up)"}};
  s.setup_what = "block allocation and first touch";
  s.grid = "ring of " + std::to_string(workers) + " worker(s): " + std::to_string(w_.size) + " rank(s) x " +
           std::to_string(v_.threads) + " thread(s)";
  s.metrics = {{"Phases (max)", "compute " + common::fmt("%.4f", m.phase("compute")) + " s, exposed comm " +
                                    common::fmt("%.4f", m.phase("comm")) + " s"}};
  if (workers == 1) s.notes.push_back("ring of one worker: it only computes; nothing is handed over");
  if (w_.size > 1)
    s.variant = {{"Exchange", o_.exchange == "shm"
                                  ? "shm (blocks in one MPI-3 shared-memory window, read in place by the next rank)"
                                  : "p2p (MPI messages, tile by tile)"}};
  if (w_.size > 1) s.variant_json = {{"exchange", o_.exchange}};  // one rank hands nothing to another
  s.checks = {{"Max rel error", common::fmt("%.3e", ver_.max_rel_error)},
              {"Checksum error", common::fmt("%.3e", ver_.checksum_rel_error) + " (relative; tolerance " +
                                     common::fmt("%.3e", ver_.tolerance) + ")"}};
  s.size = {{"block_bytes", bytes_},
            {"passes", params_.passes},
            {"flops", params_.flops},
            {"iterations", o_.iterations},
            {"warmup", o_.warmup}};
  s.time = {{"compute", m.phase("compute")}, {"comm", m.phase("comm")}};
  s.verification = {{"max_rel_error", ver_.max_rel_error},
                    {"checksum_rel_error", ver_.checksum_rel_error},
                    {"tolerance", ver_.tolerance},
                    {"method", "closed form of the affine update, every element and block checksum"}};
  return s;
}

}  // namespace
}  // namespace pxq::ring

PXQ_PROXY_MAIN(pxq::ring::RingProxy, pxq::ring::RingOptions, "ring",
               "pxq ring: compute on a block, pass it to the right neighbour, repeat")
