// pxq-probe-pingpong: latency and bandwidth of each communication channel this allocation
// offers. From the observed placement (node identity from MPI, packages and caches from
// hwloc; virtual nodes count as nodes) it picks one rank pair per channel (intra-CMP: same
// node and package; inter-CMP: same node, other package; inter-node) and says which
// channels it could not find. Per pair and message size (0 B to 4 MiB by default, powers of
// two): a ping-pong (one-way latency = round trip / 2, median and min/max over batches) and
// windowed non-blocking sends (bandwidth, as the standard bandwidth tests measure it), with
// optional validation of every received byte. `--rankpairs` instead times every ordered rank
// pair sending one large buffer (default 64 MiB) while the others wait: a rank x rank
// throughput matrix. A probe that reports; never a test.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pxq/comm/mpi_check.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/probes/stats.hpp"
#include "pxq/tiling/tile_policy.hpp"
#include "pxq/tiling/topology.hpp"

namespace {

using pxq::comm::check_mpi;
using pxq::common::fmt;

struct ProbeOptions {
  std::string min = "0", max = "4M", size = "64M";
  int window = 64;
  int repeat = 3;
  double scale = 1.0;  // iteration counts x this
  bool validate = false, rankpairs = false;
};

struct Pair {
  std::string channel, detail;
  int a = -1, b = -1;
};

// Batches x iterations per batch for a message size: more for small messages.
std::pair<int, int> latency_plan(std::size_t bytes, double scale) {
  int batches = 20, per = bytes <= 8192 ? 500 : bytes <= 262144 ? 50 : 5;
  per = std::max(1, static_cast<int>(per * scale));
  if (bytes > 262144) batches = 10;
  return {batches, per};
}
int bandwidth_windows(std::size_t bytes, double scale) {
  return std::max(3, static_cast<int>((bytes <= 65536 ? 100 : bytes <= 1048576 ? 30 : 10) * scale));
}

unsigned char pattern(std::size_t i, long stamp) { return static_cast<unsigned char>((i * 131 + static_cast<std::size_t>(stamp) * 7 + 1) & 0xff); }
void fill(std::vector<unsigned char>& buf, std::size_t n, long stamp) {
  for (std::size_t i = 0; i < n; ++i) buf[i] = pattern(i, stamp);
}
long check(const std::vector<unsigned char>& buf, std::size_t n, long stamp) {
  long bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += buf[i] != pattern(i, stamp);
  return bad;
}

std::vector<Pair> choose_pairs(const std::vector<pxq::comm::RankPlacement>& ranks, std::vector<std::string>& missing) {
  std::map<std::string, Pair> found;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    for (std::size_t j = i + 1; j < ranks.size(); ++j) {
      const auto ch = pxq::comm::classify(ranks[i], ranks[j]);
      const std::string name = pxq::comm::channel_name(ch);
      if (ch == pxq::comm::Channel::self || found.count(name)) continue;
      Pair p{name, "", static_cast<int>(i), static_cast<int>(j)};
      if (ch == pxq::comm::Channel::intra_cmp)
        p.detail = pxq::comm::shares_cache(ranks[i], ranks[j], 2) ? "shared L2"
                   : pxq::comm::shares_cache(ranks[i], ranks[j], 3) ? "shared L3" : "same package";
      else if (ch == pxq::comm::Channel::inter_node)
        p.detail = ranks[i].vnode.empty() ? "network" : "virtual nodes (TCP)";
      found[name] = p;
    }
  std::vector<Pair> out;
  int packages = 1;
  try {
    packages = pxq::tiling::this_topology().packages;
  } catch (const std::exception&) {
  }
  for (const std::string name : {"intra_cmp", "inter_cmp", "inter_node"}) {
    if (found.count(name)) {
      out.push_back(found[name]);
      continue;
    }
    if (name == "intra_cmp") missing.push_back("intra_cmp: no two ranks share a node's package (run 2 or more ranks per node)");
    if (name == "inter_cmp")
      missing.push_back(packages <= 1 ? "inter_cmp: this machine has one package, so a node offers no second one"
                                      : "inter_cmp: no node has ranks on two packages (use --placement spread)");
    if (name == "inter_node") missing.push_back("inter_node: all ranks are on one node (use a layout 2xQ: virtual nodes here)");
  }
  return out;
}

int run(const pxq::common::MpiWorld& w, const pxq::common::CommonOptions& co, const ProbeOptions& o) {
  if (w.size < 2) throw std::invalid_argument("the ping-pong probe needs at least 2 ranks: use a layout 1x2 or 2x1");
  if (o.window < 1) throw std::invalid_argument("--window must be at least 1");
  if (o.repeat < 1) throw std::invalid_argument("--repeat must be at least 1");
  if (!(o.scale > 0)) throw std::invalid_argument("--scale must be above 0");
  const std::size_t lo = o.min == "0" ? 0 : pxq::tiling::parse_bytes(o.min);
  const std::size_t hi = pxq::tiling::parse_bytes(o.max);
  const std::size_t big = pxq::tiling::parse_bytes(o.size);
  if (hi < lo) throw std::invalid_argument("--max is below --min");
  if (hi > (std::size_t{1} << 30) || big > (std::size_t{1} << 30))
    throw std::invalid_argument("messages above 1G: use --max/--size of at most 1G");
  const pxq::common::Variant variant = pxq::common::resolve_variant(co);
  if (variant.threads != 1) throw std::invalid_argument("the ping-pong probe runs one thread per rank: use --mode flat");
  const pxq::common::RunStart start = pxq::common::start_run(w, co, variant, o.rankpairs ? big : hi, "");

  std::vector<std::size_t> sizes;
  if (lo == 0) sizes.push_back(0);
  for (std::size_t s = 1; s <= hi; s *= 2)
    if (s >= lo) sizes.push_back(s);
  std::vector<std::string> missing;
  const auto pairs = choose_pairs(start.placement, missing);
  // As the standard benchmarks do: one send buffer and one receive buffer, reused by every
  // message (a window's sends all read the same buffer), so the figures compare with theirs.
  std::vector<unsigned char> sbuf(std::max<std::size_t>(o.rankpairs ? big : hi, 1)), buf(sbuf.size());
  std::vector<unsigned char> ack(4);
  long checked = 0, errors = 0;
  nlohmann::json channels = nlohmann::json::array();
  std::ostringstream out;

  if (!o.rankpairs) {
    for (const Pair& p : pairs) {
      const bool a = w.rank == p.a, b = w.rank == p.b;
      nlohmann::json lat = nlohmann::json::array(), bw = nlohmann::json::array();
      for (std::size_t bytes : sizes) {
        const int n = static_cast<int>(bytes);
        // ---- latency: batches of ping-pongs ----
        const auto [batches, per] = latency_plan(bytes, o.scale);
        std::vector<double> one_way;
        check_mpi(MPI_Barrier(w.comm), "MPI_Barrier");
        if (a || b) {
          const int peer = a ? p.b : p.a;
          auto round_trip = [&] {
            if (a) {
              MPI_Send(sbuf.data(), n, MPI_BYTE, peer, 1, w.comm);
              MPI_Recv(buf.data(), n, MPI_BYTE, peer, 1, w.comm, MPI_STATUS_IGNORE);
            } else {
              MPI_Recv(buf.data(), n, MPI_BYTE, peer, 1, w.comm, MPI_STATUS_IGNORE);
              MPI_Send(sbuf.data(), n, MPI_BYTE, peer, 1, w.comm);
            }
          };
          for (int it = 0; it < std::max(10, per / 10); ++it) round_trip();  // warm-up
          for (int bt = 0; bt < batches; ++bt) {
            if (o.validate) fill(sbuf, bytes, bt);  // both ends send the batch's pattern
            const double t0 = MPI_Wtime();
            for (int it = 0; it < per; ++it) round_trip();
            one_way.push_back((MPI_Wtime() - t0) / (2.0 * per));
            if (o.validate) {
              checked += static_cast<long>(bytes);
              errors += check(buf, bytes, bt);
            }
          }
        }
        // ---- bandwidth: windows of non-blocking sends, one small ack per window ----
        const int windows = bandwidth_windows(bytes, o.scale);
        std::vector<double> gbs;
        check_mpi(MPI_Barrier(w.comm), "MPI_Barrier");
        if (a || b) {
          const int peer = a ? p.b : p.a;
          std::vector<MPI_Request> reqs(static_cast<std::size_t>(o.window));
          for (int wi = -2; wi < windows; ++wi) {  // two untimed windows
            if (o.validate && a) fill(sbuf, bytes, wi + 7);
            const double t0 = MPI_Wtime();
            for (int k = 0; k < o.window; ++k) {
              if (a) MPI_Isend(sbuf.data(), n, MPI_BYTE, peer, 2, w.comm, &reqs[static_cast<std::size_t>(k)]);
              else MPI_Irecv(buf.data(), n, MPI_BYTE, peer, 2, w.comm, &reqs[static_cast<std::size_t>(k)]);
            }
            MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE);
            if (a) MPI_Recv(ack.data(), 4, MPI_BYTE, peer, 3, w.comm, MPI_STATUS_IGNORE);
            else MPI_Send(ack.data(), 4, MPI_BYTE, peer, 3, w.comm);
            const double t = MPI_Wtime() - t0;
            if (o.validate && b) {
              checked += static_cast<long>(bytes);
              errors += check(buf, bytes, wi + 7);
            }
            if (wi >= 0 && bytes > 0) gbs.push_back(static_cast<double>(bytes) * o.window / t / 1e9);
          }
        }
        // Rank a reports latency, rank b's bandwidth view is the receiver's; both go to rank 0.
        double l[3] = {0, 0, 0}, g[3] = {0, 0, 0};
        if (a && !one_way.empty())
          l[0] = pxq::probes::percentile(one_way, 50), l[1] = *std::min_element(one_way.begin(), one_way.end()),
          l[2] = *std::max_element(one_way.begin(), one_way.end());
        if (a && !gbs.empty())
          g[0] = pxq::probes::percentile(gbs, 50), g[1] = *std::min_element(gbs.begin(), gbs.end()),
          g[2] = *std::max_element(gbs.begin(), gbs.end());
        if (p.a != 0) {
          if (a) {
            MPI_Send(l, 3, MPI_DOUBLE, 0, 9, w.comm);
            MPI_Send(g, 3, MPI_DOUBLE, 0, 9, w.comm);
          } else if (w.rank == 0) {
            MPI_Recv(l, 3, MPI_DOUBLE, p.a, 9, w.comm, MPI_STATUS_IGNORE);
            MPI_Recv(g, 3, MPI_DOUBLE, p.a, 9, w.comm, MPI_STATUS_IGNORE);
          }
        }
        lat.push_back({{"bytes", bytes}, {"median_us", l[0] * 1e6}, {"min_us", l[1] * 1e6}, {"max_us", l[2] * 1e6},
                       {"batches", batches}, {"iterations_per_batch", per}});
        if (bytes > 0)
          bw.push_back({{"bytes", bytes}, {"median_gbs", g[0]}, {"min_gbs", g[1]}, {"max_gbs", g[2]},
                        {"window", o.window}, {"windows", windows}});
      }
      channels.push_back({{"channel", p.channel}, {"detail", p.detail}, {"pair", {p.a, p.b}},
                          {"latency", lat}, {"bandwidth", bw}});
    }
  }

  // ---- rank pairs: every ordered pair sends one large buffer, the others wait ----
  nlohmann::json matrix = nlohmann::json::array();
  if (o.rankpairs) {
    std::vector<double> row(static_cast<std::size_t>(w.size) * static_cast<std::size_t>(w.size), 0.0);
    const int n = static_cast<int>(big);
    for (int i = 0; i < w.size; ++i)
      for (int j = 0; j < w.size; ++j) {
        if (i == j) continue;
        double best = 0;
        for (int r = 0; r < o.repeat + 1; ++r) {  // one untimed
          check_mpi(MPI_Barrier(w.comm), "MPI_Barrier");
          if (w.rank == i) {
            if (o.validate) fill(sbuf, big, i * w.size + j);
            const double t0 = MPI_Wtime();
            MPI_Send(sbuf.data(), n, MPI_BYTE, j, 4, w.comm);
            MPI_Recv(ack.data(), 4, MPI_BYTE, j, 5, w.comm, MPI_STATUS_IGNORE);
            const double gb = static_cast<double>(big) / (MPI_Wtime() - t0) / 1e9;
            if (r > 0) best = std::max(best, gb);
          } else if (w.rank == j) {
            MPI_Recv(buf.data(), n, MPI_BYTE, i, 4, w.comm, MPI_STATUS_IGNORE);
            MPI_Send(ack.data(), 4, MPI_BYTE, i, 5, w.comm);
            if (o.validate) {
              checked += static_cast<long>(big);
              errors += check(buf, big, i * w.size + j);
            }
          }
        }
        if (w.rank == i) row[static_cast<std::size_t>(i * w.size + j)] = best;
      }
    std::vector<double> all(row.size());
    MPI_Reduce(row.data(), all.data(), static_cast<int>(row.size()), MPI_DOUBLE, MPI_MAX, 0, w.comm);
    for (int i = 0; i < w.size; ++i)
      matrix.push_back(std::vector<double>(all.begin() + i * w.size, all.begin() + (i + 1) * w.size));
  }
  long totals[2] = {checked, errors}, sums[2] = {0, 0};
  MPI_Reduce(totals, sums, 2, MPI_LONG, MPI_SUM, 0, w.comm);
  if (w.rank != 0) return pxq::common::kExitOk;

  // ---- report ----
  const bool valid = !o.validate || sums[1] == 0;
  std::vector<std::string> notes = pxq::common::start_notes(start);
  for (const auto& m : missing) notes.push_back("channel not found: " + m);
  if (!o.rankpairs) {
    out << "\n Channel ping-pong (" << w.size << " ranks, " << start.facts.observed_nodes << " node(s))\n";
    for (const auto& ch : channels) {
      out << "\n " << ch["channel"].get<std::string>() << " (" << ch["detail"].get<std::string>() << "): ranks "
          << ch["pair"][0].get<int>() << " and " << ch["pair"][1].get<int>() << "\n"
          << "     bytes   latency us (median  min  max)   bandwidth GB/s (median  min  max)\n";
      for (const auto& l : ch["latency"]) {
        const std::size_t bytes = l["bytes"];
        out << fmt("%10.0f", static_cast<double>(bytes)) << fmt("%14.2f", l["median_us"].get<double>())
            << fmt("%8.2f", l["min_us"].get<double>()) << fmt("%9.2f", l["max_us"].get<double>());
        for (const auto& g : ch["bandwidth"])
          if (g["bytes"] == l["bytes"])
            out << fmt("%15.2f", g["median_gbs"].get<double>()) << fmt("%8.2f", g["min_gbs"].get<double>())
                << fmt("%8.2f", g["max_gbs"].get<double>());
        out << "\n";
      }
    }
  } else {
    out << "\n Rank-pair throughput, GB/s (" << pxq::tiling::format_bytes(big) << " from row rank to column rank)\n     ";
    for (int j = 0; j < w.size; ++j) out << fmt("%8.0f", j);
    out << "\n";
    for (int i = 0; i < w.size; ++i) {
      out << fmt("%5.0f", i);
      for (int j = 0; j < w.size; ++j) out << (i == j ? std::string("       -") : fmt("%8.2f", matrix[i][j].get<double>()));
      out << "\n";
    }
  }
  for (const auto& m : missing) out << " channel not found: " << m << "\n";
  if (o.validate)
    out << " Validation      = " << (valid ? "PASSED" : "FAILED") << " (" << sums[0] << " bytes checked, " << sums[1]
        << " wrong)\n";
  std::fputs(out.str().c_str(), stdout);
  std::fflush(stdout);
  if (!co.json_path.empty()) {
    nlohmann::json rec = pxq::common::record_frame(o.rankpairs ? "probe-rankpairs" : "probe-pingpong", valid, co, variant,
                                                   start, w.size, notes);
    nlohmann::json miss = nlohmann::json::array();
    for (const auto& m : missing) miss.push_back(m);
    rec.update(nlohmann::json{
        {"size", {{"min", lo}, {"max", hi}, {"window", o.window}, {"rankpairs_bytes", big}, {"repeat", o.repeat}}},
        {"channels", channels}, {"missing", miss}, {"matrix_gbs", matrix},
        {"validation", {{"on", o.validate}, {"bytes_checked", sums[0]}, {"wrong", sums[1]}}}});
    pxq::common::append_record(co.json_path, rec);
  }
  return valid ? pxq::common::kExitOk : pxq::common::kExitVerificationFailed;
}

void add_probe_options(CLI::App& app, ProbeOptions& o) {
  app.add_option("--min", o.min, "smallest message (default 0)");
  app.add_option("--max", o.max, "largest message (default 4M)");
  app.add_option("--window", o.window, "non-blocking sends in flight per bandwidth window (default 64)");
  app.add_option("--scale", o.scale, "iteration counts x this (default 1)");
  app.add_flag("--validate", o.validate, "check every received byte against the pattern sent");
  app.add_flag("--rankpairs", o.rankpairs, "time every ordered rank pair instead (a throughput matrix)");
  app.add_option("--size", o.size, "--rankpairs: bytes each pair sends (default 64M)");
  app.add_option("--repeat", o.repeat, "--rankpairs: timed sends per pair, best counts (default 3)");
}

}  // namespace

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<ProbeOptions>(
      argc, argv, "pxq probe pingpong: latency and bandwidth per channel, or the rank-pair throughput matrix",
      "pxq-probe-pingpong", add_probe_options, run);
}
