// The miniapp skeleton: MPI start-up (FUNNELED), one command-line parse, errors reported
// once by rank 0 with a non-zero exit and no record, then the app's own run function.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

#include "pxq/common/cli.hpp"

namespace pxq::common {

// Exit codes shared by every miniapp.
inline constexpr int kExitOk = 0;
inline constexpr int kExitVerificationFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRuntimeError = 3;

struct MpiWorld {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
};

// Parses `app`'s options, starts MPI at `thread_level()` (after the parse; default
// MPI_THREAD_FUNNELED), then runs `run`. std::invalid_argument from the parse or from `run`
// is bad input (exit 2); other exceptions are runtime errors (exit 3).
int run_miniapp(int argc, char** argv, pxq::cli::App& app, const std::function<int(const MpiWorld&)>& run,
                const std::function<int()>& thread_level = {});

// This rank's start-up, for the record's time block: the seconds MPI_Init_thread took, and
// the seconds since run_miniapp began (before MPI_Init), so that the driver can tell its
// launcher's share (process start, finalize, teardown) from the app's.
double mpi_init_seconds();
double seconds_since_start();

// Makes every MPI error on `comm` (and communicators derived from it) fatal: the rank prints
// the MPI error string and the job aborts with exit code 3.
void install_mpi_error_handler(MPI_Comm comm);

// Rank 0 runs `check` (file-system checks and the like); its error, if any, is broadcast
// and thrown as std::invalid_argument on every rank, so all ranks fail alike.
void root_check(const MpiWorld& w, const std::function<void()>& check);

// One number through a printf format ("%.4f"), for the miniapps' summaries.
std::string fmt(const char* format, double x);

// Prints on rank 0 only.
void print_root(const MpiWorld& w, const std::string& text);

}  // namespace pxq::common
