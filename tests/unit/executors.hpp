// The executors a kernel test runs: a backend, threads and a tile, named for the failure
// message. The OpenMP cases are listed by each test; every other backend the registry says
// this build carries runs the test's `others` cases, so a new backend is tested unedited.
#pragma once

#include <algorithm>
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

// Whether `backend` joined the kernel family (a backend may run a subset of the families).
template <class Family>
bool runs(const pxq::kernels::Backend& backend) {
  const auto joined = Family::backends();
  return std::find(joined.begin(), joined.end(), backend) != joined.end();
}

// `others`: threads, tile and a name suffix; the backend and its name are filled in, for every
// backend but OpenMP that joined the family.
template <class Family>
std::vector<Exec> with_backends(std::vector<Exec> openmp, const std::vector<Exec>& others) {
  for (const auto& b : pxq::kernels::available_backends()) {
    if (b == "openmp" || !runs<Family>(b)) continue;
    for (Exec e : others) {
      e.backend = b;
      e.name = pxq::kernels::backend_name(b) + e.name;
      openmp.push_back(e);
    }
  }
  return openmp;
}
