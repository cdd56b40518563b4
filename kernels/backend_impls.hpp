// Private to kernels/: every backend's executors, which backend.cpp's registry lists. A new
// backend declares its four entry points here (and its files in kernels/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <memory>

#include "pxq/kernels/cg_ops.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/kernels/mg_ops.hpp"
#include "pxq/kernels/ring_update.hpp"

namespace pxq::kernels {

void ring_passes_workers_openmp(double* const* blocks, int workers, std::size_t begin, std::size_t end,
                                const RingParams& p);
std::unique_ptr<CgOps> make_cg_ops_openmp(int threads, std::size_t tile);
std::unique_ptr<MgOps> make_mg_ops_openmp(int threads, std::size_t tile_bytes);
std::unique_ptr<FtOps> make_ft_ops_openmp(int threads, std::size_t tile_bytes);

#ifdef PXQ_HAVE_KOKKOS
void ring_passes_workers_kokkos(double* const* blocks, int workers, std::size_t begin, std::size_t end,
                                const RingParams& p);
std::unique_ptr<CgOps> make_cg_ops_kokkos();
std::unique_ptr<MgOps> make_mg_ops_kokkos(int threads, std::size_t tile_bytes);
std::unique_ptr<FtOps> make_ft_ops_kokkos(int threads, std::size_t tile_bytes);
#endif

}  // namespace pxq::kernels
