// The OpenMP backend: libgomp's threads, nothing to start. Its executors are the files beside
// this one, each joining its kernel family.
#include "pxq/kernels/backend.hpp"

PXQ_BACKEND(pxq::kernels::BackendInfo{"openmp", PXQ_BACKEND_RUNTIME, "", true, ""}, pxq::kernels::BackendRuntime{});
