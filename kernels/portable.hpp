// The one portability macro of the bodies every backend runs (cg_body.hpp, mg_body.hpp): a
// backend whose compiler needs a qualifier on functions its kernels call defines PXQ_INLINE
// before it includes a body (the Kokkos executors: KOKKOS_INLINE_FUNCTION); everyone else
// gets plain `inline`. No body header names a backend.
#pragma once

#ifndef PXQ_INLINE
#define PXQ_INLINE inline
#endif
