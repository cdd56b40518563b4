// Miniapp start-up and error handling: MPI with FUNNELED threads, one parse, one exit path.
#include "pxq/common/app.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "pxq/comm/uncounted.hpp"

namespace pxq::common {
namespace {

// Every MPI error on the world communicator (and the communicators made from it, which
// inherit the handler) ends the job: the rank names the error, and the exit code is 3,
// so a failing MPI call can never end in a record marked ok.
void fatal_mpi_error(MPI_Comm* comm, int* code, ...) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(*code, text, &len);
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "pxq: rank %d: MPI error: %.*s\n", rank, len, text);
  std::fflush(stderr);
  MPI_Abort(comm != nullptr ? *comm : MPI_COMM_WORLD, kExitRuntimeError);
}

}  // namespace

void install_mpi_error_handler(MPI_Comm comm) {
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(&fatal_mpi_error, &handler);
  MPI_Comm_set_errhandler(comm, handler);
  MPI_Errhandler_free(&handler);
}

void root_check(const MpiWorld& w, const std::function<void()>& check) {
  std::string error;
  if (w.rank == 0) {
    try {
      check();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const comm::Uncounted bookkeeping;
  int len = static_cast<int>(error.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, w.comm);
  error.resize(static_cast<std::size_t>(len));
  MPI_Bcast(error.data(), len, MPI_CHAR, 0, w.comm);
  if (!error.empty()) throw std::invalid_argument(error);
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, x);
  return buf;
}

void print_root(const MpiWorld& w, const std::string& text) {
  if (w.rank == 0) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
}

namespace {
using Clock = std::chrono::steady_clock;
Clock::time_point g_started = Clock::now();  // reset when run_miniapp begins
double g_mpi_init = 0.0;
}  // namespace

double mpi_init_seconds() { return g_mpi_init; }
double seconds_since_start() { return std::chrono::duration<double>(Clock::now() - g_started).count(); }

int run_miniapp(int argc, char** argv, pxq::cli::App& app, const std::function<int(const MpiWorld&)>& run,
                const std::function<int()>& thread_level) {
  g_started = Clock::now();
  // The options come first: the thread level asked of MPI depends on them, and a level above
  // MPI_THREAD_SINGLE costs every message (Open MPI 4.1: about 0.09 us more per one-way
  // ping-pong, 0.28 -> 0.37 us here). Their errors are reported once MPI runs.
  std::string parse_error;
  const bool help = app.parse(argc, argv, parse_error) == cli::App::Outcome::help;
  int wanted = MPI_THREAD_FUNNELED;
  if (parse_error.empty() && !help && thread_level) {
    try {
      wanted = thread_level();
    } catch (const std::exception&) {
      wanted = MPI_THREAD_FUNNELED;  // contradicting options: `run` reports them
    }
  }
  int provided = 0;
  const Clock::time_point before_init = Clock::now();
  MPI_Init_thread(&argc, &argv, wanted, &provided);
  g_mpi_init = std::chrono::duration<double>(Clock::now() - before_init).count();
  MpiWorld w;
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  install_mpi_error_handler(w.comm);

  int code = kExitOk;
  try {
    if (help) {
      if (w.rank == 0) std::cout << app.help();
      MPI_Finalize();
      return kExitOk;
    }
    if (!parse_error.empty()) throw std::invalid_argument(parse_error);
    if (provided < wanted)
      throw std::runtime_error(std::string("the MPI library does not provide ") +
                               (wanted == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "the thread level asked"));
    code = run(w);
  } catch (const std::invalid_argument& e) {
    if (w.rank == 0) std::fprintf(stderr, "%s: error: %s\n", app.name().c_str(), e.what());
    code = kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: error: %s\n", app.name().c_str(), w.rank, e.what());
    code = kExitRuntimeError;
    // A runtime failure may hit one rank only: the others could be waiting in MPI.
    MPI_Abort(w.comm, code);
  }
  MPI_Finalize();
  return code;
}

}  // namespace pxq::common
