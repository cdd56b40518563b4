// The Kokkos backend (its OpenMP execution space): Kokkos is initialised around the kernels
// with the rank's threads, unless its owner (a test harness) already did. Its executors are
// the files beside this one, each joining its kernel family.
#include <Kokkos_Core.hpp>
#include <string>

#include "pxq/kernels/backend.hpp"

namespace {

std::string version_text() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

void start(int threads) {
#if KOKKOS_VERSION >= 30700
  Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(threads));
#else
  Kokkos::InitArguments args;
  args.num_threads = threads;
  Kokkos::initialize(args);
#endif
}
void stop() { Kokkos::finalize(); }
bool running() { return Kokkos::is_initialized(); }

}  // namespace

PXQ_BACKEND(pxq::kernels::BackendInfo{"kokkos", PXQ_BACKEND_RUNTIME, version_text(), true, ""},
            pxq::kernels::BackendRuntime{start, stop, running});
