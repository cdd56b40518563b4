// Lab 3, the harness's side: the stride kernel, and the function you write.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lab_world.hpp"

namespace stride {

// `reps` read-modify-write sweeps over the first `bytes` bytes of `array`, touching one
// 8-byte word every `stride` bytes.
void sweep(std::uint64_t* array, std::size_t bytes, std::size_t stride, int reps);

struct Window {
  bool ran = false;           // this rank ran the kernel
  double start = 0, end = 0;  // MPI_Wtime() around its sweep
};

// Yours (copies.cpp): the kernel "on every core": each rank's copy of sweep() over its own
// array, measured so that the copies compete for the caches and memory as they would in an
// application. Returns this rank's window.
Window run_copies(const lab::World& w, std::uint64_t* array, std::size_t bytes, std::size_t stride, int reps);

}  // namespace stride
