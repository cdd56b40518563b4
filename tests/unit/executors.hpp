// The executors a kernel test runs: a backend, threads and a tile, named for the failure
// message; the Kokkos ones only when this build has Kokkos.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pxq/kernels/backend.hpp"

struct Exec {
  pxq::kernels::Backend backend;
  int threads;
  std::size_t tile_bytes;
  std::string name;
};

inline std::vector<Exec> with_kokkos(std::vector<Exec> openmp, const std::vector<Exec>& kokkos) {
  if (pxq::kernels::backend_available(pxq::kernels::Backend::kokkos))
    openmp.insert(openmp.end(), kokkos.begin(), kokkos.end());
  return openmp;
}
