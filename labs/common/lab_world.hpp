// What a student's code sees of the pxq labs' harness: MPI and the World a lab's functions are
// handed. The lab's headers that students' files include (pingpong.hpp, stride.hpp, heat.hpp)
// include this file alone, not lab.hpp: a student's file compiles in about a second, and it
// links with the harness's objects that pxq built once (labs/common/lab.cmake).
#pragma once

#include <mpi.h>

namespace lab {

struct World {
  int rank = 0;
  int size = 1;
  int provided = MPI_THREAD_SINGLE;  // the thread level MPI gave
  MPI_Comm comm = MPI_COMM_WORLD;
};

inline const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace lab
