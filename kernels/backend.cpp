// The backend registry: the one place that lists the backends, what each needs at run time
// and which executor runs each kernel. Everything else (options, records, pxq-envinfo, the
// driver, the kernel tests) asks it.
#include "pxq/kernels/backend.hpp"

#include <stdexcept>

#include "backend_impls.hpp"

#ifdef PXQ_HAVE_KOKKOS
#include <Kokkos_Core.hpp>
#endif

namespace pxq::kernels {
namespace {

using RingFn = void (*)(double* const*, int, std::size_t, std::size_t, const RingParams&);

// A backend's entry: its facts and its executors (null when this build lacks it).
struct Entry {
  BackendInfo info;
  RingFn ring;
  std::unique_ptr<CgOps> (*cg)(int threads, std::size_t tile);
  std::unique_ptr<MgOps> (*mg)(int threads, std::size_t tile_bytes);
  std::unique_ptr<FtOps> (*ft)(int threads, std::size_t tile_bytes);
  void (*start)(int threads);  // the runtime's start (null: nothing to start)
  void (*stop)();
  bool (*running)();  // already started (by a test harness, say): then left to its owner
};

#ifdef PXQ_HAVE_KOKKOS
std::string kokkos_version_text() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}
void kokkos_start(int threads) {
#if KOKKOS_VERSION >= 30700
  Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(threads));
#else
  Kokkos::InitArguments args;
  args.num_threads = threads;
  Kokkos::initialize(args);
#endif
}
void kokkos_stop() { Kokkos::finalize(); }
bool kokkos_running() { return Kokkos::is_initialized(); }
#endif

const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = {
      {{Backend::openmp, "openmp", "OpenMP (libgomp)", "", true},
       ring_passes_workers_openmp,
       make_cg_ops_openmp,
       make_mg_ops_openmp,
       make_ft_ops_openmp,
       nullptr,
       nullptr,
       nullptr},
#ifdef PXQ_HAVE_KOKKOS
      // Kokkos fuses CG's sweeps per element; the tile only sets the SpMV column window.
      {{Backend::kokkos, "kokkos", "Kokkos (OpenMP execution space)", kokkos_version_text(), true},
       ring_passes_workers_kokkos,
       [](int, std::size_t) { return make_cg_ops_kokkos(); },
       make_mg_ops_kokkos,
       make_ft_ops_kokkos,
       kokkos_start,
       kokkos_stop,
       kokkos_running},
#else
      {{Backend::kokkos, "kokkos", "Kokkos", "", false}, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr},
#endif
  };
  return table;
}

// The entry of a backend this build carries; std::invalid_argument naming the fix otherwise.
const Entry& usable(Backend b) {
  for (const auto& e : entries())
    if (e.info.id == b) {
      if (!e.info.available)
        throw std::invalid_argument(std::string("this pxq build has no ") + e.info.name +
                                    " backend: use --backend openmp, or rebuild with it enabled "
                                    "(-DPXQ_ENABLE_KOKKOS=ON and a Kokkos installation for kokkos)");
      return e;
    }
  throw std::invalid_argument("unknown backend");
}

}  // namespace

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> out;
  for (const auto& e : entries()) out.push_back(e.info);
  return out;
}

std::vector<Backend> available_backends() {
  std::vector<Backend> out;
  for (const auto& e : entries())
    if (e.info.available) out.push_back(e.info.id);
  return out;
}

std::string backend_names(const char* sep) {
  std::string out;
  for (const auto& e : entries()) out += (out.empty() ? "" : sep) + std::string(e.info.name);
  return out;
}

Backend parse_backend(const std::string& name) {
  for (const auto& e : entries())
    if (name == e.info.name) return e.info.id;
  throw std::invalid_argument("unknown backend '" + name + "': use " + backend_names(" or "));
}

const char* backend_name(Backend b) {
  for (const auto& e : entries())
    if (e.info.id == b) return e.info.name;
  return "unknown";
}

bool backend_available(Backend b) {
  for (const auto& e : entries())
    if (e.info.id == b) return e.info.available;
  return false;
}

std::string kokkos_version() {
  for (const auto& e : entries())
    if (e.info.id == Backend::kokkos) return e.info.version;
  return "";
}

ScopedRuntime::ScopedRuntime(Backend b, int threads) {
  const Entry& e = usable(b);
  if (!e.start || (e.running && e.running())) return;
  e.start(threads);
  stop_ = e.stop;
}

ScopedRuntime::~ScopedRuntime() {
  if (stop_) stop_();
}

void ring_passes_workers(Backend backend, double* const* blocks, int workers, std::size_t begin, std::size_t end,
                         const RingParams& p) {
  usable(backend).ring(blocks, workers, begin, end, p);
}

std::unique_ptr<CgOps> make_cg_ops(Backend backend, int threads, std::size_t tile) {
  return usable(backend).cg(threads, tile);
}

std::unique_ptr<MgOps> make_mg_ops(Backend backend, int threads, std::size_t tile_bytes) {
  return usable(backend).mg(threads, tile_bytes);
}

std::unique_ptr<FtOps> make_ft_ops(Backend backend, int threads, std::size_t tile_bytes) {
  return usable(backend).ft(threads, tile_bytes);
}

}  // namespace pxq::kernels
