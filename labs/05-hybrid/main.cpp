// Lab 5 harness: the heat proxy. Runs --iterations steps of your step(), then checks the grid
// bit for bit against a one-process computation on rank 0. Reports the time, the memory of
// all ranks together, the threads that relaxed rows and the MPI thread level.
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "heat.hpp"
#include "lab.hpp"

namespace heat {
namespace {

std::atomic<unsigned long> threads_seen{0};  // bit t: OpenMP thread t relaxed a row
// What the student's step() did, as the harness's own functions saw it: how often rows were
// relaxed (once a row a step is the lesson; every thread relaxing every row verifies too), how
// often the halos were exchanged and how often from a thread other than MPI's main one.
std::atomic<unsigned long> relax_calls{0}, exchange_calls{0}, exchange_off_main{0};
// The largest change of the rows relaxed since the step began, whichever threads relaxed them:
// step() must return exactly this. A `change` shared by the threads without a reduction loses
// some threads' maxima (a race), and only some steps show it, so every step is compared.
std::atomic<double> rows_largest{0.0};
// The halos: a row next to one (the first or the last) reads what exchange_halos receives, so it
// must not be relaxed while an exchange runs (`omp master` without a barrier after it, `single
// nowait`). The race probe slows its first exchanges down, so a relax that does not wait shows.
std::atomic<int> exchanging{0};
std::atomic<unsigned long> halo_rows_early{0};  // rows next to a halo relaxed while an exchange ran
bool slow_exchange = false;                     // the probe's slowed exchanges
long changes_wrong = 0;                         // steps whose step() returned another value than rows_largest
// Rows asked of relax_row() that are not the rank's (1..g.rows): a halo (0, g.rows + 1) or past
// it. Relaxing one would read outside the grid, so it is counted and named, never read.
std::atomic<unsigned long> rows_outside{0};
std::atomic<int> row_outside{0};  // the first such row asked
// How often each of the rank's rows was relaxed in the timed steps (index 1..g.rows): once a step
// each, or step() left a row out (a loop that stops one row short) and the grid differs there.
std::unique_ptr<std::atomic<unsigned long>[]> row_relaxes;

void note_change(double change) {
  double seen = rows_largest.load(std::memory_order_relaxed);
  while (change > seen && !rows_largest.compare_exchange_weak(seen, change, std::memory_order_relaxed)) {
  }
}

// The race probe, after the timed steps: step() on a small grid whose relax_row() relaxes
// nothing. It holds every thread until the team has arrived (or 200 us have passed), then
// returns a ticket, larger than any returned before it: the threads update `change` together,
// each with a larger value than it holds, so a `change` shared without a reduction (or a
// critical section) loses the largest ticket in some steps, where on the heat grid the race
// almost never shows. A reduction, a critical section or a per-thread array never loses one.
std::atomic<bool> probing{false};
std::atomic<unsigned> probe_arrived{0}, probe_round{0};
std::atomic<unsigned long> probe_ticket{0};

void meet_team(int team) {
  const unsigned round = probe_round.load(std::memory_order_acquire);
  if (probe_arrived.fetch_add(1, std::memory_order_acq_rel) + 1 >= static_cast<unsigned>(team)) {
    probe_arrived.store(0, std::memory_order_relaxed);
    probe_round.fetch_add(1, std::memory_order_release);
    return;
  }
  // A thread that never comes (rows not shared evenly) costs one wait, never a hang.
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (probe_round.load(std::memory_order_acquire) == round)
    if (std::chrono::steady_clock::now() > until) return;
}

double probe_row() {
  const int team = omp_get_num_threads();
  if (team > 1) meet_team(team);
  const double value = static_cast<double>(probe_ticket.fetch_add(1, std::memory_order_relaxed) + 1);
  note_change(value);
  return value;
}

double kappa_at(int i, int j) {
  return 0.1 + 0.1 * ((i * 7 + j * 13 + static_cast<int>(lab::seed() % 17)) % 17) / 17.0;
}
// The grid's edges are held: the top row at 1, the others at 0, so heat flows down from the top.
// Inside, the grid starts from a fixed uneven pattern (seeded), so every row changes from the
// first step on, the rows next to the ranks' halos too: a halo not exchanged (or exchanged at the
// wrong moment) changes the grid at once, where a grid starting at 0 would hide it until the
// heat arrived there.
double initial(int i, int j, int n) {
  if (i == 0) return 1.0;
  if (i == n - 1 || j == 0 || j == n - 1) return 0.0;
  return 0.5 * ((i * 31 + j * 17 + static_cast<int>(lab::seed() % 23)) % 23) / 23.0;
}

// The one update both the proxy and the reference use.
inline double relaxed(const double* up, const double* mid, const double* down, double k, int j) {
  return mid[j] + k * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0 * mid[j]);
}

Grid make_grid(const lab::World& w, int n) {
  Grid g;
  g.n = n;
  const int interior = n - 2, base = interior / w.size, extra = interior % w.size;
  g.rows = base + (w.rank < extra ? 1 : 0);
  g.first_row = 1 + w.rank * base + std::min(w.rank, extra);
  g.u.assign(static_cast<std::size_t>(g.rows + 2) * n, 0.0);
  for (int r = 0; r < g.rows + 2; ++r)
    for (int j = 0; j < n; ++j) g.u[static_cast<std::size_t>(r) * n + j] = initial(g.first_row - 1 + r, j, n);
  g.next = g.u;
  g.kappa.resize(static_cast<std::size_t>(n) * n);  // replicated: every rank reads the whole table
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) g.kappa[static_cast<std::size_t>(i) * n + j] = kappa_at(i, j);
  return g;
}

}  // namespace

double relax_row(Grid& g, int r) {
  if (r < 1 || r > g.rows) {
    if (rows_outside.fetch_add(1, std::memory_order_relaxed) == 0) row_outside.store(r, std::memory_order_relaxed);
    return 0.0;
  }
  if ((r == 1 || r == g.rows) && exchanging.load(std::memory_order_acquire) > 0)
    halo_rows_early.fetch_add(1, std::memory_order_relaxed);
  if (probing.load(std::memory_order_relaxed)) return probe_row();
  threads_seen.fetch_or(1ul << (omp_get_thread_num() % 64), std::memory_order_relaxed);
  relax_calls.fetch_add(1, std::memory_order_relaxed);
  if (row_relaxes) row_relaxes[r].fetch_add(1, std::memory_order_relaxed);
  const int n = g.n;
  const double* up = &g.u[static_cast<std::size_t>(r - 1) * n];
  const double* mid = up + n;
  const double* down = mid + n;
  const double* k = &g.kappa[static_cast<std::size_t>(g.first_row - 1 + r) * n];
  double* out = &g.next[static_cast<std::size_t>(r) * n];
  double change = 0;
  for (int j = 1; j < n - 1; ++j) {
    out[j] = relaxed(up, mid, down, k[j], j);
    change = std::max(change, std::fabs(out[j] - mid[j]));
  }
  note_change(change);
  return change;
}

void exchange_halos(Grid& g, const lab::World& w) {
  struct Exchanging {
    Exchanging() { exchanging.fetch_add(1, std::memory_order_acq_rel); }
    ~Exchanging() { exchanging.fetch_sub(1, std::memory_order_acq_rel); }
    Exchanging(const Exchanging&) = delete;
    Exchanging& operator=(const Exchanging&) = delete;
  } running;
  if (slow_exchange) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  exchange_calls.fetch_add(1, std::memory_order_relaxed);
  int main_thread = 0;
  MPI_Is_thread_main(&main_thread);
  if (!main_thread) exchange_off_main.fetch_add(1, std::memory_order_relaxed);
  const int n = g.n;
  const int above = w.rank > 0 ? w.rank - 1 : MPI_PROC_NULL;
  const int below = w.rank + 1 < w.size ? w.rank + 1 : MPI_PROC_NULL;
  double* u = g.u.data();
  MPI_Sendrecv(u + n, n, MPI_DOUBLE, above, 0, u + static_cast<std::size_t>(g.rows + 1) * n, n, MPI_DOUBLE, below, 0,
               w.comm, MPI_STATUS_IGNORE);
  MPI_Sendrecv(u + static_cast<std::size_t>(g.rows) * n, n, MPI_DOUBLE, below, 1, u, n, MPI_DOUBLE, above, 1, w.comm,
               MPI_STATUS_IGNORE);
}

namespace {

// The whole grid on one process, the plain way: what every decomposition must reproduce.
std::vector<double> reference(int n, int iterations, double* last_change) {
  std::vector<double> u(static_cast<std::size_t>(n) * n), next;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) u[static_cast<std::size_t>(i) * n + j] = initial(i, j, n);
  next = u;
  for (int it = 0; it < iterations; ++it) {
    double change = 0;
    for (int i = 1; i < n - 1; ++i) {
      const double* mid = &u[static_cast<std::size_t>(i) * n];
      for (int j = 1; j < n - 1; ++j) {
        next[static_cast<std::size_t>(i) * n + j] = relaxed(mid - n, mid, mid + n, kappa_at(i, j), j);
        change = std::max(change, std::fabs(next[static_cast<std::size_t>(i) * n + j] - mid[j]));
      }
    }
    std::swap(u, next);
    *last_change = change;
  }
  return u;
}

// 1: the grid and the last step's largest change are the one-process computation's; 0: the grid
// differs; 2: the grid matches but the largest change does not.
int verify(const lab::World& w, const Grid& g, int iterations, double change, lab::Digest* answer) {
  std::vector<int> counts(w.size), displs(w.size);
  const int mine = g.rows * g.n;
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, w.comm);
  std::vector<double> all;
  if (w.rank == 0) {
    for (int r = 1; r < w.size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    all.resize(static_cast<std::size_t>(g.n - 2) * g.n);
  }
  MPI_Gatherv(g.u.data() + g.n, mine, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, w.comm);
  int ok = 1;
  if (w.rank == 0) {
    double ref_change = 0;
    const std::vector<double> ref = reference(g.n, iterations, &ref_change);
    ok = std::memcmp(all.data(), ref.data() + g.n, all.size() * sizeof(double)) == 0 ? 1 : 0;
    if (ok == 1 && change != ref_change) ok = 2;
    answer->add_all(all.data(), all.size()).add(&change, sizeof change);  // what the ranks computed
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, w.comm);
  return ok;
}

// The race probe (see probe_row): its rank-steps, and those whose step() lost the largest ticket,
// summed over the ranks; none run where no rank has threads (a `change` no thread shares cannot
// race).
struct Probe {
  double steps = 0, lost = 0;
};
constexpr int kProbeSteps = 1000;
constexpr int kSlowExchanges = 50;  // the probe's first steps, whose exchanges take 2 ms more

Probe race_probe(const lab::World& w) {
  int threads = omp_get_max_threads(), most = 0;
  MPI_Allreduce(&threads, &most, 1, MPI_INT, MPI_MAX, w.comm);
  if (most < 2) return {};
  Grid g;  // four rows a thread, a few columns: the probe relaxes nothing
  g.n = 16;
  g.rows = 4 * most;
  g.first_row = 1;
  g.u.assign(static_cast<std::size_t>(g.rows + 2) * g.n, 0.0);
  g.next = g.u;
  probing.store(true);
  long lost = 0;
  for (int s = 0; s < kProbeSteps; ++s) {
    slow_exchange = s < kSlowExchanges;
    rows_largest.store(0.0);
    if (step(g, w) != rows_largest.load()) ++lost;
  }
  probing.store(false);
  slow_exchange = false;
  double mine = static_cast<double>(lost), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  return {static_cast<double>(kProbeSteps) * w.size, all};
}

// The rows step() relaxed fewer times than it ran steps, over the ranks, and one of them named
// as the student's loop sees it ("g.rows = 1023, the last, on rank 0").
struct Missed {
  double rows = 0;
  std::string example;
};

Missed rows_missed(const lab::World& w, const Grid& g, int iterations) {
  double mine = 0;
  int first = 0;
  for (int r = 1; r <= g.rows; ++r)
    if (row_relaxes[r].load() < static_cast<unsigned long>(iterations)) {
      mine += 1;
      if (first == 0) first = r;
    }
  row_relaxes.reset();  // the race probe after this relaxes another grid
  Missed out;
  MPI_Allreduce(&mine, &out.rows, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  // One example: the lowest rank that missed a row, with that row (a rank only, then its row).
  int who = first > 0 ? w.rank : INT_MAX, lowest = INT_MAX;
  MPI_Allreduce(&who, &lowest, 1, MPI_INT, MPI_MIN, w.comm);
  int row = w.rank == lowest ? first : 0, rows = w.rank == lowest ? g.rows : 0, named = 0, of = 0;
  MPI_Allreduce(&row, &named, 1, MPI_INT, MPI_MAX, w.comm);
  MPI_Allreduce(&rows, &of, 1, MPI_INT, MPI_MAX, w.comm);
  if (out.rows > 0)
    out.example = (named == of ? "g.rows = " + std::to_string(of) + ", the last," : std::to_string(named)) +
                  " on rank " + std::to_string(lowest);
  return out;
}

struct Options {
  int n = 2048, iterations = 40;

  void add_to(CLI::App& app) {
    app.description("Lab 5: the heat proxy, flat or hybrid (your heat_step.cpp)");
    app.add_option("--n", n, "grid points per side")->check(CLI::Range(16, 16384));
    app.add_option("--iterations", iterations, "steps")->check(CLI::Range(1, 100000));
  }
};

int run(const lab::World& w, const Options& o) {
  if (w.size > o.n - 2) throw std::invalid_argument("more ranks than grid rows: use a larger --n");
  Grid g = make_grid(w, o.n);
  const int threads = omp_get_max_threads();
  if (threads > 1 && w.provided < MPI_THREAD_FUNNELED && w.rank == 0)
    std::printf(
        "warning: %d OpenMP threads per rank, but MPI gave %s: ask for MPI_THREAD_FUNNELED before threads run (LAB "
        "1)\n",
        threads, lab::thread_level_name(w.provided));
  row_relaxes = std::make_unique<std::atomic<unsigned long>[]>(static_cast<std::size_t>(g.rows) + 2);
  for (int r = 0; r < g.rows + 2; ++r) row_relaxes[r].store(0);
  double change = 0;
  MPI_Barrier(w.comm);
  const double t0 = MPI_Wtime();
  for (int it = 0; it < o.iterations; ++it) {
    rows_largest.store(0.0);
    const double mine = step(g, w);
    if (mine != rows_largest.load()) ++changes_wrong;
    MPI_Allreduce(&mine, &change, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  }
  double seconds = MPI_Wtime() - t0, slowest = 0;
  const Missed missed = rows_missed(w, g, o.iterations);
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double rss = static_cast<double>(ru.ru_maxrss) * 1024.0, rss_all = 0;  // before verification
  MPI_Allreduce(&rss, &rss_all, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  // Per rank: relax_row calls per row per step, exchanges per step; their extremes over the ranks.
  const double per_row = static_cast<double>(relax_calls.load()) / (static_cast<double>(o.iterations) * g.rows);
  const double per_step = static_cast<double>(exchange_calls.load()) / o.iterations;
  double per_row_max = 0, per_row_min = 0, per_step_max = 0, per_step_min = 0, off_main = 0;
  MPI_Allreduce(&per_row, &per_row_max, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  MPI_Allreduce(&per_row, &per_row_min, 1, MPI_DOUBLE, MPI_MIN, w.comm);
  MPI_Allreduce(&per_step, &per_step_max, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  MPI_Allreduce(&per_step, &per_step_min, 1, MPI_DOUBLE, MPI_MIN, w.comm);
  const double off = static_cast<double>(exchange_off_main.load());
  MPI_Allreduce(&off, &off_main, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  double wrong = static_cast<double>(changes_wrong), wrong_all = 0;
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  const int used = __builtin_popcountl(threads_seen.load());
  int used_max = 0;
  MPI_Allreduce(&used, &used_max, 1, MPI_INT, MPI_MAX, w.comm);
  const Probe probe = race_probe(w);  // after the counts above: the probe's steps are not the run's
  double early = static_cast<double>(halo_rows_early.load()), early_all = 0;  // the run's and the probe's
  MPI_Allreduce(&early, &early_all, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  lab::Digest answer;
  const int grid = verify(w, g, o.iterations, change, &answer);
  double outside = static_cast<double>(rows_outside.load()), outside_all = 0;  // the run's and the probe's
  MPI_Allreduce(&outside, &outside_all, 1, MPI_DOUBLE, MPI_SUM, w.comm);
  int asked = rows_outside.load() > 0 ? row_outside.load() : INT_MIN, asked_any = INT_MIN;  // one row asked
  MPI_Allreduce(&asked, &asked_any, 1, MPI_INT, MPI_MAX, w.comm);
  const bool ok = grid == 1 && wrong_all == 0 && probe.lost == 0 && early_all == 0 && outside_all == 0;
  const std::string why =
      outside_all > 0
          ? "step() asked relax_row() for rows that are not the rank's " +
                std::to_string(static_cast<long>(outside_all)) + " time(s) (row " + std::to_string(asked_any) +
                ", for one): a rank relaxes its rows 1 to g.rows; row 0 and row g.rows + 1 are the halos "
                "exchange_halos fills, "
                "read by the rows next to them, never relaxed: loop `for (int r = 1; r <= g.rows; ++r)`"
      : early_all > 0
          ? "step() relaxed a row next to a halo while exchange_halos was still filling that halo, " +
                std::to_string(static_cast<long>(early_all)) +
                " time(s) (the race probe slows its first exchanges by 2 ms): the first and last rows read the "
                "halos, so every relax must wait for the exchange; call exchange_halos before the parallel loop, "
                "or put `#pragma omp barrier` after an `omp master` that calls it"
      : missed.rows > 0 ? "step() left " + std::to_string(static_cast<long>(missed.rows)) +
                              " of the ranks' rows unrelaxed in some steps (row " + missed.example +
                              ", for one): a rank relaxes every one of its rows, 1 to g.rows, once a step, so the grid "
                              "differs from the one-process computation: loop `for (int r = 1; r <= g.rows; ++r)`"
      : grid == 0     ? "the grid differs from the one-process computation"
      : wrong_all > 0 ? "step() returned another value than the largest change of the rows it relaxed in " +
                            std::to_string(static_cast<long>(wrong_all)) + " of " +
                            std::to_string(static_cast<long>(o.iterations) * w.size) +
                            " rank-steps: step() returns the largest |change| of its rows, a maximum (not a sum, nor "
                            "one thread's or the last row's); threads that share `change` without "
                            "`reduction(max : change)` overwrite each other's maxima (a race: the grid can still "
                            "match, and only some steps show it)"
      : probe.lost > 0
          ? "step() lost the largest change of its rows in " + std::to_string(static_cast<long>(probe.lost)) + " of " +
                std::to_string(static_cast<long>(probe.steps)) +
                " rank-steps of the race probe (the harness releases the threads together, each with a "
                "larger change than any before): threads update a shared `change` without "
                "`reduction(max : change)` or a critical section, a race the heat grid rarely shows"
          : "the largest change of the last step differs from the one-process computation";
  if (w.rank == 0)
    std::printf(
        "heat: %d ranks x %d threads (%d of them relaxed rows), %d x %d grid, %d steps: %.3f s, memory %.0f MiB\n",
        w.size, threads, used_max, o.n, o.n, o.iterations, slowest, rss_all / 1048576.0);
  return lab::finish(w, "05-hybrid", ok,
                     {{"ranks", w.size},
                      {"threads", threads},
                      {"threads_used", used_max},
                      {"thread_level", lab::thread_level_name(w.provided)},
                      {"thread_level_ok", used_max <= 1 || w.provided >= MPI_THREAD_FUNNELED},
                      {"relaxes_per_row_max", per_row_max},
                      {"relaxes_per_row_min", per_row_min},
                      {"exchanges_per_step_max", per_step_max},
                      {"exchanges_per_step_min", per_step_min},
                      {"exchanges_off_main", off_main},
                      {"changes_wrong", wrong_all},
                      {"race_probe_steps", probe.steps},
                      {"race_probe_lost", probe.lost},
                      {"halo_rows_early", early_all},
                      {"rows_outside", outside_all},
                      {"rows_missed", missed.rows},
                      {"n", o.n},
                      {"iterations", o.iterations},
                      {"seconds", slowest},
                      {"memory_bytes", rss_all},
                      {"table_bytes", static_cast<double>(g.kappa.size() * sizeof(double))},
                      {"answer", answer.hex()}},
                     "the grid matches the one-process computation bit for bit, and every step's largest change "
                     "its rows'",
                     why);
}

}  // namespace
}  // namespace heat

PXQ_LAB_MAIN(heat, heat::thread_level())
