// pxq::kernels backends: which implementation runs a kernel, and the runtime each needs.
// A backend is a folder of kernels/ (its CMakeLists.txt calls pxq_add_backend) whose runtime
// file registers it with PXQ_BACKEND and whose executor files join the kernel families they
// cover (family.hpp). Nothing else lists backends. No MPI here.
#pragma once

#include <string>
#include <vector>

namespace pxq::kernels {

// A backend is named as on the command line and in records: "openmp", "kokkos".
using Backend = std::string;

struct BackendInfo {
  std::string name;     // as on the command line and in records
  std::string runtime;  // what it runs on
  std::string version;  // "" when it has none of its own or is not built
  bool available;       // this build carries it
  std::string enable;   // how to build it in, when it is not ("" when it is)
};

// What a backend needs started around the kernels (all null: nothing).
struct BackendRuntime {
  void (*start)(int threads) = nullptr;
  void (*stop)() = nullptr;
  bool (*running)() = nullptr;  // already started (by a test harness, say): then left to its owner
};

// Registers a built backend at static initialisation (PXQ_BACKEND in its runtime file).
struct BackendJoin {
  BackendJoin(BackendInfo info, BackendRuntime runtime);
};

// Every backend pxq knows (CMake's list of backend folders), in that order, built or not.
std::vector<BackendInfo> backends();
// The backends this build carries, in the same order.
std::vector<Backend> available_backends();
// The names joined by `sep` ("openmp or kokkos").
std::string backend_names(const char* sep);

// A backend by name; throws std::invalid_argument naming the accepted values.
Backend parse_backend(const std::string& name);
inline const char* backend_name(const Backend& b) { return b.c_str(); }

// True when this build carries the backend.
bool backend_available(const Backend& b);
// The message for a backend this build lacks: what it is and how to build it in.
std::string backend_missing(const Backend& b);

// Starts the runtime a backend needs (Kokkos::initialize with `threads` OpenMP threads)
// for the lifetime of the object; a no-op for a backend with none. std::invalid_argument
// when this build does not carry the backend.
class ScopedRuntime {
 public:
  ScopedRuntime(const Backend& b, int threads);
  ~ScopedRuntime();
  ScopedRuntime(const ScopedRuntime&) = delete;
  ScopedRuntime& operator=(const ScopedRuntime&) = delete;

 private:
  void (*stop_)() = nullptr;
};

}  // namespace pxq::kernels

// In a backend's runtime file: PXQ_BACKEND(info, runtime);
#define PXQ_BACKEND(...) static const ::pxq::kernels::BackendJoin pxq_backend_join_(__VA_ARGS__)  // NOLINT
