// pxq-probe-collective: the variability of a collective. N back-to-back calls (default 2000)
// of MPI_Allreduce (or bcast, alltoall, barrier) on a message of --size bytes, every call
// timed on every rank; a call's time is the slowest rank's. Prints the median, p90/p95/p99,
// the max, the share of the total taken by the slowest 5% of calls and the clusters of call
// times; the record keeps every sample (the per-call maxima and each rank's own times).
// `pxq probe allreduce` runs it, optionally next to a background load, and plots it.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "pxq/comm/mpi_check.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/probes/stats.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace {

using pxq::common::fmt;

const std::vector<std::string> kOps{"allreduce", "bcast", "alltoall", "barrier"};

struct ProbeOptions {
  std::string op = "allreduce", size = "16K";
  long calls = 2000, warmup = 50;
  double gap = 1.5, tail = 0.05;  // cluster gap ratio; the slowest share reported
};

void add_probe_options(pxq::cli::App& app, ProbeOptions& o) {
  app.add_option("--op", o.op, "allreduce (doubles, sum), bcast, alltoall (--size per peer) or barrier");
  app.add_option("--size", o.size, "message size, e.g. 8, 16K, 1M (default 16K)");
  app.add_option("--calls", o.calls, "timed calls (default 2000)");
  app.add_option("--warmup", o.warmup, "untimed calls first (default 50)");
  app.add_option("--cluster-gap", o.gap, "split clusters where a call takes over this many times the previous");
  app.add_option("--tail", o.tail, "the slowest share of calls whose share of the time is reported (0.05)");
}

struct Buffers {
  std::vector<char> send, recv;
};

// One call of the collective.
void call(const std::string& op, Buffers& b, std::size_t bytes, MPI_Comm comm) {
  const int n = static_cast<int>(bytes);
  if (op == "allreduce") {
    pxq::comm::check_mpi(MPI_Allreduce(b.send.data(), b.recv.data(), n / 8, MPI_DOUBLE, MPI_SUM, comm),
                         "MPI_Allreduce");
  } else if (op == "bcast") {
    pxq::comm::check_mpi(MPI_Bcast(b.send.data(), n, MPI_BYTE, 0, comm), "MPI_Bcast");
  } else if (op == "alltoall") {
    pxq::comm::check_mpi(MPI_Alltoall(b.send.data(), n, MPI_BYTE, b.recv.data(), n, MPI_BYTE, comm), "MPI_Alltoall");
  } else {
    pxq::comm::check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  }
}

// The message size, checked with the options before any MPI work.
std::size_t check_options(const ProbeOptions& o) {
  if (std::find(kOps.begin(), kOps.end(), o.op) == kOps.end())
    throw std::invalid_argument("unknown collective '" + o.op + "': use allreduce, bcast, alltoall or barrier");
  if (o.calls < 1) throw std::invalid_argument("--calls must be at least 1, got " + std::to_string(o.calls));
  if (o.warmup < 0) throw std::invalid_argument("--warmup must be >= 0");
  if (!(o.gap > 1.0)) throw std::invalid_argument("--cluster-gap must be > 1 (a ratio between call times)");
  if (!(o.tail > 0.0 && o.tail <= 1.0)) throw std::invalid_argument("--tail must be within (0, 1]");
  const std::size_t bytes = o.op == "barrier" ? 0 : pxq::tiling::parse_bytes(o.size);
  if (o.op == "allreduce" && bytes % 8 != 0)
    throw std::invalid_argument("--size " + o.size +
                                " is not a whole number of doubles: allreduce sums doubles; "
                                "use a multiple of 8 bytes");
  if (bytes > static_cast<std::size_t>(INT32_MAX))
    throw std::invalid_argument("--size " + o.size + " exceeds MPI's int count: use at most 2G - 1");
  return bytes;
}

// Every rank's time of every call, seconds.
std::vector<double> measure(const pxq::common::MpiWorld& w, const ProbeOptions& o, std::size_t bytes) {
  const std::size_t per_rank = o.op == "alltoall" ? bytes * static_cast<std::size_t>(w.size) : bytes;
  Buffers b{std::vector<char>(std::max<std::size_t>(8, per_rank), 1),
            std::vector<char>(std::max<std::size_t>(8, per_rank), 0)};
  for (long i = 0; i < o.warmup; ++i) call(o.op, b, bytes, w.comm);
  std::vector<double> mine(static_cast<std::size_t>(o.calls));
  MPI_Barrier(w.comm);
  for (long i = 0; i < o.calls; ++i) {
    const double t0 = MPI_Wtime();
    call(o.op, b, bytes, w.comm);
    mine[static_cast<std::size_t>(i)] = MPI_Wtime() - t0;
  }
  return mine;
}

struct Stats {
  double total, median, p90, p95, p99, max, share;
  std::vector<pxq::probes::Cluster> clusters;
};

Stats stats_of(const std::vector<double>& slowest, const ProbeOptions& o) {
  return {std::accumulate(slowest.begin(), slowest.end(), 0.0),
          pxq::probes::percentile(slowest, 50),
          pxq::probes::percentile(slowest, 90),
          pxq::probes::percentile(slowest, 95),
          pxq::probes::percentile(slowest, 99),
          *std::max_element(slowest.begin(), slowest.end()),
          pxq::probes::tail_share(slowest, o.tail),
          pxq::probes::clusters_1d(slowest, o.gap)};
}

std::string report(const Stats& st, const ProbeOptions& o, std::size_t bytes, int ranks,
                   const pxq::common::LayoutFacts& facts) {
  const double us = 1e6;
  std::ostringstream out;
  out << "\n Collective variability\n"
      << " Collective      = MPI_"
      << (o.op == "allreduce"  ? "Allreduce"
          : o.op == "bcast"    ? "Bcast"
          : o.op == "alltoall" ? "Alltoall"
                               : "Barrier")
      << (o.op == "barrier" ? "" : ", " + pxq::tiling::format_bytes(bytes) + (o.op == "alltoall" ? " per peer" : ""))
      << "\n"
      << " Calls           = " << o.calls << " back to back (after " << o.warmup << " untimed)\n"
      << " Ranks           = " << ranks << " (" << facts.nodes << " node(s) x " << facts.ranks_per_node << ", "
      << facts.observed_nodes << " observed)\n"
      << " Call time (us)  = median " << fmt("%.2f", st.median * us) << ", p90 " << fmt("%.2f", st.p90 * us) << ", p95 "
      << fmt("%.2f", st.p95 * us) << ", p99 " << fmt("%.2f", st.p99 * us) << ", max " << fmt("%.2f", st.max * us)
      << " (slowest rank per call)\n"
      << " Slowest " << fmt("%.0f", 100 * o.tail) << "%      = " << fmt("%.1f", 100 * st.share)
      << "% of the total time (" << fmt("%.4f", st.total) << " s)\n"
      << " Clusters        = " << st.clusters.size() << " (split where a call takes over " << fmt("%.2f", o.gap)
      << "x the one before it, sorted)\n";
  for (const auto& c : st.clusters)
    out << "   centre " << fmt("%10.2f", c.centre * us) << " us   range " << fmt("%.2f", c.min * us) << " .. "
        << fmt("%.2f", c.max * us) << " us   calls " << c.count << " ("
        << fmt("%.1f", 100.0 * static_cast<double>(c.count) / static_cast<double>(o.calls)) << "%)\n";
  return out.str();
}

nlohmann::json body_of(const Stats& st, const ProbeOptions& o, std::size_t bytes, const std::vector<double>& slowest,
                       const std::vector<double>& all, int ranks) {
  nlohmann::json cl = nlohmann::json::array();
  for (const auto& c : st.clusters)
    cl.push_back({{"centre", c.centre}, {"min", c.min}, {"max", c.max}, {"count", c.count}});
  nlohmann::json per_rank = nlohmann::json::array();
  for (int r = 0; r < ranks; ++r)
    per_rank.push_back(std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(r) * o.calls,
                                           all.begin() + static_cast<std::ptrdiff_t>(r + 1) * o.calls));
  return {{"size", {{"op", o.op}, {"bytes", bytes}, {"calls", o.calls}, {"warmup", o.warmup}}},
          {"stats",
           {{"median", st.median},
            {"p90", st.p90},
            {"p95", st.p95},
            {"p99", st.p99},
            {"max", st.max},
            {"total", st.total},
            {"tail_fraction", o.tail},
            {"tail_share", st.share},
            {"cluster_gap", o.gap},
            {"clusters", cl}}},
          {"samples", {{"unit", "s"}, {"slowest_rank", slowest}, {"per_rank", per_rank}}}};
}

int run(const pxq::common::MpiWorld& w, const pxq::common::CommonOptions& co, const ProbeOptions& o) {
  const std::size_t bytes = check_options(o);
  const pxq::common::Variant variant = pxq::common::resolve_variant(co);
  if (variant.threads != 1 || variant.tile.kind != pxq::tiling::TilePolicy::Kind::off)
    throw std::invalid_argument("the collective probe runs one thread per rank and no tiles: use --mode flat");
  const pxq::common::RunStart start = pxq::common::start_run(w, co, variant, std::max<std::size_t>(8, bytes), "");
  const std::vector<double> mine = measure(w, o, bytes);
  std::vector<double> slowest(mine.size());
  MPI_Reduce(mine.data(), slowest.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0, w.comm);
  std::vector<double> all(w.rank == 0 ? mine.size() * static_cast<std::size_t>(w.size) : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
             MPI_DOUBLE, 0, w.comm);
  if (w.rank != 0) return pxq::common::kExitOk;
  const Stats st = stats_of(slowest, o);
  return pxq::common::finish_probe(w, co, variant, start, "probe-collective", true,
                                   report(st, o, bytes, w.size, start.facts), pxq::common::start_notes(start),
                                   body_of(st, o, bytes, slowest, all, w.size));
}

}  // namespace

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<ProbeOptions>(
      argc, argv, "pxq probe: the variability of a collective over many back-to-back calls", "pxq-probe-collective",
      add_probe_options, run);
}
