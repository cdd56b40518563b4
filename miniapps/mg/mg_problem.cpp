// NAS MG's problem set-up, rewritten for pxq: class table, process grid, levels, charges.
#include "mg_problem.hpp"

#include <algorithm>
#include <stdexcept>

#include "pxq/common/nas_setup.hpp"
#include "pxq/kernels/nas_random.hpp"

namespace pxq::mg {
namespace {

constexpr kernels::Stencil kSmootherA{{-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0}};
constexpr kernels::Stencil kSmootherB{{-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0, 0.0}};

const std::array<MgClass, 5> kClasses{{
    {'S', 32, 4, 5, kSmootherA, 0.5307707005734e-04},
    {'W', 128, 4, 7, kSmootherA, 0.6467329375339e-05},
    {'A', 256, 4, 8, kSmootherA, 0.2433365309069e-05},
    {'B', 256, 20, 8, kSmootherB, 0.1800564401355e-05},
    {'C', 512, 20, 9, kSmootherB, 0.5706732285740e-06},
}};

std::array<int, 3> split_processes(int nprocs) {
  const int l = common::log2_floor(nprocs);
  const int dx = l / 3;
  const int dy = (l - dx) / 2;
  return {1 << dx, 1 << dy, nprocs >> (dx + dy)};
}

bool fits(int nx, int nprocs) {
  for (int p : split_processes(nprocs))
    if (p > nx) return false;
  return true;
}

// Keeps the `count` best candidates, best first, by `better`.
template <class Better>
void keep_best(std::vector<Candidate>& best, Candidate c, std::size_t count, Better better) {
  if (best.size() == count && !better(c, best.back())) return;
  auto pos = std::upper_bound(best.begin(), best.end(), c, better);
  best.insert(pos, c);
  if (best.size() > count) best.pop_back();
}

bool larger(const Candidate& a, const Candidate& b) {
  return a.value > b.value || (a.value == b.value && a.index < b.index);
}
bool smaller(const Candidate& a, const Candidate& b) {
  return a.value < b.value || (a.value == b.value && a.index < b.index);
}

}  // namespace

const MgClass& mg_class(const std::string& name) { return common::find_nas_class(kClasses, name); }

double nas_operation_count(const MgClass& c) { return 58.0 * c.nit * static_cast<double>(c.nx) * c.nx * c.nx; }

ProcGrid make_proc_grid(const MgClass& c, int nprocs, int rank) {
  common::require_power_of_two("mg", nprocs);
  if (!fits(c.nx, nprocs)) {
    int largest = 1;
    while (fits(c.nx, largest * 2)) largest *= 2;
    throw std::invalid_argument("mg class " + std::string(1, c.name) + " (" + std::to_string(c.nx) +
                                " points per axis) cannot use " + std::to_string(nprocs) +
                                " processes (a process would own no points): use at most " + std::to_string(largest));
  }
  ProcGrid g;
  g.nprocs = nprocs;
  g.rank = rank;
  g.pi = split_processes(nprocs);
  g.idi = {rank % g.pi[0], (rank / g.pi[0]) % g.pi[1], rank / (g.pi[0] * g.pi[1])};
  return g;
}

std::vector<Level> make_levels(const MgClass& c, const ProcGrid& g) {
  std::vector<Level> levels(static_cast<std::size_t>(c.lt) + 1);
  for (int k = c.lt; k >= 1; --k) {
    Level& L = levels[static_cast<std::size_t>(k)];
    L.k = k;
    L.ng = c.nx >> (c.lt - k);
    L.distributed = true;
    for (int ax = 0; ax < 3; ++ax)
      if (L.ng < g.pi[static_cast<std::size_t>(ax)]) L.distributed = false;
    std::array<int, 3> n{};
    for (std::size_t ax = 0; ax < 3; ++ax) {
      if (L.distributed) {
        L.extent[ax] = L.ng / g.pi[ax];
        L.offset[ax] = g.idi[ax] * L.extent[ax];
        std::array<int, 3> lo = g.idi, hi = g.idi;
        lo[ax] = (g.idi[ax] - 1 + g.pi[ax]) % g.pi[ax];
        hi[ax] = (g.idi[ax] + 1) % g.pi[ax];
        L.neighbours.lower[ax] = g.rank_of(lo);
        L.neighbours.upper[ax] = g.rank_of(hi);
      } else {
        L.extent[ax] = L.ng;
        L.offset[ax] = 0;
        L.neighbours.lower[ax] = g.rank;
        L.neighbours.upper[ax] = g.rank;
      }
      n[ax] = L.extent[ax] + 2;
    }
    L.box = kernels::Box{n[0], n[1], n[2]};
  }
  return levels;
}

Extremes local_extremes(const MgClass& c, const Level& top) {
  Extremes ex;
  const std::int64_t nx = c.nx;
  for (int i3 = 0; i3 < top.extent[2]; ++i3)
    for (int i2 = 0; i2 < top.extent[1]; ++i2) {
      const std::int64_t first =
          top.offset[0] + nx * (top.offset[1] + i2 + nx * static_cast<std::int64_t>(top.offset[2] + i3));
      kernels::NasRandom rng;
      rng.skip(static_cast<std::uint64_t>(first));
      for (int i1 = 0; i1 < top.extent[0]; ++i1) {
        const Candidate cand{rng.next(), first + i1};
        keep_best(ex.largest, cand, kCharges, larger);
        keep_best(ex.smallest, cand, kCharges, smaller);
      }
    }
  return ex;
}

Charges select_charges(const std::vector<Candidate>& largest, const std::vector<Candidate>& smallest) {
  std::vector<Candidate> big, small;
  for (const auto& c : largest) keep_best(big, c, kCharges, larger);
  for (const auto& c : smallest) keep_best(small, c, kCharges, smaller);
  Charges ch;
  for (const auto& c : big) ch.plus.push_back(c.index);
  for (const auto& c : small) ch.minus.push_back(c.index);
  return ch;
}

void place_charges(const Charges& ch, const Level& top, int nx, double* v) {
  std::fill(v, v + top.box.size(), 0.0);
  auto put = [&](std::int64_t m, double value) {
    const int g[3] = {static_cast<int>(m % nx), static_cast<int>((m / nx) % nx), static_cast<int>(m / nx / nx)};
    int local[3];
    for (int ax = 0; ax < 3; ++ax) {
      local[ax] = g[ax] - top.offset[static_cast<std::size_t>(ax)];
      if (local[ax] < 0 || local[ax] >= top.extent[static_cast<std::size_t>(ax)]) return;
    }
    v[top.box.at(local[0] + 1, local[1] + 1, local[2] + 1)] = value;
  };
  for (std::int64_t m : ch.minus) put(m, -1.0);
  for (std::int64_t m : ch.plus) put(m, +1.0);
}

}  // namespace pxq::mg
