// The ring proxy (data-tiling microbenchmark): options and the run.
#pragma once

#include <string>

#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"

namespace pxq::ring {

struct RingOptions {
  std::string block = "64M";     // bytes per worker
  int passes = 8;                // K passes of the update per iteration
  int flops = 1;                 // affine updates per element per pass (2 flops each)
  int iterations = 10;           // timed iterations
  int warmup = 1;                // untimed iterations first
  std::string exchange = "p2p";  // hand-over between ranks: p2p (MPI messages) or shm (MPI-3 shared window)
};

void add_ring_options(CLI::App& app, RingOptions& o);
int run_ring(const common::MpiWorld& w, const common::CommonOptions& co, const RingOptions& ro);

}  // namespace pxq::ring
