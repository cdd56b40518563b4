// Internal: the FT executors backend.cpp chooses between.
#pragma once

#include <memory>

#include "pxq/kernels/ft_ops.hpp"

namespace pxq::kernels {

std::unique_ptr<FtOps> make_ft_ops_openmp(int threads, std::size_t tile_bytes);
#ifdef PXQ_HAVE_KOKKOS
std::unique_ptr<FtOps> make_ft_ops_kokkos(int threads, std::size_t tile_bytes);
#endif

}  // namespace pxq::kernels
