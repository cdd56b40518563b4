# `cmake --install BUILD --prefix P`: a tree laid out as a build is (P/bin/pxq-*, P/lib/libpxq-msgprof.so),
# so the driver finds the binaries in either. Plus the driver (P/share/pxq/driver, started by P/bin/pxq),
# the record schemas and the published figures, and a package config for find_package(pxq):
# pxq::msgprof, the message profiler, to link into an MPI program of your own.
include(CMakePackageConfigHelpers)

# The programs users and the driver run (the test programs stay in the build).
set(_pxq_install_programs pxq-envinfo pxq-noise pxq-probe-collective pxq-probe-stride
                          pxq-probe-stride-O0 pxq-probe-bandwidth
                          pxq-probe-pingpong pxq-probe-osu pxq-stream pxq-bench-tiling pxq-bench-tiling-mpi)
foreach(app ${PXQ_APPS})
  list(APPEND _pxq_install_programs pxq-${app})
endforeach()
set(_pxq_present "")
foreach(target ${_pxq_install_programs})
  if(TARGET ${target})
    list(APPEND _pxq_present ${target})
  endif()
endforeach()
# Installed programs find the libraries they were linked with where they were (MPI, hwloc), and
# the Kokkos that ./pxq built inside the checkout (.deps/kokkos) in P/lib, installed with them:
# the tree does not depend on the checkout.
set_target_properties(${_pxq_present} pxq-msgprof PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON
                                                             INSTALL_RPATH "$ORIGIN/../lib")
if(TARGET Kokkos::kokkoscore)
  get_target_property(_pxq_kokkos_lib Kokkos::kokkoscore LOCATION)
  get_filename_component(_pxq_kokkos_dir "${_pxq_kokkos_lib}" DIRECTORY)
  string(FIND "${_pxq_kokkos_dir}/" "${PROJECT_SOURCE_DIR}/" _pxq_inside)
  if(_pxq_inside EQUAL 0 AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.21)
    install(IMPORTED_RUNTIME_ARTIFACTS Kokkos::kokkoscore Kokkos::kokkoscontainers LIBRARY DESTINATION lib)
  else()
    set_property(TARGET ${_pxq_present} APPEND PROPERTY INSTALL_RPATH "${_pxq_kokkos_dir}")
  endif()
endif()
install(TARGETS ${_pxq_present} RUNTIME DESTINATION bin)

install(TARGETS pxq-msgprof EXPORT pxqTargets LIBRARY DESTINATION lib)
set_target_properties(pxq-msgprof PROPERTIES EXPORT_NAME msgprof INSTALL_RPATH_USE_LINK_PATH ON)
install(EXPORT pxqTargets NAMESPACE pxq:: DESTINATION lib/cmake/pxq)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pxqConfig.cmake.in ${PROJECT_BINARY_DIR}/pxqConfig.cmake
                              INSTALL_DESTINATION lib/cmake/pxq)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pxqConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pxqConfig.cmake ${PROJECT_BINARY_DIR}/pxqConfigVersion.cmake
        DESTINATION lib/cmake/pxq)

# The driver: its package with the schemas copied in (in the checkout data/schemas is a link),
# installed.json telling it where the prefix is, and P/bin/pxq to start it.
set(_pxq_driver share/pxq/driver)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/drivers/pxq/pxq DESTINATION ${_pxq_driver}
        PATTERN __pycache__ EXCLUDE PATTERN schemas EXCLUDE PATTERN installed.json EXCLUDE
        PATTERN *.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                 WORLD_READ WORLD_EXECUTE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${_pxq_driver}/pxq/data/schemas)
file(WRITE ${PROJECT_BINARY_DIR}/pxq-installed.json
     "{\"prefix\": \"../../../../..\", \"version\": \"${PROJECT_VERSION}\", \"commit\": \"${PXQ_GIT_COMMIT}\"}\n")
install(FILES ${PROJECT_BINARY_DIR}/pxq-installed.json DESTINATION ${_pxq_driver}/pxq/data RENAME installed.json)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/cmake/pxq-installed.sh DESTINATION bin RENAME pxq)
install(FILES ${PROJECT_SOURCE_DIR}/drivers/pxq/pyproject.toml DESTINATION ${_pxq_driver})
