// pxq::kernels backends: which implementation runs a kernel, and the runtime each needs.
// No MPI here.
#pragma once

#include <string>

namespace pxq::kernels {

enum class Backend { openmp, kokkos };

// "openmp" or "kokkos"; throws std::invalid_argument naming the accepted values.
Backend parse_backend(const std::string& name);
const char* backend_name(Backend b);

// True when this build carries the backend (Kokkos is optional at configure time).
bool backend_available(Backend b);

// Version string of the Kokkos this build uses, or "" when built without Kokkos.
std::string kokkos_version();

// Starts the runtime a backend needs (Kokkos::initialize with `threads` OpenMP threads)
// for the lifetime of the object; a no-op for the OpenMP backend.
class ScopedRuntime {
 public:
  ScopedRuntime(Backend b, int threads);
  ~ScopedRuntime();
  ScopedRuntime(const ScopedRuntime&) = delete;
  ScopedRuntime& operator=(const ScopedRuntime&) = delete;

 private:
  bool started_kokkos_ = false;
};

}  // namespace pxq::kernels
