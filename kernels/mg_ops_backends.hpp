// Internal: the MG executors backend.cpp chooses between.
#pragma once

#include <memory>

#include "pxq/kernels/mg_ops.hpp"

namespace pxq::kernels {

std::unique_ptr<MgOps> make_mg_ops_openmp(int threads, std::size_t tile_bytes);
#ifdef PXQ_HAVE_KOKKOS
std::unique_ptr<MgOps> make_mg_ops_kokkos(int threads, std::size_t tile_bytes);
#endif

}  // namespace pxq::kernels
