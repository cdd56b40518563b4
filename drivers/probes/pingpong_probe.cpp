// pxq-probe-pingpong: latency and bandwidth of each communication channel this allocation
// offers. From the observed placement (node identity from MPI, packages and caches from
// hwloc; virtual nodes count as nodes) it picks one rank pair per channel (intra-CMP: same
// node and package; inter-CMP: same node, other package; inter-node) and says which
// channels it could not find. Per pair and message size (0 B to 4 MiB by default, powers of
// two): a ping-pong (one-way latency = round trip / 2, median and min/max over batches) and
// windowed non-blocking sends (bandwidth, as the standard bandwidth tests measure it), with
// optional validation of every received byte. `--rankpairs` instead times every ordered rank
// pair sending one large buffer (default 64 MiB) while the others wait: a rank x rank
// throughput matrix, up to `--pairs` ordered pairs (4096: every pair up to 64 ranks); past it a
// sample whose size grows with the ranks, not their square (see pair_offsets). A probe that
// reports; never a test.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pxq/comm/mpi_check.hpp"
#include "pxq/comm/placement.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/probes/pt2pt.hpp"
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
  long pairs = 4096;   // --rankpairs: most ordered pairs timed before sampling
  double scale = 1.0;  // iteration counts x this
  bool validate = false, rankpairs = false;
};

void add_probe_options(pxq::cli::App& app, ProbeOptions& o) {
  app.add_option("--min", o.min, "smallest message (default 0)");
  app.add_option("--max", o.max, "largest message (default 4M)");
  app.add_option("--window", o.window, "non-blocking sends in flight per bandwidth window (default 64)");
  app.add_option("--scale", o.scale, "iteration counts x this (default 1)");
  app.add_flag("--validate", o.validate, "check every received byte against the pattern sent");
  app.add_flag("--rankpairs", o.rankpairs, "time every ordered rank pair instead (a throughput matrix)");
  app.add_option("--size", o.size, "--rankpairs: bytes each pair sends (default 64M)");
  app.add_option("--repeat", o.repeat, "--rankpairs: timed sends per pair, best counts (default 3)");
  app.add_option("--pairs", o.pairs,
                 "--rankpairs: most ordered pairs timed; past it a sample of partner offsets (default 4096)");
}

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

void fill(std::vector<unsigned char>& buf, std::size_t n, long stamp) { pxq::probes::fill(buf.data(), n, stamp); }
long check(const std::vector<unsigned char>& buf, std::size_t n, long stamp) {
  return pxq::probes::wrong_bytes(buf.data(), n, stamp);
}

// How virtual nodes on one host talk: Open MPI's over TCP (its shared memory stays within a
// node); MPICH's UCX picks its own transports, shared memory on one host, unless UCX_TLS
// names tcp and no shared-memory transport. The nodes of a cluster of this machine have host
// names (and network and IPC namespaces) of their own: both MPIs talk TCP over the node's link.
std::string virtual_nodes_detail(const pxq::comm::RankPlacement& a, const pxq::comm::RankPlacement& b) {
  if (a.host != b.host) return "cluster of this machine (TCP over the nodes' links)";
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  if (std::string(lib, static_cast<std::size_t>(len)).find("Open MPI") != std::string::npos)
    return "virtual nodes (TCP)";
  const char* env = std::getenv("UCX_TLS");
  const std::string tls = env ? env : "";
  bool shared = tls.empty() || tls.find("tcp") == std::string::npos;
  for (const char* t : {"all", "sm", "posix", "sysv", "cma", "xpmem", "knem", "shm"})
    shared = shared || tls.find(t) != std::string::npos;
  return shared ? "virtual nodes (UCX shared memory)" : "virtual nodes (TCP)";
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
        p.detail = pxq::comm::shares_cache(ranks[i], ranks[j], 2)   ? "shared L2"
                   : pxq::comm::shares_cache(ranks[i], ranks[j], 3) ? "shared L3"
                                                                    : "same package";
      else if (ch == pxq::comm::Channel::inter_node)
        p.detail = ranks[i].vnode.empty() ? "network" : virtual_nodes_detail(ranks[i], ranks[j]);
      found[name] = p;
    }
  std::vector<Pair> out;
  int packages = 1;
  try {
    packages = pxq::tiling::this_topology().packages;
  } catch (const std::exception&) {
    packages = 1;  // no topology to read: the pairs of one package only
  }
  for (const std::string name : {"intra_cmp", "inter_cmp", "inter_node"}) {
    if (found.count(name)) {
      out.push_back(found[name]);
      continue;
    }
    if (name == "intra_cmp")
      missing.push_back("intra_cmp: no two ranks share a node's package (run 2 or more ranks per node)");
    if (name == "inter_cmp")
      missing.push_back(packages <= 1 ? "inter_cmp: this machine has one package, so a node offers no second one"
                                      : "inter_cmp: no node has ranks on two packages (use --placement spread)");
    if (name == "inter_node")
      missing.push_back("inter_node: all ranks are on one node (use a layout 2xQ: virtual nodes here)");
  }
  return out;
}

// What one probe run shares between its steps: the world, the options, the buffers (as the
// standard benchmarks do: one send and one receive buffer, reused by every message, so the
// figures compare with theirs) and the validation counts.
struct Ctx {
  const pxq::common::MpiWorld& w;
  const ProbeOptions& o;
  std::vector<unsigned char> sbuf, buf, ack = std::vector<unsigned char>(4);
  long checked = 0, errors = 0;
};

// Median, min and max of `xs` (zeros when empty).
std::array<double, 3> spread(const std::vector<double>& xs) {
  if (xs.empty()) return {0, 0, 0};
  return {pxq::probes::percentile(xs, 50), *std::min_element(xs.begin(), xs.end()),
          *std::max_element(xs.begin(), xs.end())};
}

// Batches of ping-pongs between the pair: one-way latency per batch, seconds (on a and b).
std::vector<double> measure_latency(Ctx& c, const Pair& p, std::size_t bytes, int batches, int per) {
  const bool a = c.w.rank == p.a;
  std::vector<double> one_way;
  check_mpi(MPI_Barrier(c.w.comm), "MPI_Barrier");
  if (!a && c.w.rank != p.b) return one_way;
  const int peer = a ? p.b : p.a, n = static_cast<int>(bytes);
  auto round_trip = [&] { pxq::probes::round_trip(c.sbuf.data(), c.buf.data(), n, peer, a, 1, c.w.comm); };
  for (int it = 0; it < std::max(10, per / 10); ++it) round_trip();  // warm-up
  for (int bt = 0; bt < batches; ++bt) {
    if (c.o.validate) fill(c.sbuf, bytes, bt);  // both ends send the batch's pattern
    const double t0 = MPI_Wtime();
    for (int it = 0; it < per; ++it) round_trip();
    one_way.push_back((MPI_Wtime() - t0) / (2.0 * per));
    if (c.o.validate) {
      c.checked += static_cast<long>(bytes);
      c.errors += check(c.buf, bytes, bt);
    }
  }
  return one_way;
}

// Windows of non-blocking sends, one small ack per window: GB/s per window (on a and b).
std::vector<double> measure_bandwidth(Ctx& c, const Pair& p, std::size_t bytes, int windows) {
  const bool a = c.w.rank == p.a, b = c.w.rank == p.b;
  std::vector<double> gbs;
  check_mpi(MPI_Barrier(c.w.comm), "MPI_Barrier");
  if (!a && !b) return gbs;
  const int peer = a ? p.b : p.a, n = static_cast<int>(bytes);
  std::vector<MPI_Request> reqs(static_cast<std::size_t>(c.o.window));
  for (int wi = -2; wi < windows; ++wi) {  // two untimed windows
    if (c.o.validate && a) fill(c.sbuf, bytes, wi + 7);
    const double t0 = MPI_Wtime();
    for (auto& r : reqs) {
      if (a)
        MPI_Isend(c.sbuf.data(), n, MPI_BYTE, peer, 2, c.w.comm, &r);
      else
        MPI_Irecv(c.buf.data(), n, MPI_BYTE, peer, 2, c.w.comm, &r);
    }
    MPI_Waitall(c.o.window, reqs.data(), MPI_STATUSES_IGNORE);
    if (a)
      MPI_Recv(c.ack.data(), 4, MPI_BYTE, peer, 3, c.w.comm, MPI_STATUS_IGNORE);
    else
      MPI_Send(c.ack.data(), 4, MPI_BYTE, peer, 3, c.w.comm);
    const double t = MPI_Wtime() - t0;
    if (c.o.validate && b) {
      c.checked += static_cast<long>(bytes);
      c.errors += check(c.buf, bytes, wi + 7);
    }
    if (wi >= 0 && bytes > 0) gbs.push_back(static_cast<double>(bytes) * c.o.window / t / 1e9);
  }
  return gbs;
}

// Rank a's figures (latency median/min/max, bandwidth median/min/max) on rank 0.
void to_root(Ctx& c, const Pair& p, std::array<double, 3>& l, std::array<double, 3>& g) {
  if (p.a == 0) return;
  if (c.w.rank == p.a) {
    MPI_Send(l.data(), 3, MPI_DOUBLE, 0, 9, c.w.comm);
    MPI_Send(g.data(), 3, MPI_DOUBLE, 0, 9, c.w.comm);
  } else if (c.w.rank == 0) {
    MPI_Recv(l.data(), 3, MPI_DOUBLE, p.a, 9, c.w.comm, MPI_STATUS_IGNORE);
    MPI_Recv(g.data(), 3, MPI_DOUBLE, p.a, 9, c.w.comm, MPI_STATUS_IGNORE);
  }
}

// One channel's latency and bandwidth over every size (complete on rank 0).
nlohmann::json measure_channel(Ctx& c, const Pair& p, const std::vector<std::size_t>& sizes) {
  nlohmann::json lat = nlohmann::json::array(), bw = nlohmann::json::array();
  for (std::size_t bytes : sizes) {
    const auto [batches, per] = latency_plan(bytes, c.o.scale);
    const auto one_way = measure_latency(c, p, bytes, batches, per);
    const int windows = bandwidth_windows(bytes, c.o.scale);
    const auto gbs = measure_bandwidth(c, p, bytes, windows);
    // Rank a reports latency, rank b's bandwidth view is the receiver's; both go to rank 0.
    auto l = c.w.rank == p.a ? spread(one_way) : std::array<double, 3>{0, 0, 0};
    auto g = c.w.rank == p.a ? spread(gbs) : std::array<double, 3>{0, 0, 0};
    to_root(c, p, l, g);
    lat.push_back({{"bytes", bytes},
                   {"median_us", l[0] * 1e6},
                   {"min_us", l[1] * 1e6},
                   {"max_us", l[2] * 1e6},
                   {"batches", batches},
                   {"iterations_per_batch", per}});
    if (bytes > 0)
      bw.push_back({{"bytes", bytes},
                    {"median_gbs", g[0]},
                    {"min_gbs", g[1]},
                    {"max_gbs", g[2]},
                    {"window", c.o.window},
                    {"windows", windows}});
  }
  return {{"channel", p.channel}, {"detail", p.detail}, {"pair", {p.a, p.b}}, {"latency", lat}, {"bandwidth", bw}};
}

// The partner offsets every rank sends to, pairs (i, i + d mod P): every other rank while the
// P(P-1) ordered pairs fit in `limit`; past it K = max(2, limit / P) offsets, the same for every
// rank, so the pairs grow with P: the near ones first in both directions (1, P-1, 2, P-2, 4 ...:
// the on-node pairs of a block allocation), then offsets spread evenly (pairs across the machine).
std::vector<int> pair_offsets(int p, long limit) {
  std::vector<int> out;
  if (static_cast<long>(p) * (p - 1) <= limit) {
    for (int d = 1; d < p; ++d) out.push_back(d);
    return out;
  }
  const auto k = static_cast<std::size_t>(std::max<long>(2, std::min<long>(p - 1, limit / p)));
  std::set<int> chosen;
  for (long d = 1; d < p && chosen.size() < k; d *= 2) {
    chosen.insert(static_cast<int>(d));
    if (chosen.size() < k) chosen.insert(static_cast<int>(p - d));
  }
  for (std::size_t s = 1; s <= k && chosen.size() < k; ++s)
    chosen.insert(std::max(1, static_cast<int>(static_cast<long>(s) * p / static_cast<long>(k + 1))));
  for (int d = 1; d < p && chosen.size() < k; ++d) chosen.insert(d);
  return {chosen.begin(), chosen.end()};
}

// One ordered pair sends `big` bytes repeat+1 times while the others wait (the first untimed):
// the sender's best GB/s, 0 on every other rank.
double time_pair(Ctx& c, int i, int j, std::size_t big) {
  const auto& w = c.w;
  const int n = static_cast<int>(big);
  double best = 0;
  for (int r = 0; r < c.o.repeat + 1; ++r) {
    check_mpi(MPI_Barrier(w.comm), "MPI_Barrier");
    if (w.rank == i) {
      if (c.o.validate) fill(c.sbuf, big, static_cast<long>(i) * w.size + j);
      const double t0 = MPI_Wtime();
      MPI_Send(c.sbuf.data(), n, MPI_BYTE, j, 4, w.comm);
      MPI_Recv(c.ack.data(), 4, MPI_BYTE, j, 5, w.comm, MPI_STATUS_IGNORE);
      const double gb = static_cast<double>(big) / (MPI_Wtime() - t0) / 1e9;
      if (r > 0) best = std::max(best, gb);
    } else if (w.rank == j) {
      MPI_Recv(c.buf.data(), n, MPI_BYTE, i, 4, w.comm, MPI_STATUS_IGNORE);
      MPI_Send(c.ack.data(), 4, MPI_BYTE, i, 5, w.comm);
      if (c.o.validate) {
        c.checked += static_cast<long>(big);
        c.errors += check(c.buf, big, static_cast<long>(i) * w.size + j);
      }
    }
  }
  return best;
}

// Every pair (i, i + d) of every offset, one at a time. Each rank keeps its own sends' K values
// and rank 0 gathers K x P of them: a full matrix (`matrix_gbs`) when every pair was timed, else
// the sample by sender and offset (`pairs_sampled`), never a P x P array past `--pairs`.
nlohmann::json measure_rank_pairs(Ctx& c, std::size_t big) {
  const auto& w = c.w;
  const std::vector<int> offsets = pair_offsets(w.size, c.o.pairs);
  const std::size_t k = offsets.size();
  std::vector<double> mine(k, 0.0), all(w.rank == 0 ? k * static_cast<std::size_t>(w.size) : 1, 0.0);
  for (std::size_t t = 0; t < k; ++t)
    for (int i = 0; i < w.size; ++i) {
      const double gb = time_pair(c, i, (i + offsets[t]) % w.size, big);
      if (w.rank == i) mine[t] = gb;
    }
  check_mpi(
      MPI_Gather(mine.data(), static_cast<int>(k), MPI_DOUBLE, all.data(), static_cast<int>(k), MPI_DOUBLE, 0, w.comm),
      "MPI_Gather");
  nlohmann::json rows = nlohmann::json::array();
  if (w.rank != 0) return {{"matrix_gbs", rows}};
  const bool dense = k + 1 == static_cast<std::size_t>(w.size);
  for (int i = 0; i < w.size; ++i) {
    const auto* row = all.data() + static_cast<std::size_t>(i) * k;
    if (!dense) {
      rows.push_back(std::vector<double>(row, row + k));
      continue;
    }
    std::vector<double> full(static_cast<std::size_t>(w.size), 0.0);
    for (std::size_t t = 0; t < k; ++t) full[static_cast<std::size_t>((i + offsets[t]) % w.size)] = row[t];
    rows.push_back(full);
  }
  if (dense) return {{"matrix_gbs", rows}};
  const long total = static_cast<long>(w.size) * (w.size - 1);
  return {{"matrix_gbs", nlohmann::json::array()},
          {"pairs_sampled", {{"offsets", offsets}, {"gbs", rows}, {"pairs_total", total}}}};
}

std::string channel_text(const nlohmann::json& channels, int ranks, int nodes) {
  std::ostringstream out;
  out << "\n Channel ping-pong (" << ranks << " ranks, " << nodes << " node(s))\n";
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
  return out.str();
}

std::string matrix_text(const nlohmann::json& pairs, int ranks, std::size_t big) {
  std::ostringstream out;
  const std::string what = pxq::tiling::format_bytes(big);
  if (pairs.contains("pairs_sampled")) {  // one line per offset: the matrix would be P x P
    const auto& s = pairs["pairs_sampled"];
    const auto& offsets = s["offsets"];
    out << "\n Rank-pair throughput, GB/s (" << what
        << " from rank i to rank i + d), a sample: " << offsets.size() * static_cast<std::size_t>(ranks) << " of "
        << s["pairs_total"].get<long>() << " ordered pairs\n  offset d      min   median      max\n";
    for (std::size_t t = 0; t < offsets.size(); ++t) {
      std::vector<double> v;
      for (const auto& row : s["gbs"]) v.push_back(row[t].get<double>());
      std::sort(v.begin(), v.end());
      out << fmt("%10.0f", offsets[t].get<double>()) << fmt("%9.2f", v.front()) << fmt("%9.2f", v[v.size() / 2])
          << fmt("%9.2f", v.back()) << "\n";
    }
    return out.str();
  }
  const auto& matrix = pairs["matrix_gbs"];
  if (matrix.empty()) return "";  // ranks other than 0 hold no results
  out << "\n Rank-pair throughput, GB/s (" << what << " from row rank to column rank)\n     ";
  for (int j = 0; j < ranks; ++j) out << fmt("%8.0f", j);
  out << "\n";
  for (int i = 0; i < ranks; ++i) {
    out << fmt("%5.0f", i);
    for (int j = 0; j < ranks; ++j)
      out << (i == j ? std::string("       -") : fmt("%8.2f", matrix[i][j].get<double>()));
    out << "\n";
  }
  return out.str();
}

struct Sizes {
  std::size_t lo = 0, hi = 0, big = 0;
  std::vector<std::size_t> list;  // powers of two from lo to hi (and 0)
};

// The options checked before any MPI work.
Sizes check_options(const pxq::common::MpiWorld& w, const ProbeOptions& o) {
  if (w.size < 2) throw std::invalid_argument("the ping-pong probe needs at least 2 ranks: use a layout 1x2 or 2x1");
  if (o.window < 1) throw std::invalid_argument("--window must be at least 1");
  if (o.repeat < 1) throw std::invalid_argument("--repeat must be at least 1");
  if (o.pairs < 2 || o.pairs > (1L << 24)) throw std::invalid_argument("--pairs must be 2 to 16777216");
  if (!(o.scale > 0)) throw std::invalid_argument("--scale must be above 0");
  Sizes s;
  s.lo = o.min == "0" ? 0 : pxq::tiling::parse_bytes(o.min);
  s.hi = pxq::tiling::parse_bytes(o.max);
  s.big = pxq::tiling::parse_bytes(o.size);
  if (s.hi < s.lo) throw std::invalid_argument("--max is below --min");
  if (s.hi > (std::size_t{1} << 30) || s.big > (std::size_t{1} << 30))
    throw std::invalid_argument("messages above 1G: use --max/--size of at most 1G");
  if (s.lo == 0) s.list.push_back(0);
  for (std::size_t b = 1; b <= s.hi; b *= 2)
    if (b >= s.lo) s.list.push_back(b);
  return s;
}

int run(const pxq::common::MpiWorld& w, const pxq::common::CommonOptions& co, const ProbeOptions& o) {
  const Sizes sz = check_options(w, o);
  const pxq::common::Variant variant = pxq::common::resolve_variant(co);
  if (variant.threads != 1)
    throw std::invalid_argument("the ping-pong probe runs one thread per rank: use --mode flat");
  const std::size_t largest = o.rankpairs ? sz.big : sz.hi;
  const pxq::common::RunStart start = pxq::common::start_run(w, co, variant, largest, "");
  std::vector<std::string> missing;
  const auto pairs = choose_pairs(start.placement, missing);
  Ctx c{w, o, std::vector<unsigned char>(std::max<std::size_t>(largest, 1)),
        std::vector<unsigned char>(std::max<std::size_t>(largest, 1))};
  nlohmann::json channels = nlohmann::json::array(), matrix = {{"matrix_gbs", nlohmann::json::array()}};
  if (o.rankpairs)
    matrix = measure_rank_pairs(c, sz.big);
  else
    for (const Pair& p : pairs) channels.push_back(measure_channel(c, p, sz.list));
  long totals[2] = {c.checked, c.errors}, sums[2] = {0, 0};
  MPI_Reduce(totals, sums, 2, MPI_LONG, MPI_SUM, 0, w.comm);
  const bool valid = !o.validate || sums[1] == 0;  // rank 0's view; the others report nothing

  std::vector<std::string> notes = pxq::common::start_notes(start);
  for (const auto& m : missing) notes.push_back("channel not found: " + m);
  std::string text =
      o.rankpairs ? matrix_text(matrix, w.size, sz.big) : channel_text(channels, w.size, start.facts.observed_nodes);
  for (const auto& m : missing) text += " channel not found: " + m + "\n";
  if (o.validate)
    text += " Validation      = " + std::string(valid ? "PASSED" : "FAILED") + " (" + std::to_string(sums[0]) +
            " bytes checked, " + std::to_string(sums[1]) + " wrong)\n";
  nlohmann::json miss = missing;
  nlohmann::json body = {
      {"size",
       {{"min", sz.lo}, {"max", sz.hi}, {"window", o.window}, {"rankpairs_bytes", sz.big}, {"repeat", o.repeat}}},
      {"channels", channels},
      {"missing", miss},
      {"validation", {{"on", o.validate}, {"bytes_checked", sums[0]}, {"wrong", sums[1]}}}};
  body.update(matrix);
  return pxq::common::finish_probe(w, co, variant, start, o.rankpairs ? "probe-rankpairs" : "probe-pingpong",
                                   w.rank != 0 || valid, text, notes, body);
}

}  // namespace

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<ProbeOptions>(
      argc, argv, "pxq probe pingpong: latency and bandwidth per channel, or the rank-pair throughput matrix",
      "pxq-probe-pingpong", add_probe_options, run);
}
