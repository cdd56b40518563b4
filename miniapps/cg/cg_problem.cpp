// NAS CG's problem set-up, rewritten for pxq: class table, process grid, matrix generator.
// The grid arithmetic follows NAS's 1-based formulas and converts to 0-based at the end.
#include "cg_problem.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

#include "pxq/common/huge_array.hpp"
#include "pxq/common/nas_setup.hpp"
#include "pxq/kernels/nas_random.hpp"

namespace pxq::cg {
namespace {

constexpr std::array<CgClass, 5> kClasses{{
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
    {'B', 75000, 13, 75, 60.0, 22.712745482631},
    {'C', 150000, 15, 75, 110.0, 28.973605592845},
}};

// NAS's split of [1, naa] into `parts` near-equal pieces, the first (naa mod parts) one
// longer; returns the 1-based first index and the size of piece `index`.
void split(int naa, int parts, int index, int& first, int& size) {
  const int extra = naa - naa / parts * parts;
  if (index < extra) {
    size = naa / parts + 1;
    first = index * size + 1;
  } else {
    size = naa / parts;
    first = extra * (size + 1) + (index - extra) * size + 1;
  }
}

int grid_cols(int nprocs) { return 1 << ((common::log2_floor(nprocs) + 1) / 2); }

// Every process keeps at least one column (with npcols = 2 nprows, one of each half).
bool grid_fits(int na, int nprocs) {
  const int npcols = grid_cols(nprocs);
  const int nprows = nprocs / npcols;
  return npcols == nprows ? na / npcols >= 1 : na / (npcols / 2) >= 2;
}

}  // namespace

const CgClass& cg_class(const std::string& name) { return common::find_nas_class(kClasses, name); }

double nas_operation_count(const CgClass& c) {
  const double nz = static_cast<double>(c.nonzer) * (c.nonzer + 1);
  return 2.0 * c.niter * c.na * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0);
}

namespace {

// This rank's rows and columns, 1-based and inclusive, as NAS's setup_proc_info/setup_submatrix_info.
struct Bounds {
  int firstrow = 0, lastrow = 0, firstcol = 0, lastcol = 0;
};

Bounds block_bounds(int na, const CgGrid& g) {
  Bounds b;
  int row_size = 0, col_size = 0;
  if (na / g.npcols * g.npcols == na) {
    col_size = na / g.npcols;
    b.firstcol = g.proc_col * col_size + 1;
    b.lastcol = b.firstcol - 1 + col_size;
    row_size = na / g.nprows;
    b.firstrow = g.proc_row * row_size + 1;
  } else {
    split(na, g.nprows, g.proc_row, b.firstrow, row_size);
    if (g.npcols == g.nprows) {
      split(na, g.npcols, g.proc_col, b.firstcol, col_size);
      b.lastcol = b.firstcol - 1 + col_size;
    } else {
      split(na, g.npcols / 2, g.proc_col / 2, b.firstcol, col_size);
      b.lastcol = b.firstcol - 1 + col_size;
      if (g.rank % 2 == 0) {
        b.lastcol = b.firstcol - 1 + (col_size - 1) / 2 + 1;
      } else {
        b.firstcol = b.firstcol + (col_size - 1) / 2 + 1;
        b.lastcol = b.firstcol - 1 + col_size / 2;
      }
    }
  }
  b.lastrow = b.firstrow - 1 + row_size;
  return b;
}

// The pairwise row-sum schedule (1-based send_start), as NAS's setup_submatrix_info.
void add_reduce_steps(CgGrid& g, int nrows, int send_start, int send_len) {
  const int me = g.rank;
  int l2npcols = 0;
  for (int i = g.npcols / 2; i > 0; i /= 2) ++l2npcols;
  std::vector<int> partner(static_cast<std::size_t>(l2npcols) + 1, 0);
  int div_factor = g.npcols;
  for (int i = 1; i <= l2npcols; ++i) {
    const int j = (g.proc_col + div_factor / 2) % div_factor + g.proc_col / div_factor * div_factor;
    partner[static_cast<std::size_t>(i)] = g.proc_row * g.npcols + j;
    div_factor /= 2;
  }
  for (int i = l2npcols; i >= 1; --i) {
    ReduceStep s;
    s.partner = partner[static_cast<std::size_t>(i)];
    if (g.nprows == g.npcols) {
      s.send_start = send_start;
      s.send_len = send_len;
      s.recv_len = nrows;
    } else {
      s.recv_len = send_len;
      if (i == l2npcols) {
        s.send_len = nrows - send_len;
        s.send_start = me % 2 == 0 ? send_start + send_len : 1;
      } else {
        s.send_len = send_len;
        s.send_start = send_start;
      }
    }
    s.recv_start = send_start;
    s.send_start -= 1;  // to 0-based
    s.recv_start -= 1;
    g.steps.push_back(s);
  }
  for (int i = 1; i <= l2npcols; ++i) g.scalar_partners.push_back(partner[static_cast<std::size_t>(i)]);
}

}  // namespace

CgGrid make_grid(int na, int nprocs, int rank) {
  common::require_power_of_two("cg", nprocs);
  CgGrid g;
  g.nprocs = nprocs;
  g.rank = rank;
  g.npcols = grid_cols(nprocs);
  g.nprows = nprocs / g.npcols;
  if (!grid_fits(na, nprocs)) {
    int largest = 1;
    while (grid_fits(na, largest * 2)) largest *= 2;
    throw std::invalid_argument("cg with " + std::to_string(na) + " rows cannot use " + std::to_string(nprocs) +
                                " processes (a process would own no " + "columns): use at most " +
                                std::to_string(largest));
  }
  g.proc_row = rank / g.npcols;
  g.proc_col = rank - g.proc_row * g.npcols;
  const int me = rank;
  const Bounds b = block_bounds(na, g);
  const int nrows = b.lastrow - b.firstrow + 1;
  int send_start = 1, send_len = nrows;
  if (g.npcols != g.nprows) {
    if (me % 2 == 0) {
      send_start = 1;
      send_len = (1 + nrows) / 2;
    } else {
      send_start = (1 + nrows) / 2 + 1;
      send_len = nrows / 2;
    }
  }
  g.exch_proc = g.npcols == g.nprows ? (me % g.nprows) * g.nprows + me / g.nprows
                                     : 2 * ((me / 2) % g.nprows * g.nprows + me / 2 / g.nprows) + me % 2;
  add_reduce_steps(g, nrows, send_start, send_len);
  g.row_begin = b.firstrow - 1;
  g.row_end = b.lastrow;
  g.col_begin = b.firstcol - 1;
  g.col_end = b.lastcol;
  g.send_start = send_start - 1;
  g.send_len = send_len;
  g.exch_recv_len = b.lastcol - b.firstcol + 1;
  return g;
}

namespace {

// Triples (row, column, value) in NAS's order, 1-based.
struct Triples {
  std::vector<std::int32_t> row, col;
  std::vector<double> val;
  void add(int r, int c, double v) {
    row.push_back(r);
    col.push_back(c);
    val.push_back(v);
  }
};

// sprnvc and vecset: nonzer distinct random positions in [1, n] with random values, then
// element `iouter` set to 0.5.
void sparse_vector(kernels::NasRandom& rng, int n, int nn1, int nonzer, int iouter, std::vector<char>& mark,
                   std::vector<int>& iv, std::vector<double>& v) {
  iv.clear();
  v.clear();
  while (static_cast<int>(iv.size()) < nonzer) {
    const double vecelt = rng.next();
    const double vecloc = rng.next();
    const int i = static_cast<int>(nn1 * vecloc) + 1;
    if (i > n || mark[static_cast<std::size_t>(i)]) continue;
    mark[static_cast<std::size_t>(i)] = 1;
    v.push_back(vecelt);
    iv.push_back(i);
  }
  for (int i : iv) mark[static_cast<std::size_t>(i)] = 0;
  bool set = false;
  for (std::size_t k = 0; k < iv.size(); ++k)
    if (iv[k] == iouter) {
      v[k] = 0.5;
      set = true;
    }
  if (!set) {
    iv.push_back(iouter);
    v.push_back(0.5);
  }
}

// makea: the sum of n scaled outer products v v^T plus the shifted diagonal, restricted
// to this rank's block.
Triples generate(const CgClass& c, const CgGrid& g) {
  const int n = c.na;
  const int firstrow = g.row_begin + 1, lastrow = g.row_end;
  const int firstcol = g.col_begin + 1, lastcol = g.col_end;
  kernels::NasRandom rng;
  rng.next();  // NAS draws zeta's first value before makea
  int nn1 = 1;
  while (nn1 < n) nn1 *= 2;
  double size = 1.0;
  const double ratio = std::pow(kRcond, 1.0 / static_cast<double>(n));
  Triples t;
  const double expected =
      static_cast<double>(n) * (c.nonzer + 1) * (c.nonzer + 1) / (static_cast<double>(g.nprows) * g.npcols);
  t.row.reserve(static_cast<std::size_t>(expected * 1.1) + 16);
  t.col.reserve(t.row.capacity());
  t.val.reserve(t.row.capacity());
  std::vector<char> mark(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int> iv;
  std::vector<double> v;
  for (int iouter = 1; iouter <= n; ++iouter) {
    sparse_vector(rng, n, nn1, c.nonzer, iouter, mark, iv, v);
    for (std::size_t a = 0; a < iv.size(); ++a) {
      const int jcol = iv[a];
      if (jcol < firstcol || jcol > lastcol) continue;
      const double scale = size * v[a];
      for (std::size_t b = 0; b < iv.size(); ++b)
        if (iv[b] >= firstrow && iv[b] <= lastrow) t.add(iv[b], jcol, v[b] * scale);
    }
    size *= ratio;
  }
  // rcond - shift on the diagonal bounds the smallest eigenvalue.
  for (int i = firstrow; i <= lastrow; ++i)
    if (i >= firstcol && i <= lastcol) t.add(i, i, kRcond - c.shift);
  return t;
}

// sparse: stable bucket sort by row, then duplicates summed in order of appearance.
kernels::CsrMatrix assemble(Triples t, int n, const CgGrid& g) {
  const int firstrow = g.row_begin + 1, firstcol = g.col_begin + 1;
  const int nrows = g.row_end - firstrow + 1;
  std::vector<std::int64_t> start(static_cast<std::size_t>(nrows) + 1, 0);
  for (int r : t.row) ++start[static_cast<std::size_t>(r - firstrow) + 1];
  for (int j = 0; j < nrows; ++j) start[j + 1] += start[j];
  std::vector<std::int32_t> sorted_col(t.col.size());
  std::vector<double> sorted_val(t.val.size());
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < t.row.size(); ++k) {
      const std::int64_t dst = next[static_cast<std::size_t>(t.row[k] - firstrow)]++;
      sorted_col[dst] = t.col[k];
      sorted_val[dst] = t.val[k];
    }
  }
  t = Triples{};
  kernels::CsrMatrix m;
  m.nrows = nrows;
  m.ncols = g.col_end - firstcol + 1;
  m.rowptr.assign(static_cast<std::size_t>(nrows) + 1, 0);
  common::reserve_huge(m.col, sorted_col.size());
  common::reserve_huge(m.val, sorted_val.size());
  std::vector<double> x(static_cast<std::size_t>(n) + 1, 0.0);
  std::vector<char> seen(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int> order;
  for (int j = 0; j < nrows; ++j) {
    order.clear();
    for (std::int64_t k = start[j]; k < start[j + 1]; ++k) {
      const std::size_t i = static_cast<std::size_t>(sorted_col[k]);
      x[i] += sorted_val[k];
      if (!seen[i] && x[i] != 0.0) {
        seen[i] = 1;
        order.push_back(static_cast<int>(i));
      }
    }
    for (int i : order) {
      const std::size_t ii = static_cast<std::size_t>(i);
      seen[ii] = 0;
      const double xi = x[ii];
      x[ii] = 0.0;
      if (xi != 0.0) {
        m.col.push_back(i - firstcol);
        m.val.push_back(xi);
      }
    }
    m.rowptr[static_cast<std::size_t>(j) + 1] = static_cast<std::int64_t>(m.val.size());
  }
  return m;
}

}  // namespace

kernels::CsrMatrix make_matrix(const CgClass& c, const CgGrid& g) { return assemble(generate(c, g), c.na, g); }

}  // namespace pxq::cg
