// Backend selection and runtime lifetime; the only place that knows which backends exist.
#include "pxq/kernels/backend.hpp"

#include <stdexcept>

#include "cg_ops_backends.hpp"
#include "ft_ops_backends.hpp"
#include "mg_ops_backends.hpp"
#include "ring_update_backends.hpp"

#ifdef PXQ_HAVE_KOKKOS
#include <Kokkos_Core.hpp>
#endif

namespace pxq::kernels {

Backend parse_backend(const std::string& name) {
  if (name == "openmp") return Backend::openmp;
  if (name == "kokkos") return Backend::kokkos;
  throw std::invalid_argument("unknown backend '" + name + "': use openmp or kokkos");
}

const char* backend_name(Backend b) { return b == Backend::kokkos ? "kokkos" : "openmp"; }

bool backend_available(Backend b) {
#ifdef PXQ_HAVE_KOKKOS
  (void)b;
  return true;
#else
  return b == Backend::openmp;
#endif
}

std::string kokkos_version() {
#ifdef PXQ_HAVE_KOKKOS
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
#else
  return "";
#endif
}

ScopedRuntime::ScopedRuntime(Backend b, int threads) {
  if (b != Backend::kokkos) return;
#ifdef PXQ_HAVE_KOKKOS
  if (!Kokkos::is_initialized()) {
#if KOKKOS_VERSION >= 30700
    Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(threads));
#else
    Kokkos::InitArguments args;
    args.num_threads = threads;
    Kokkos::initialize(args);
#endif
    started_kokkos_ = true;
  }
#else
  (void)threads;
  throw std::invalid_argument(
      "this pxq build has no Kokkos backend: use --backend openmp, or rebuild with "
      "-DPXQ_ENABLE_KOKKOS=ON and a Kokkos installation");
#endif
}

ScopedRuntime::~ScopedRuntime() {
#ifdef PXQ_HAVE_KOKKOS
  if (started_kokkos_) Kokkos::finalize();
#endif
}

void ring_passes_workers(Backend backend, double* const* blocks, int workers, std::size_t begin,
                         std::size_t end, const RingParams& p) {
  if (backend == Backend::kokkos) {
#ifdef PXQ_HAVE_KOKKOS
    ring_passes_workers_kokkos(blocks, workers, begin, end, p);
    return;
#else
    throw std::invalid_argument("this pxq build has no Kokkos backend");
#endif
  }
  ring_passes_workers_openmp(blocks, workers, begin, end, p);
}

std::unique_ptr<CgOps> make_cg_ops(Backend backend, int threads, std::size_t tile) {
  if (backend == Backend::kokkos) {
#ifdef PXQ_HAVE_KOKKOS
    // Kokkos fuses its sweeps per element; the tile only sets the SpMV column window.
    return make_cg_ops_kokkos();
#else
    throw std::invalid_argument("this pxq build has no Kokkos backend");
#endif
  }
  return make_cg_ops_openmp(threads, tile);
}

std::unique_ptr<MgOps> make_mg_ops(Backend backend, int threads, std::size_t tile_bytes) {
  if (backend == Backend::kokkos) {
#ifdef PXQ_HAVE_KOKKOS
    return make_mg_ops_kokkos(threads, tile_bytes);
#else
    throw std::invalid_argument("this pxq build has no Kokkos backend");
#endif
  }
  return make_mg_ops_openmp(threads, tile_bytes);
}

std::unique_ptr<FtOps> make_ft_ops(Backend backend, int threads, std::size_t tile_bytes) {
  if (backend == Backend::kokkos) {
#ifdef PXQ_HAVE_KOKKOS
    return make_ft_ops_kokkos(threads, tile_bytes);
#else
    throw std::invalid_argument("this pxq build has no Kokkos backend");
#endif
  }
  return make_ft_ops_openmp(threads, tile_bytes);
}

}  // namespace pxq::kernels
