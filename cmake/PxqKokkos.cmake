# Kokkos: the user's own installation first (Spack, modules, -DKokkos_ROOT=...).
# ./pxq builds one with the OpenMP and Serial backends into .deps/kokkos when none is found
# and passes it here as Kokkos_ROOT.
set(PXQ_HAVE_KOKKOS OFF)
if(PXQ_ENABLE_KOKKOS)
  find_package(Kokkos 3.4 QUIET)
  if(NOT Kokkos_FOUND)
    message(FATAL_ERROR
      "PXQ_ENABLE_KOKKOS is ON but no Kokkos was found.\n"
      "  Fix: pass -DKokkos_ROOT=/path/to/kokkos/install (or `module load kokkos`),\n"
      "  let ./pxq build one into .deps/kokkos, or configure with -DPXQ_ENABLE_KOKKOS=OFF.")
  endif()
  kokkos_check(DEVICES OpenMP RETURN_VALUE _pxq_kokkos_openmp)
  if(NOT _pxq_kokkos_openmp)
    message(FATAL_ERROR
      "The Kokkos found at ${Kokkos_DIR} has no OpenMP backend; pxq needs Kokkos::OpenMP.\n"
      "  Fix: point -DKokkos_ROOT at a Kokkos built with -DKokkos_ENABLE_OPENMP=ON,\n"
      "  or configure with -DPXQ_ENABLE_KOKKOS=OFF.")
  endif()
  set(PXQ_HAVE_KOKKOS ON)
  message(STATUS "pxq: Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}")
endif()
