# Small helpers shared by every room: common compile options and one call per miniapp/test.

# Options every pxq target gets (warnings, C++17, -march=native, sanitizers).
add_library(pxq_options INTERFACE)
target_compile_features(pxq_options INTERFACE cxx_std_17)
target_compile_options(pxq_options INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unknown-pragmas>)
if(PXQ_WERROR)
  target_compile_options(pxq_options INTERFACE $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Werror>)
endif()
if(PXQ_NATIVE)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native PXQ_HAS_MARCH_NATIVE)
  if(PXQ_HAS_MARCH_NATIVE)
    target_compile_options(pxq_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
  endif()
endif()
# The build that --counters sim runs under valgrind, whose simulator decodes AVX2 but not AVX-512.
if(PXQ_NO_AVX512)
  target_compile_options(pxq_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-mno-avx512f>)
endif()
if(PXQ_SANITIZE)
  target_compile_options(pxq_options INTERFACE -fsanitize=${PXQ_SANITIZE} -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
  target_link_options(pxq_options INTERFACE -fsanitize=${PXQ_SANITIZE})
endif()

# The compile flags every pxq target gets, as the run record says them (context.compile_flags).
string(TOUPPER "${CMAKE_BUILD_TYPE}" _pxq_build_type)
set(PXQ_COMPILE_FLAGS "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_pxq_build_type}} -std=c++17")
if(PXQ_NATIVE AND PXQ_HAS_MARCH_NATIVE)
  string(APPEND PXQ_COMPILE_FLAGS " -march=native")
endif()
if(PXQ_NO_AVX512)
  string(APPEND PXQ_COMPILE_FLAGS " -mno-avx512f")
endif()
if(PXQ_SANITIZE)
  string(APPEND PXQ_COMPILE_FLAGS " -fsanitize=${PXQ_SANITIZE}")
endif()
string(REGEX REPLACE " +" " " PXQ_COMPILE_FLAGS "${PXQ_COMPILE_FLAGS}")
string(STRIP "${PXQ_COMPILE_FLAGS}" PXQ_COMPILE_FLAGS)
if(CMAKE_BUILD_TYPE)
  set(PXQ_COMPILE_FLAGS "${PXQ_COMPILE_FLAGS} (${CMAKE_BUILD_TYPE})")
endif()

# Where a git commit is known at configure time, the run record carries it
# (the driver overrides it at run time through PXQ_GIT_COMMIT).
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                OUTPUT_VARIABLE PXQ_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE _pxq_git_rc)
if(NOT _pxq_git_rc EQUAL 0)
  set(PXQ_GIT_COMMIT "unknown")
endif()

# pxq_add_miniapp(NAME SOURCES...): one MPI executable build/bin/pxq-NAME.
function(pxq_add_miniapp name)
  add_executable(pxq-${name} ${ARGN})
  target_link_libraries(pxq-${name} PRIVATE pxq_common pxq_kernels pxq_tiling pxq_comm pxq_options)
endfunction()

# The app registry, miniapps/apps.def (the one list of apps): PXQ_APPS, every app; PXQ_NAS_APPS,
# those with NAS problem classes. The miniapps' folders and the CTest lists follow it.
file(STRINGS ${PROJECT_SOURCE_DIR}/miniapps/apps.def _pxq_app_lines REGEX "^PXQ_APP\\(")
set(PXQ_APPS "")
set(PXQ_NAS_APPS "")
foreach(_line IN LISTS _pxq_app_lines)
  string(REGEX MATCH "^PXQ_APP\\(([a-z0-9_]+), *\"([A-Z]*)\"" _m "${_line}")
  list(APPEND PXQ_APPS ${CMAKE_MATCH_1})
  if(NOT CMAKE_MATCH_2 STREQUAL "")
    list(APPEND PXQ_NAS_APPS ${CMAKE_MATCH_1})
  endif()
endforeach()
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/miniapps/apps.def)
