# pxq labs: one build for a lab's starter, its solution or a student's copy.
#   cmake -S labs/04-tile-ring -B build/labs/04 -DLAB_SOURCE=begin        (the default)
#   cmake -S labs/04-tile-ring -B build/labs/04 -DLAB_SOURCE=solution
#   cmake -S labs/04-tile-ring -B lab-work/04/build -DLAB_SOURCE=$PWD/lab-work/04
# The lab's harness (the files beside its CMakeLists.txt) is shared; LAB_SOURCE holds only the
# files the student edits.
cmake_minimum_required(VERSION 3.18)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
set(LAB_SOURCE begin CACHE STRING "begin, solution, or the folder of a student's copy")
if(LAB_SOURCE STREQUAL "begin" OR LAB_SOURCE STREQUAL "solution")
  set(LAB_SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/${LAB_SOURCE})
else()
  get_filename_component(LAB_SOURCE_DIR "${LAB_SOURCE}" ABSOLUTE)
endif()
if(NOT IS_DIRECTORY "${LAB_SOURCE_DIR}")
  message(FATAL_ERROR "LAB_SOURCE=${LAB_SOURCE}: no such folder (use begin, solution or your copy's folder)")
endif()

# pxq's own build of a lab leaves its harness's objects in harness-objects/; a student's copy
# is configured with LAB_HARNESS_OBJECTS=that folder and compiles only the student's files (a
# lab whose student file is a header the harness includes compiles the harness again).
set(LAB_HARNESS_OBJECTS "" CACHE PATH "a folder of the harness's objects, built by pxq (empty: compile the harness)")

set(LAB_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR})
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(CLI11 2.0 REQUIRED)

# The compile and link settings of a lab's program and of its harness's objects alike.
macro(_pxq_lab_settings tgt)
  target_compile_features(${tgt} PRIVATE cxx_std_17)
  target_include_directories(${tgt} PRIVATE ${LAB_COMMON_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${student_include})
  target_compile_options(${tgt} PRIVATE -Wall -Wextra -ffp-contract=off $<$<CONFIG:Release>:-march=native>)
  target_link_libraries(${tgt} PRIVATE MPI::MPI_CXX OpenMP::OpenMP_CXX nlohmann_json::nlohmann_json CLI11::CLI11)
  if(LAB_KOKKOS)
    find_package(Kokkos REQUIRED)
    target_link_libraries(${tgt} PRIVATE Kokkos::kokkos)
  endif()
endmacro()

# pxq_lab(TARGET HARNESS files... [WITH_STUDENT files...] STUDENT files... [KOKKOS])
# WITH_STUDENT: the harness's files that include a header the student edits (compiled with each
# copy); the HARNESS files then include none, and a copy links their objects as for any lab.
function(pxq_lab target)
  cmake_parse_arguments(LAB "KOKKOS" "" "HARNESS;WITH_STUDENT;STUDENT" ${ARGN})
  set(harness)
  foreach(f IN LISTS LAB_HARNESS)
    list(APPEND harness ${CMAKE_CURRENT_SOURCE_DIR}/${f})
  endforeach()
  set(sources)
  foreach(f IN LISTS LAB_WITH_STUDENT)
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${f})
  endforeach()
  set(student_headers FALSE)
  foreach(f IN LISTS LAB_STUDENT)
    if(NOT EXISTS "${LAB_SOURCE_DIR}/${f}")
      message(FATAL_ERROR "${LAB_SOURCE_DIR}/${f} is missing: start again with ./pxq lab start")
    endif()
    list(APPEND sources ${LAB_SOURCE_DIR}/${f})
    if(f MATCHES "\\.(h|hh|hpp|hxx)$" AND NOT LAB_WITH_STUDENT)
      set(student_headers TRUE)  # included by the HARNESS files: they compile with each copy
    endif()
  endforeach()
  # The student's folder is not on the include path: <nlohmann/json.hpp> or "lab.hpp" always
  # resolve to the harness's and the system's headers, never to a file of the same name there.
  # The headers the student edits (listed under STUDENT) are copied to a folder of their own,
  # which the harness's files include after the harness's.
  set(student_include ${CMAKE_BINARY_DIR}/student-include)
  foreach(f IN LISTS LAB_STUDENT)
    if(f MATCHES "\\.(h|hh|hpp|hxx)$")
      configure_file(${LAB_SOURCE_DIR}/${f} ${student_include}/${f} COPYONLY)
    endif()
  endforeach()
  if(LAB_HARNESS_OBJECTS AND NOT student_headers)
    foreach(f IN LISTS LAB_HARNESS)
      get_filename_component(name "${f}" NAME)
      if(NOT EXISTS "${LAB_HARNESS_OBJECTS}/${name}.o")
        message(FATAL_ERROR "LAB_HARNESS_OBJECTS=${LAB_HARNESS_OBJECTS} has no ${name}.o: build the lab's solution first")
      endif()
      list(APPEND sources "${LAB_HARNESS_OBJECTS}/${name}.o")
    endforeach()
    add_executable(${target} ${sources})
  else()
    add_library(${target}-harness OBJECT ${harness})
    _pxq_lab_settings(${target}-harness)
    add_executable(${target} ${sources} $<TARGET_OBJECTS:${target}-harness>)
    if(NOT student_headers)
      # The objects a student's copy links (copied whole after every build of the harness).
      add_custom_command(TARGET ${target} POST_BUILD
                         COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/harness-objects
                         COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_OBJECTS:${target}-harness>
                                 ${CMAKE_BINARY_DIR}/harness-objects/
                         COMMAND_EXPAND_LISTS)
    endif()
  endif()
  _pxq_lab_settings(${target})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endfunction()
