// pxq-probe-bandwidth: STREAM's copy, scale, add and triad for 1..N active cores, as ranks
// (a layout PxQ: the first k ranks stream, the others wait) or as threads (a layout 1x1xT:
// k threads of one rank share the arrays, statically divided). Every worker streams its own
// --array bytes per array, so the memory traffic grows with the cores; the total bandwidth,
// the bandwidth per core and the saturation point (the fewest cores reaching 90% of the best
// total) are reported per kernel. With --kind, one of the access kinds of pxq/probes/kinds.hpp
// (gather, window, window64, update, stencil, restrict, fft) runs instead, as ranks, with its
// declared bytes and flops: the roofline's ceilings for phases that do not stream. A probe that reports; never a test.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pxq/comm/mpi_check.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/huge_array.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/probes/kinds.hpp"
#include "pxq/probes/memory.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace {

using pxq::common::fmt;
using pxq::probes::StreamKernel;

struct ProbeOptions {
  std::string array = "auto", kernels = "copy,scale,add,triad", kind;
  int repeat = 5;
  int sweeps = 1;         // passes over the arrays per timed repeat (small, cache-resident arrays)
  double fraction = 0.9;  // of the best total: saturation
};

void add_probe_options(pxq::cli::App& app, ProbeOptions& o) {
  app.add_option("--array", o.array, "bytes per array per core (default auto: 4 x the last-level cache)");
  app.add_option("--kernels", o.kernels,
                 "comma-separated: copy, scale, add, triad, update (in place) (default the first four)");
  app.add_option("--kind", o.kind,
                 std::string("an access kind instead of the STREAM kernels, as ranks: ") + pxq::probes::kind_names());
  app.add_option("--repeat", o.repeat, "timed passes per kernel and core count; the fastest counts (default 5)");
  app.add_option("--sweeps", o.sweeps,
                 "passes over the arrays per timed repeat, for arrays that fit in a cache (default 1)")
      ->range(1, 1 << 24);
  app.add_option("--saturation", o.fraction, "share of the best total that marks saturation (default 0.9)");
}

std::vector<StreamKernel> parse_kernels(const std::string& text) {
  std::vector<StreamKernel> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(pxq::probes::stream_kernel_named(item));
  if (out.empty()) throw std::invalid_argument("--kernels is empty: use copy, scale, add and/or triad");
  return out;
}

// Bytes per array per worker, checked with the options before any MPI work.
std::size_t check_options(const pxq::common::MpiWorld& w, const ProbeOptions& o, const pxq::common::Variant& v) {
  if (o.repeat < 1) throw std::invalid_argument("--repeat " + std::to_string(o.repeat) + ": use at least 1");
  if (!(o.fraction > 0 && o.fraction <= 1)) throw std::invalid_argument("--saturation must be within (0, 1]");
  if (v.tile.kind != pxq::tiling::TilePolicy::Kind::off)
    throw std::invalid_argument("the bandwidth probe streams whole arrays: use --tile off");
  if (!o.kind.empty() && !pxq::probes::is_kind(o.kind))
    throw std::invalid_argument("--kind " + o.kind + ": use " + pxq::probes::kind_names());
  if (!o.kind.empty() && v.threads > 1)
    throw std::invalid_argument("--kind runs its cores as ranks: use a layout 1xQ with one thread per rank");
  if (w.size > 1 && v.threads > 1)
    throw std::invalid_argument(
        "the bandwidth probe runs cores as ranks (layout 1xQ) or as threads (1x1xT), "
        "not both: use one rank per core or one rank with T threads");
  std::size_t bytes = 0;
  if (o.array == "auto") {  // STREAM's rule: each array at least 4 times the last-level cache
    const auto caches = pxq::tiling::discover_caches();
    const std::size_t llc = std::max({caches.l3.bytes, caches.l2.bytes, std::size_t{8} << 20});
    bytes = 4 * llc;
  } else {
    bytes = pxq::tiling::parse_bytes(o.array);
  }
  if (bytes / sizeof(double) < 1024)
    throw std::invalid_argument("--array " + o.array + ": use at least 8K (1024 doubles)");
  return bytes;
}

// best[kernel][k-1]: the fastest of the repeats of the slowest active worker, seconds.
using Best = std::vector<std::vector<double>>;

// The fastest of `repeat` timed passes (after one untimed, as in STREAM) of the slowest rank:
// each pass starts together, `timed` returns this rank's seconds (0 when it only waits).
template <class Timed>
double best_of(const pxq::common::MpiWorld& w, int repeat, Timed&& timed) {
  double best = 0;
  for (int r = 0; r < repeat + 1; ++r) {
    pxq::comm::check_mpi(MPI_Barrier(w.comm), "MPI_Barrier");
    const double mine = timed();
    double slowest = 0;
    pxq::comm::check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, w.comm), "MPI_Allreduce");
    if (r > 0) best = best == 0 ? slowest : std::min(best, slowest);
  }
  return best;
}

Best measure(const pxq::common::MpiWorld& w, const ProbeOptions& o, const std::vector<StreamKernel>& kernels,
             std::size_t n, bool threads_mode, int workers) {
  const std::size_t total_n = threads_mode ? n * static_cast<std::size_t>(workers) : n;
  // Each worker's share first-touched by the thread that streams it.
  // Huge-page arrays, as the ring's blocks: the probe measures what the proxies get.
  const auto a = pxq::common::huge_array(total_n, "an array"), b = pxq::common::huge_array(total_n, "an array"),
             c = pxq::common::huge_array(total_n, "an array");
#pragma omp parallel for schedule(static) num_threads(threads_mode ? workers : 1)
  for (int t = 0; t < (threads_mode ? workers : 1); ++t)
    for (std::size_t i = static_cast<std::size_t>(t) * n; i < static_cast<std::size_t>(t + 1) * n; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.0;
    }
  Best best(kernels.size(), std::vector<double>(static_cast<std::size_t>(workers), 0));
  for (int k = 1; k <= workers; ++k)
    for (std::size_t ki = 0; ki < kernels.size(); ++ki)
      best[ki][static_cast<std::size_t>(k - 1)] = best_of(w, o.repeat, [&] {
        if (threads_mode) {
          const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(k)
          {
            const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
            for (int s = 0; s < o.sweeps; ++s)
              pxq::probes::stream_pass(kernels[ki], a.get(), b.get(), c.get(), t * n, (t + 1) * n);
          }
          return omp_get_wtime() - t0;
        }
        if (w.rank >= k) return 0.0;
        const double t0 = MPI_Wtime();
        for (int s = 0; s < o.sweeps; ++s) pxq::probes::stream_pass(kernels[ki], a.get(), b.get(), c.get(), 0, n);
        return MPI_Wtime() - t0;
      });
  return best;
}

// One kernel's table rows (appended to `out`) and its record entry.
nlohmann::json report_kernel(std::ostringstream& out, StreamKernel kernel, const std::vector<double>& best,
                             std::size_t n, int sweeps, double fraction) {
  const int workers = static_cast<int>(best.size());
  std::vector<double> totals;
  for (int k = 1; k <= workers; ++k)
    totals.push_back(pxq::probes::stream_bytes(kernel, n) * sweeps * k / best[static_cast<std::size_t>(k - 1)] / 1e9);
  const bool scaling = pxq::probes::still_scaling(totals, fraction);
  const int sat = scaling ? 0 : pxq::probes::saturation_point(totals, fraction);
  const std::string name = pxq::probes::stream_name(kernel);
  nlohmann::json rows = nlohmann::json::array();
  for (int k = 1; k <= workers; ++k) {
    const double total = totals[static_cast<std::size_t>(k - 1)];
    const double eff = total / (k * totals[0]);
    out << " " << name << std::string(8 - name.size(), ' ') << fmt("%6.0f", k) << fmt("%12.1f", total)
        << fmt("%15.1f", total / k) << fmt("%11.0f", 100 * eff) << "%"
        << (k == sat && sat < workers ? "  <- saturation" : "") << "\n";
    rows.push_back({{"cores", k},
                    {"seconds", best[static_cast<std::size_t>(k - 1)]},
                    {"total_gbs", total},
                    {"per_core_gbs", total / k},
                    {"efficiency", eff}});
  }
  const double eff_last = totals.back() / (workers * totals[0]);
  if (scaling)
    out << " " << name << ": still scaling at " << workers << " cores (" << fmt("%.0f", 100 * eff_last)
        << "% efficiency): not saturated here\n";
  else if (sat == workers)
    out << " " << name << ": best with all " << workers << " cores, at " << fmt("%.0f", 100 * eff_last)
        << "% efficiency: starting to saturate\n";
  return {{"kernel", name},
          {"saturation", sat == 0 ? nlohmann::json(nullptr) : nlohmann::json(sat)},
          {"still_scaling", scaling},
          {"efficiency_at_max", eff_last},
          {"rows", rows}};
}

// --kind: the kind's kernel on 1..N ranks (the first k sweep, the others wait), the fastest of
// the repeats of the slowest active rank; rows of declared GB/s and GFlop/s in total.
int run_kind(const pxq::common::MpiWorld& w, const pxq::common::CommonOptions& co, const ProbeOptions& o,
             const pxq::common::Variant& variant, std::size_t bytes, const pxq::common::RunStart& start) {
  const auto kernel = pxq::probes::make_kind(o.kind, bytes);
  std::vector<double> best, declared;  // per k: seconds, and the bytes a sweep declares
  for (int k = 1; k <= w.size; ++k) {
    // The first k ranks, for a kind that communicates among them (the all-to-all).
    MPI_Comm busy = MPI_COMM_NULL;
    pxq::comm::check_mpi(MPI_Comm_split(w.comm, w.rank < k ? 0 : MPI_UNDEFINED, w.rank, &busy), "MPI_Comm_split");
    kernel->bind(busy);
    best.push_back(best_of(w, o.repeat, [&] {
      if (w.rank >= k) return 0.0;
      const double t0 = MPI_Wtime();
      for (int s = 0; s < o.sweeps; ++s) kernel->sweep();
      return MPI_Wtime() - t0;
    }));
    declared.push_back(kernel->bytes());
    kernel->bind(MPI_COMM_NULL);
    if (busy != MPI_COMM_NULL) MPI_Comm_free(&busy);
  }
  if (w.rank != 0) return pxq::common::kExitOk;
  std::ostringstream out;
  out << "\n Attainable rate of an access kind (" << o.kind << ", ranks)\n"
      << " Size            = " << pxq::tiling::format_bytes(bytes) << " per core asked, "
      << pxq::tiling::format_bytes(kernel->footprint()) << " swept, best of " << o.repeat << " (" << o.sweeps
      << " sweeps each)\n\n"
      << " cores  total GB/s  total GFlop/s  checksum\n";
  nlohmann::json rows = nlohmann::json::array();
  for (int k = 1; k <= w.size; ++k) {
    const double s = best[static_cast<std::size_t>(k - 1)];
    const double gbs = declared[static_cast<std::size_t>(k - 1)] * o.sweeps * k / s / 1e9,
                 gflops = kernel->flops() * o.sweeps * k / s / 1e9;
    out << fmt("%6.0f", k) << fmt("%12.2f", gbs) << fmt("%15.2f", gflops) << fmt("%10.3g", kernel->checksum()) << "\n";
    rows.push_back({{"cores", k}, {"seconds", s}, {"total_gbs", gbs}, {"total_gflops", gflops}});
  }
  out << "\n bytes and flops as the proxies' phases of this kind declare theirs (pxq/probes/kinds.hpp)\n";
  const nlohmann::json body = {
      {"size",
       {{"array_bytes", bytes},
        {"swept_bytes", kernel->footprint()},
        {"workers", w.size},
        {"as", "ranks"},
        {"repeat", o.repeat},
        {"sweeps", o.sweeps}}},
      {"kernels", nlohmann::json::array({{{"kernel", o.kind}, {"kind", true}, {"rows", rows}}})}};
  return pxq::common::finish_probe(w, co, variant, start, "probe-bandwidth", true, out.str(),
                                   pxq::common::start_notes(start), body);
}

int run(const pxq::common::MpiWorld& w, const pxq::common::CommonOptions& co, const ProbeOptions& o) {
  const auto kernels = parse_kernels(o.kernels);
  const pxq::common::Variant variant = pxq::common::resolve_variant(co);
  const std::size_t bytes = check_options(w, o, variant);
  const std::size_t n = bytes / sizeof(double);
  const pxq::common::RunStart start = pxq::common::start_run(w, co, variant, bytes, "");
  if (!o.kind.empty()) return run_kind(w, co, o, variant, bytes, start);
  const bool threads_mode = variant.threads > 1;
  const int workers = threads_mode ? variant.threads : w.size;
  const Best best = measure(w, o, kernels, n, threads_mode, workers);
  if (w.rank != 0) return pxq::common::kExitOk;

  const char* as = threads_mode ? "threads" : "ranks";
  std::ostringstream out;
  out << "\n Bandwidth per active core (STREAM kernels, " << as << ")\n"
      << " Array           = " << pxq::tiling::format_bytes(bytes) << " per array per core"
      << (o.array == "auto" ? " (4 x the last-level cache)" : "") << ", best of " << o.repeat
      << (o.sweeps > 1 ? " (" + std::to_string(o.sweeps) + " sweeps each)" : std::string()) << "\n"
      << " Cores           = 1.." << workers << " as " << as << "\n\n"
      << " kernel   cores  total GB/s  per core GB/s  efficiency\n";
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t ki = 0; ki < kernels.size(); ++ki)
    results.push_back(report_kernel(out, kernels[ki], best[ki], n, o.sweeps, o.fraction));
  out << "\n saturation: the fewest cores reaching " << fmt("%.0f", 100 * o.fraction)
      << "% of the best total, unless the last still scales that well; efficiency: total / (cores x one core's)\n"
      << " bytes as STREAM counts them (2 arrays for copy and scale, 3 for add and triad)\n";
  const nlohmann::json body = {{"size",
                                {{"array_bytes", bytes},
                                 {"workers", workers},
                                 {"as", as},
                                 {"repeat", o.repeat},
                                 {"sweeps", o.sweeps},
                                 {"saturation_fraction", o.fraction}}},
                               {"kernels", results}};
  return pxq::common::finish_probe(w, co, variant, start, "probe-bandwidth", true, out.str(),
                                   pxq::common::start_notes(start), body);
}

}  // namespace

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<ProbeOptions>(
      argc, argv, "pxq probe bandwidth: STREAM kernels on 1..N active cores, as ranks or threads",
      "pxq-probe-bandwidth", add_probe_options, run);
}
