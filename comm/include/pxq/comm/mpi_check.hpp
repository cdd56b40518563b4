// MPI return-code checking: a failed call becomes an exception that names the call.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace pxq::comm {

inline void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, len));
}

}  // namespace pxq::comm
