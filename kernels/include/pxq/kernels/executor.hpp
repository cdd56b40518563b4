// What every parallel executor is given: its threads (at least one) and the tile in bytes
// (0: untiled). Executors inherit it instead of keeping their own copies.
#pragma once

#include <algorithm>
#include <cstddef>

namespace pxq::kernels {

class ExecutorShape {
 public:
  ExecutorShape(int threads, std::size_t tile_bytes) : threads_(std::max(1, threads)), tile_bytes_(tile_bytes) {}

 protected:
  int threads_;
  std::size_t tile_bytes_;
};

}  // namespace pxq::kernels
