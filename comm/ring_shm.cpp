// The ring's hand-over through an MPI-3 shared-memory window (see ring_shm.hpp).
#include "pxq/comm/ring_shm.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "pxq/comm/mpi_check.hpp"

namespace pxq::comm {
namespace {

// One counter per rank, each on a cache line of its own (no false sharing between ranks).
constexpr std::size_t kFlagBytes = 64;

// Spins this long on the neighbour's counter before yielding the core between looks (an
// oversubscribed run would otherwise spin away the time its neighbour needs).
constexpr int kSpinsBeforeYield = 1 << 12;

std::uint64_t load_acquire(const std::uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

}  // namespace

ShmRing::ShmRing(MPI_Comm comm, int threads, std::size_t block_elems, std::size_t tile_elems)
    : comm_(comm), threads_(threads), block_elems_(block_elems) {
  if (tile_elems == 0 || tile_elems > block_elems)
    throw std::invalid_argument("shared-memory ring: tile must be 1..block elements");
  tiles_ = (block_elems + tile_elems - 1) / tile_elems;
  int size = 0, rank = 0, node_size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  check_mpi(MPI_Comm_size(node, &node_size), "MPI_Comm_size");
  MPI_Comm_free(&node);
  int all_shared = node_size == size ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &all_shared, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (!all_shared)
    throw std::invalid_argument("--exchange shm needs every rank on one node's shared memory (" + std::to_string(size) +
                                " ranks, " + std::to_string(node_size) + " share this one): use --exchange p2p");

  MPI_Info info = MPI_INFO_NULL;
  check_mpi(MPI_Info_create(&info), "MPI_Info_create");
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's part on its own pages
  const MPI_Aint bytes = static_cast<MPI_Aint>(static_cast<std::size_t>(threads) * block_elems * sizeof(double));
  double* mine = nullptr;
  check_mpi(MPI_Win_allocate_shared(bytes, sizeof(double), info, comm, &mine, &blocks_win_),
            "MPI_Win_allocate_shared (blocks)");
  std::uint64_t* flag = nullptr;
  check_mpi(MPI_Win_allocate_shared(kFlagBytes, 1, info, comm, &flag, &flags_win_), "MPI_Win_allocate_shared (flags)");
  MPI_Info_free(&info);
#ifdef MADV_HUGEPAGE
  if (bytes > 0) madvise(mine, static_cast<std::size_t>(bytes), MADV_HUGEPAGE);  // advice only
#endif
  bases_.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    MPI_Aint sz = 0;
    int disp = 0;
    double* base = nullptr;
    check_mpi(MPI_Win_shared_query(blocks_win_, r, &sz, &disp, &base), "MPI_Win_shared_query");
    bases_[static_cast<std::size_t>(r)] = base;
  }
  MPI_Aint sz = 0;
  int disp = 0;
  const int left = (rank - 1 + size) % size;
  check_mpi(MPI_Win_shared_query(flags_win_, left, &sz, &disp, &left_), "MPI_Win_shared_query");
  mine_ = flag;
  __atomic_store_n(mine_, 0, __ATOMIC_RELEASE);
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, flags_win_), "MPI_Win_lock_all");
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
}

ShmRing::~ShmRing() {
  if (flags_win_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(flags_win_);
    MPI_Win_free(&flags_win_);
  }
  if (blocks_win_ != MPI_WIN_NULL) MPI_Win_free(&blocks_win_);
}

double* ShmRing::block(long id) const {
  return bases_[static_cast<std::size_t>(id / threads_)] + static_cast<std::size_t>(id % threads_) * block_elems_;
}

void ShmRing::map_all() const {
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t step = page > 0 ? static_cast<std::size_t>(page) / sizeof(double) : 512;
  const std::size_t per_rank = static_cast<std::size_t>(threads_) * block_elems_;
  double sum = 0;
  for (const double* base : bases_)
    for (std::size_t i = 0; i < per_rank; i += step) sum += static_cast<const volatile double*>(base)[i];
  asm volatile("" : : "g"(sum));  // keep the reads
}

void ShmRing::wait_left(long g, std::size_t tile) const {
  const std::uint64_t need = static_cast<std::uint64_t>(g - 1) * tiles_ + tile + 1;
  for (int spins = 0; load_acquire(left_) < need; ++spins)
    if (spins >= kSpinsBeforeYield) sched_yield();
  MPI_Win_sync(flags_win_);
}

void ShmRing::done(long g, std::size_t tile) {
  MPI_Win_sync(flags_win_);
  __atomic_store_n(mine_, static_cast<std::uint64_t>(g) * tiles_ + tile + 1, __ATOMIC_RELEASE);
}

void ShmRing::finish(long iterations) const {
  if (iterations > 0) wait_left(iterations, tiles_ - 1);
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

}  // namespace pxq::comm
