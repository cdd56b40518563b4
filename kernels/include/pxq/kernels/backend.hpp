// pxq::kernels backends: which implementation runs a kernel, and the runtime each needs.
// No MPI here.
#pragma once

#include <string>
#include <vector>

namespace pxq::kernels {

// The backends pxq knows; backend.cpp's registry says what each is and whether this build
// carries it.
enum class Backend { openmp, kokkos };

struct BackendInfo {
  Backend id;
  const char* name;     // as on the command line and in records
  const char* runtime;  // what it runs on
  std::string version;  // "" when it has none of its own or is not built
  bool available;       // this build carries it
};

// Every backend pxq knows, in the registry's order, available or not.
std::vector<BackendInfo> backends();
// The backends this build carries.
std::vector<Backend> available_backends();
// The names joined by `sep` ("openmp or kokkos").
std::string backend_names(const char* sep);

// A backend by name; throws std::invalid_argument naming the accepted values.
Backend parse_backend(const std::string& name);
const char* backend_name(Backend b);

// True when this build carries the backend (Kokkos is optional at configure time).
bool backend_available(Backend b);

// Version string of the Kokkos this build uses, or "" when built without Kokkos.
std::string kokkos_version();

// Starts the runtime a backend needs (Kokkos::initialize with `threads` OpenMP threads)
// for the lifetime of the object; a no-op for the OpenMP backend. std::invalid_argument
// when this build does not carry the backend.
class ScopedRuntime {
 public:
  ScopedRuntime(Backend b, int threads);
  ~ScopedRuntime();
  ScopedRuntime(const ScopedRuntime&) = delete;
  ScopedRuntime& operator=(const ScopedRuntime&) = delete;

 private:
  void (*stop_)() = nullptr;
};

}  // namespace pxq::kernels
