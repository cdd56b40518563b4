// pxq-bench-tiling: every tiled kernel of the proxies over tile sizes and thread counts,
// with Google Benchmark. A program that reports (never a test): `pxq tune` runs it and picks
// the best tile per kernel; `pxq report tiles` plots its JSON.
//
//   ring_pass/tile:T/threads:N    the ring's K = 8 affine passes, tile by tile (64 MiB)
//   cg_update/tile:T/threads:N    CG's fused z += a p, r -= a q, r.r sweep (4 Mi doubles)
//   cg_spmv/tile:T/threads:N      CG's column-blocked SpMV, windows of T bytes of x
//   mg_resid/tile:T/threads:N     MG's residual in blocks of rows sized by T (130^3 box)
//   ft_pencils/tile:T/threads:N   FT's batch of y-line FFTs sized by T (256 x 256 x 64)
//   is_rank/tile:T/threads:N      IS's ranking of 2^23 keys below 2^19, windows of T bytes of counters
//
// Tiles are 4 KiB .. 64 MiB in powers of two (256 KiB, the reference, among them); threads 1
// .. the processors OpenMP sees. Every benchmark reports bytes/s (the traffic the kernel would
// make if each sweep streamed its arrays once) and items/s through Google Benchmark's counters,
// and all but ft_pencils buffer_bytes, the buffer the tile cuts: a tile at least that long is one
// window, the kernel's untiled loop, which `pxq tune` weighs the best tile against. Google
// Benchmark's standard flags all work (--benchmark_filter, --benchmark_format=json,
// --benchmark_repetitions, --benchmark_min_time, --benchmark_out).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pxq/kernels/backend.hpp"
#include "pxq/kernels/cg_ops.hpp"
#include "pxq/kernels/fft.hpp"
#include "pxq/kernels/ft_ops.hpp"
#include "pxq/kernels/is_ops.hpp"
#include "pxq/kernels/mg_ops.hpp"
#include "pxq/kernels/ring_update.hpp"
#include "pxq/kernels/sparse.hpp"

namespace {

using pxq::kernels::Backend;

constexpr std::size_t kMiB = std::size_t{1024} * 1024;

std::vector<std::int64_t> tile_sizes() {
  std::vector<std::int64_t> t;
  for (std::int64_t b = 4096; b <= 64 * static_cast<std::int64_t>(kMiB); b *= 2) t.push_back(b);
  return t;  // 256 KiB, the reference, is 2^18
}

std::size_t tile_of(const benchmark::State& s) { return static_cast<std::size_t>(s.range(0)); }
int threads_of(const benchmark::State& s) { return static_cast<int>(s.range(1)); }

// Every tile size by every thread count OpenMP sees, named as `pxq tune` reads them.
void tile_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"tile", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
  const int max_threads = std::max(1, omp_get_num_procs());
  for (const std::int64_t tile : tile_sizes())
    for (int t = 1; t <= max_threads; ++t) b->Args({tile, t});
}

// A kernel registers itself beside its body, named after its function: a new tile kernel is
// its function and this line (apps.def names it as an app's bench kernel).
#define PXQ_TILE_BENCH(fn) BENCHMARK(fn)->Apply(tile_args)

// ---- the ring: each of N threads owns a block and runs K passes over it tile by tile ----
void ring_pass(benchmark::State& state) {
  const int T = threads_of(state);
  const std::size_t elems = 64 * kMiB / sizeof(double) / static_cast<std::size_t>(T);
  const std::size_t tile = std::max<std::size_t>(1, std::min(elems, tile_of(state) / sizeof(double)));
  std::vector<std::vector<double>> storage(static_cast<std::size_t>(T));
#pragma omp parallel for num_threads(T) schedule(static, 1)
  for (int t = 0; t < T; ++t) storage[static_cast<std::size_t>(t)].assign(elems, 1.0);  // first touch by its thread
  std::vector<double*> blocks;
  blocks.reserve(storage.size());
  for (auto& s : storage) blocks.push_back(s.data());
  const pxq::kernels::RingParams p;
  for (auto _ : state) {
    for (std::size_t b = 0; b < elems; b += tile)
      pxq::kernels::ring_passes_workers("openmp", blocks.data(), T, b, std::min(elems, b + tile), p);
    benchmark::ClobberMemory();
  }
  const double per_iter = static_cast<double>(elems) * T * p.passes;
  state.SetBytesProcessed(static_cast<std::int64_t>(per_iter * 2 * sizeof(double)) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(per_iter) * state.iterations());
  state.counters["buffer_bytes"] = static_cast<double>(elems * sizeof(double));
}

PXQ_TILE_BENCH(ring_pass);

// ---- CG: the fused vector update and the column-blocked SpMV ----
void cg_update(benchmark::State& state) {
  const int T = threads_of(state);
  const std::size_t n = 4 * kMiB;
  std::vector<double> z(n, 0.0), r(n, 1.0), p(n, 0.5), q(n, 0.25);
  const auto ops = pxq::kernels::make_cg_ops("openmp", T, tile_of(state));
  double sink = 0.0;
  for (auto _ : state) {
    sink += ops->update_zr_norm(z.data(), r.data(), p.data(), q.data(), 1e-9, n);
    benchmark::DoNotOptimize(sink);
  }
  // z and r read and written, p and q read.
  state.SetBytesProcessed(static_cast<std::int64_t>(6 * n * sizeof(double)) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(n) * state.iterations());
  state.counters["buffer_bytes"] = static_cast<double>(n * sizeof(double));
}

// A random matrix shaped like NAS CG's class B block on 2 ranks: 75000 rows and columns,
// 40 entries per row spread over all columns (the source vector is 600 KB).
const pxq::kernels::CsrMatrix& cg_matrix() {
  static const pxq::kernels::CsrMatrix a = [] {
    pxq::kernels::CsrMatrix m;
    m.nrows = m.ncols = 75000;
    const int per_row = 40;
    std::mt19937 gen(7);
    std::uniform_int_distribution<int> col(0, m.ncols - 1);
    m.rowptr.push_back(0);
    for (int i = 0; i < m.nrows; ++i) {
      std::vector<int> cols(per_row);
      for (auto& c : cols) c = col(gen);
      std::sort(cols.begin(), cols.end());
      for (int c : cols) {
        m.col.push_back(c);
        m.val.push_back(1.0 / (1.0 + c));
      }
      m.rowptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    return m;
  }();
  return a;
}

PXQ_TILE_BENCH(cg_update);

void cg_spmv(benchmark::State& state) {
  const int T = threads_of(state);
  const auto& a = cg_matrix();
  const int window = static_cast<int>(std::max<std::size_t>(1, tile_of(state) / sizeof(double)));
  const pxq::kernels::BlockedCsr blocked = pxq::kernels::block_columns(a, window);
  const auto ops = pxq::kernels::make_cg_ops("openmp", T, tile_of(state));
  std::vector<double> x(static_cast<std::size_t>(a.ncols), 1.0), y(static_cast<std::size_t>(a.nrows));
  for (auto _ : state) {
    ops->spmv_blocked(blocked, x.data(), y.data());
    benchmark::ClobberMemory();
  }
  // Every entry (value and column index) once, x and y once.
  const double bytes = static_cast<double>(a.nnz()) * (sizeof(double) + sizeof(std::int32_t)) +
                       static_cast<double>(a.ncols + a.nrows) * sizeof(double);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(a.nnz()) * state.iterations());
  state.counters["windows"] = blocked.nblocks;
  state.counters["buffer_bytes"] = static_cast<double>(x.size() * sizeof(double));
}

PXQ_TILE_BENCH(cg_spmv);

// ---- MG: the residual r = v - A u on a 128^3 interior, blocks of rows sized by the tile ----
void mg_resid(benchmark::State& state) {
  const int T = threads_of(state);
  const pxq::kernels::Box b{130, 130, 130};
  std::vector<double> u(b.size(), 0.25), v(b.size(), 1.0), r(b.size(), 0.0);
  const pxq::kernels::Stencil a{{-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0}};
  const auto ops = pxq::kernels::make_mg_ops("openmp", T, tile_of(state));
  for (auto _ : state) {
    ops->resid(u.data(), v.data(), r.data(), b, a);
    benchmark::ClobberMemory();
  }
  const double interior = 128.0 * 128.0 * 128.0;
  state.SetBytesProcessed(static_cast<std::int64_t>(3 * interior * sizeof(double)) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(interior) * state.iterations());
  state.counters["rows_per_block"] = pxq::kernels::rows_per_block(tile_of(state), b.n1, 5, b.n2 - 2);
  state.counters["buffer_bytes"] = static_cast<double>(b.size() * sizeof(double));
}

PXQ_TILE_BENCH(mg_resid);

// ---- FT: y-line FFTs of length 256 over a 256 x 256 x 64 block, batches sized by the tile ----
void ft_pencils(benchmark::State& state) {
  const int T = threads_of(state);
  const int nx = 256, ny = 256, nz = 64;
  std::vector<pxq::kernels::Complex> x(static_cast<std::size_t>(nx) * ny * nz, {0.5, -0.25});
  const pxq::kernels::FftPlan plan(ny);
  std::vector<std::int64_t> elem(static_cast<std::size_t>(ny));
  for (int j = 0; j < ny; ++j) elem[static_cast<std::size_t>(j)] = static_cast<std::int64_t>(j) * nx;
  pxq::kernels::FftPass pass;
  pass.plan = &plan;
  pass.outer_count = nz;
  pass.line_count = nx;
  pass.src = pass.dst = {static_cast<std::int64_t>(nx) * ny, 1, elem.data()};
  const auto ops = pxq::kernels::make_ft_ops("openmp", T, tile_of(state));
  bool forward = true;
  for (auto _ : state) {
    pass.dir = forward ? pxq::kernels::FftDirection::forward : pxq::kernels::FftDirection::inverse;
    ops->fft(x.data(), x.data(), pass);
    // Forward then inverse scales by n: undo it now and then, outside the timing.
    if (!forward) {
      state.PauseTiming();
      for (auto& c : x) c /= static_cast<double>(ny);
      state.ResumeTiming();
    }
    forward = !forward;
    benchmark::ClobberMemory();
  }
  const double points = static_cast<double>(nx) * ny * nz;
  state.SetBytesProcessed(static_cast<std::int64_t>(2 * points * sizeof(pxq::kernels::Complex)) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(points) * state.iterations());
  // No buffer_bytes: one batch of every line is not FT's untiled loop (NAS's fftblock lines).
  state.counters["lines_per_batch"] = ops->batch_lines(ny, false);
}

PXQ_TILE_BENCH(ft_pencils);

// ---- IS: ranking 2^23 keys below 2^19 (class A on one rank), windows of counters sized by the tile ----
void is_rank(benchmark::State& state) {
  const int T = threads_of(state);
  const int shift = 9, buckets = 1024;
  std::vector<pxq::kernels::IsKey> keys(std::size_t{1} << 23), grouped(keys.size());
  std::mt19937 gen(271828);
  std::binomial_distribution<pxq::kernels::IsKey> near_middle(buckets << shift, 0.5);  // NAS's keys bunch mid-range
  for (auto& k : keys) k = std::min<pxq::kernels::IsKey>(near_middle(gen), (buckets << shift) - 1);
  std::vector<std::int32_t> counts(buckets), pop(std::size_t{buckets} << shift);
  const auto ops = pxq::kernels::make_is_ops("openmp", T, tile_of(state));
  ops->bucket_sort(keys.data(), keys.size(), shift, buckets, counts.data(), grouped.data());
  const std::vector<pxq::kernels::IsSegment> one{{grouped.data(), keys.size()}};
  for (auto _ : state) {
    ops->rank(one, 0, (buckets << shift) - 1, shift, pop.data());
    benchmark::ClobberMemory();
  }
  // Every key read once and its counter written once, every counter accumulated once.
  const double bytes = static_cast<double>(keys.size()) * 2 * sizeof(std::int32_t) +
                       2.0 * static_cast<double>(pop.size() * sizeof(std::int32_t));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(keys.size()) * state.iterations());
  state.counters["window_buckets"] = ops->window_buckets(0, (buckets << shift) - 1, shift);
  state.counters["buffer_bytes"] = static_cast<double>(pop.size() * sizeof(std::int32_t));
}

PXQ_TILE_BENCH(is_rank);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const int max_threads = std::max(1, omp_get_num_procs());
  benchmark::AddCustomContext("pxq_max_threads", std::to_string(max_threads));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
