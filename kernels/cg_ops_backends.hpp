// Internal: the CG executors backend.cpp chooses between.
#pragma once

#include <memory>

#include "pxq/kernels/cg_ops.hpp"

namespace pxq::kernels {

std::unique_ptr<CgOps> make_cg_ops_openmp(int threads, std::size_t tile);
#ifdef PXQ_HAVE_KOKKOS
std::unique_ptr<CgOps> make_cg_ops_kokkos();
#endif

}  // namespace pxq::kernels
