// Lab 6 harness: runs --steps of your smooth::step() with Kokkos's Serial and OpenMP
// backends, checks both bit for bit against a plain loop, and counts the Kokkos kernels
// launched (through Kokkos's tool callbacks): a port that still runs plain loops shows 0. One
// more step runs guarded: its x and y, and the Views step() made itself, can be touched inside
// kernels and deep copies only, so a plain loop beside the kernels shows too, whatever kernels
// step() launches, on x and y or on a copy of them (a host mirror).
// Your step() is compiled in step.cpp, the one harness file built with your smooth.hpp: this
// file is compiled once, by pxq, and your copy links its object.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "lab.hpp"

namespace smooth {

// step.cpp: your step() in each execution space.
double step_serial(Kokkos::View<const double*> x, Kokkos::View<double*> y, double c);
double step_openmp(Kokkos::View<const double*> x, Kokkos::View<double*> y, double c);

namespace {

int in_step = 0;  // step() is running: the Views allocated now are step()'s, not the harness's

template <class Space>
double step_in(Kokkos::View<const double*> x, Kokkos::View<double*> y, double c) {
  struct Running {
    Running() { ++in_step; }
    ~Running() { --in_step; }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;
  } running;
  if constexpr (std::is_same_v<Space, Kokkos::Serial>) {
    return step_serial(x, y, c);
  } else {
    return step_openmp(x, y, c);
  }
}

// Kokkos's tool callbacks: every kernel the student's code launched, in which execution space
// (the device id's top bits name its type), and whether it was a reduction. Kokkos's own kernels
// (named "Kokkos::...": a View's initialisation, a deep copy's fill) run where Kokkos puts them
// (a host View is initialised in the default host space): they are not the student's.
long kernels_launched = 0, reductions_launched = 0, kernels_elsewhere = 0;
uint32_t expected_space = 0;  // the device type of the backend being run
uint32_t space_of(uint32_t device_id) { return device_id >> Kokkos::Tools::Experimental::instance_bits; }
bool kokkos_own(const char* name) { return name != nullptr && std::strncmp(name, "Kokkos::", 8) == 0; }

// The guard: one untimed step whose x and y live in pages the harness closes (PROT_NONE). A plain
// loop beside the kernels that reads or writes them (on a GPU those Views are the device's, out
// of its reach) faults; the handler counts the fault, opens the pages and lets the loop go on, so
// the step still finishes and verifies. Inside a kernel each page opens on its first touch, and
// the handler notes the thread that touched it: a kernel that sweeps x or y on one thread of
// several (a RangePolicy of one iteration whose body loops over the points) is a plain loop
// inside a kernel. A deep copy opens every page.
struct Pages {
  void* base = nullptr;
  std::size_t bytes = 0;
  bool holds(const void* a) const {
    const auto* p = static_cast<const char*>(a);
    const auto* b = static_cast<const char*>(base);
    return base != nullptr && p >= b && p < b + bytes;
  }
};
Pages guarded_x, guarded_y;
std::uintptr_t page_bytes = 4096;

// The Views step() made itself (a mirror of x or y, a temporary), from Kokkos's allocation
// callbacks: every allocation step() asked for between kernels (one inside a kernel is Kokkos's
// own scratch). The guarded step closes the whole pages inside each, as it closes x and y: on a
// GPU a loop over them on the host is a round trip of x or y through the host every step. A View
// smaller than a page (a scalar result) holds no whole page and stays open.
struct Owned {
  std::atomic<std::uintptr_t> begin{0}, end{0};  // whole pages; begin 0: a free slot
};
std::array<Owned, 64> owned{};               // a step that makes more Views leaves the rest unguarded
std::atomic<long> owned_touched_outside{0};  // faults: the step's host code touched a View it made between kernels
bool owned_holds(const void* a) {
  const auto p = reinterpret_cast<std::uintptr_t>(a);
  return std::any_of(owned.begin(), owned.end(), [p](const Owned& o) { return p >= o.begin && p < o.end; });
}
void open_owned(int prot) {
  for (const auto& o : owned) {
    const std::uintptr_t b = o.begin, e = o.end;
    if (b != 0) mprotect(reinterpret_cast<void*>(b), e - b, prot);
  }
}
std::atomic<bool> guarding{false}, in_kernel{false};
std::atomic<long> touched_outside{0};               // faults: the step's host code touched x or y between kernels
std::atomic<long> kernel_pages{0};                  // pages of x and y the running kernel touched
std::array<std::atomic<long>, 8> kernel_threads{};  // the threads (ids) that touched them, 0: none
long serial_kernels = 0;                            // kernels that swept half of x's pages or more on one thread alone
struct sigaction previous_segv {};
static_assert(std::atomic<long>::is_always_lock_free, "counted in a signal handler");

void open_pages(bool open) {
  const int prot = open ? PROT_READ | PROT_WRITE : PROT_NONE;
  mprotect(guarded_x.base, guarded_x.bytes, prot);
  mprotect(guarded_y.base, guarded_y.bytes, prot);
  open_owned(prot);
}
void note_thread(long tid) {
  for (auto& slot : kernel_threads) {
    long seen = 0;
    if (slot.compare_exchange_strong(seen, tid) || seen == tid) return;
  }
}
long threads_noted() {
  long n = 0;
  for (const auto& slot : kernel_threads) n += slot.load() != 0 ? 1 : 0;
  return n;
}
void on_fault(int, siginfo_t* info, void*) {
  void* at = info->si_addr;
  const bool harness = guarded_x.holds(at) || guarded_y.holds(at);
  if (guarding.load() && (harness || owned_holds(at))) {
    if (in_kernel.load()) {  // a kernel's first touch of this page: note the thread, open the page
      if (harness) {
        kernel_pages.fetch_add(1);
        note_thread(static_cast<long>(syscall(SYS_gettid)));
      }
      mprotect(reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(at) & ~(page_bytes - 1)), page_bytes,
               PROT_READ | PROT_WRITE);
      return;
    }
    (harness ? touched_outside : owned_touched_outside).fetch_add(1);
    open_pages(true);  // the faulting access runs again, now allowed
    return;
  }
  sigaction(SIGSEGV, &previous_segv, nullptr);  // not the guard's: it faults again, under the old handler
}
void kernel_begins() {
  if (!guarding.load()) return;
  open_pages(false);  // closed again, should a plain loop have opened them
  kernel_pages.store(0);
  for (auto& slot : kernel_threads) slot.store(0);
  in_kernel.store(true);
}
void kernel_ends(uint64_t) {
  if (!guarding.load()) return;
  in_kernel.store(false);
  if (kernel_pages.load() * page_bytes >= guarded_x.bytes / 2 && threads_noted() == 1) ++serial_kernels;
  open_pages(false);
}
void copy_begins(Kokkos::Tools::SpaceHandle, const char*, const void*, Kokkos::Tools::SpaceHandle, const char*,
                 const void*, uint64_t) {
  if (guarding.load()) open_pages(true);
}
void copy_ends() {
  if (guarding.load()) open_pages(false);
}
void allocated(Kokkos::Tools::SpaceHandle, const char*, const void* ptr, uint64_t size) {
  if (in_step == 0 || in_kernel.load()) return;
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t begin = (at + page_bytes - 1) & ~(page_bytes - 1), end = (at + size) & ~(page_bytes - 1);
  if (end <= begin) return;
  for (auto& o : owned) {
    if (o.begin != 0) continue;
    o.end = end;
    o.begin = begin;
    if (guarding.load()) mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_NONE);
    return;
  }
}
void deallocated(Kokkos::Tools::SpaceHandle, const char*, const void* ptr, uint64_t size) {
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  for (auto& o : owned) {
    const std::uintptr_t b = o.begin, e = o.end;
    if (b == 0 || b < at || e > at + size) continue;
    mprotect(reinterpret_cast<void*>(b), e - b, PROT_READ | PROT_WRITE);  // open before Kokkos frees it
    o.begin = 0;
    o.end = 0;
  }
}
void scan_begins(const char*, const uint32_t, uint64_t* id) {
  *id = 0;
  kernel_begins();
}

void count_kernel(const char* name, const uint32_t device_id, uint64_t* id) {
  *id = 0;
  kernel_begins();
  if (kokkos_own(name)) return;
  ++kernels_launched;
  if (space_of(device_id) != expected_space) ++kernels_elsewhere;
}
void count_reduction(const char* name, const uint32_t device_id, uint64_t* id) {
  if (!kokkos_own(name)) ++reductions_launched;
  count_kernel(name, device_id, id);
}

double initial(int i, int n) {
  return std::sin(3.0 * i / n) + ((i * 7919 + static_cast<int>(lab::seed() % 101)) % 101) / 101.0;
}

// The reference: plain loops, the same arithmetic.
std::vector<double> reference(int n, int steps, double c, double* change) {
  std::vector<double> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = y[i] = initial(i, n);
  for (int s = 0; s < steps; ++s) {
    *change = 0;
    for (int i = 1; i < n - 1; ++i) {
      y[i] = x[i] + c * (x[i - 1] - 2.0 * x[i] + x[i + 1]);
      *change = std::max(*change, std::fabs(y[i] - x[i]));
    }
    std::swap(x, y);
  }
  return x;
}

// One step of Space under the guard (see Pages) on n points: the faults its host code took
// between kernels, and whether it matched the plain loops.
struct Guarded {
  long touched = 0, owned = 0, serial = 0;  // faults between kernels on x or y, on step()'s own Views;
  bool same = false;                        // kernels that swept x or y on one thread
};

template <class Space>
Guarded guarded_step(int n, double c) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = (sizeof(double) * n + page - 1) / page * page;
  void* px = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* py = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (px == MAP_FAILED || py == MAP_FAILED) throw std::runtime_error("lab 6's guard could not map its pages");
  auto* x = static_cast<double*>(px);
  auto* y = static_cast<double*>(py);
  for (int i = 0; i < n; ++i) x[i] = y[i] = initial(i, n);
  guarded_x = {px, bytes};
  guarded_y = {py, bytes};
  struct sigaction act {};
  act.sa_sigaction = on_fault;
  act.sa_flags = SA_SIGINFO;
  sigemptyset(&act.sa_mask);
  sigaction(SIGSEGV, &act, &previous_segv);
  page_bytes = page;
  const long before = touched_outside.load(), owned_before = owned_touched_outside.load();
  const long serial_before = serial_kernels;
  open_pages(false);
  guarding.store(true);
  const double change = step_in<Space>(Kokkos::View<const double*>(x, n), Kokkos::View<double*>(y, n), c);
  guarding.store(false);
  open_pages(true);
  sigaction(SIGSEGV, &previous_segv, nullptr);
  Guarded g;
  g.touched = touched_outside.load() - before;
  g.owned = owned_touched_outside.load() - owned_before;
  g.serial = serial_kernels - serial_before;
  double ref_change = 0;
  const std::vector<double> ref = reference(n, 1, c, &ref_change);  // after one step: the step's y
  g.same = change == ref_change && std::memcmp(y, ref.data(), sizeof(double) * n) == 0;
  guarded_x = guarded_y = Pages{};
  munmap(px, bytes);
  munmap(py, bytes);
  return g;
}

struct Backend {
  double seconds = 0;
  long kernels = 0, reductions = 0, elsewhere = 0;  // launched in the timed steps; in another space
  long touched = 0;                                 // the guarded step's touches of x and y between kernels
  long owned = 0;                                   // and of the Views step() made
  long serial = 0;                                  // its kernels that swept x or y on one thread alone
  bool verified = false;
  lab::Digest answer;  // what it computed: the last step's points and largest change
};

template <class Space>
Backend run_on(int n, int steps, double c, const std::vector<double>& ref, double ref_change, double first_change) {
  expected_space = static_cast<uint32_t>(Kokkos::Tools::Experimental::DeviceTypeTraits<Space>::id);
  Kokkos::View<double*> x("x", n), y("y", n);
  for (int i = 0; i < n; ++i) x(i) = y(i) = initial(i, n);
  double change = step_in<Space>(x, y, c);  // warm-up, untimed: start the threads, touch the pages
  // Untimed too: one step on the negated data. The largest |y(i) - x(i)| is the same for both, so a
  // change that keeps its sign (the largest y(i) - x(i)) matches the plain loops on both only on a tie.
  bool both_signs = change == first_change;
  for (int i = 0; i < n; ++i) x(i) = y(i) = -initial(i, n);
  both_signs = both_signs && step_in<Space>(x, y, c) == first_change;
  for (int i = 0; i < n; ++i) x(i) = y(i) = initial(i, n);
  const long before = kernels_launched, reductions_before = reductions_launched, elsewhere_before = kernels_elsewhere;
  Kokkos::fence();
  const double t0 = MPI_Wtime();
  for (int s = 0; s < steps; ++s) {
    change = step_in<Space>(x, y, c);
    std::swap(x, y);
  }
  Kokkos::fence();
  Backend b;
  b.seconds = MPI_Wtime() - t0;
  b.kernels = kernels_launched - before;
  b.reductions = reductions_launched - reductions_before;
  b.elsewhere = kernels_elsewhere - elsewhere_before;
  const Guarded guarded = guarded_step<Space>(std::min(n, 1 << 16), c);  // untimed, after the timed steps
  b.touched = guarded.touched;
  b.owned = guarded.owned;
  b.serial = guarded.serial;
  b.verified =
      both_signs && guarded.same && change == ref_change && std::memcmp(x.data(), ref.data(), sizeof(double) * n) == 0;
  b.answer.add(x.data(), sizeof(double) * n).add(&change, sizeof change);
  return b;
}

struct Options {
  int n = 1 << 23, steps = 20;

  void add_to(CLI::App& app) {
    app.description("Lab 6: a diffusion step in Kokkos, Serial and OpenMP backends (your smooth.hpp)");
    app.add_option("--n", n, "points")->check(CLI::Range(3, 1 << 28));
    app.add_option("--steps", steps, "steps")->check(CLI::Range(1, 100000));
  }
};

int run(const lab::World& w, const Options& o) {
  if (w.size != 1) throw std::invalid_argument("lab 6 runs one rank: mpirun -np 1 (threads from OMP_NUM_THREADS)");
  Kokkos::ScopeGuard kokkos;
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(count_kernel);
  Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(count_reduction);
  Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(scan_begins);
  Kokkos::Tools::Experimental::set_end_parallel_for_callback(kernel_ends);
  Kokkos::Tools::Experimental::set_end_parallel_reduce_callback(kernel_ends);
  Kokkos::Tools::Experimental::set_end_parallel_scan_callback(kernel_ends);
  Kokkos::Tools::Experimental::set_begin_deep_copy_callback(copy_begins);
  Kokkos::Tools::Experimental::set_end_deep_copy_callback(copy_ends);
  Kokkos::Tools::Experimental::set_allocate_data_callback(allocated);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(deallocated);
  page_bytes = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const double c = 0.25;
  double ref_change = 0;
  const std::vector<double> ref = reference(o.n, o.steps, c, &ref_change);
  double first_change = 0;  // the largest change of the first step
  reference(o.n, 1, c, &first_change);
  const Backend serial = run_on<Kokkos::Serial>(o.n, o.steps, c, ref, ref_change, first_change);
  const Backend omp = run_on<Kokkos::OpenMP>(o.n, o.steps, c, ref, ref_change, first_change);
  const int threads = Kokkos::OpenMP::impl_thread_pool_size();
  std::printf("smooth: %d points, %d steps: Serial %.3f s (%ld kernels), OpenMP with %d threads %.3f s (%ld kernels)\n",
              o.n, o.steps, serial.seconds, serial.kernels, threads, omp.seconds, omp.kernels);
  const bool ok = serial.verified && omp.verified;
  return lab::finish(w, "06-kokkos", ok,
                     {{"n", o.n},
                      {"steps", o.steps},
                      {"threads", threads},
                      {"serial_s", serial.seconds},
                      {"openmp_s", omp.seconds},
                      {"serial_kernels", serial.kernels},
                      {"openmp_kernels", omp.kernels},
                      {"openmp_reductions", omp.reductions},
                      {"openmp_kernels_elsewhere", omp.elsewhere},
                      {"serial_kernels_elsewhere", serial.elsewhere},
                      {"openmp_touched_outside", omp.touched},
                      {"openmp_owned_touched_outside", omp.owned},
                      {"serial_owned_touched_outside", serial.owned},
                      {"openmp_serial_kernels", omp.serial},
                      {"serial_touched_outside", serial.touched},
                      {"serial_verified", serial.verified},
                      {"openmp_verified", omp.verified},
                      {"answer", serial.answer.hex() + omp.answer.hex()}},
                     "both backends match the plain loops bit for bit",
                     std::string("differs from the plain loops: ") + (serial.verified ? "" : "Serial ") +
                         (omp.verified ? "" : "OpenMP"));
}

}  // namespace
}  // namespace smooth

PXQ_LAB_MAIN(smooth, MPI_THREAD_FUNNELED)
