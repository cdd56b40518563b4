// pxq-probe-osu: pxq's ping-pong and collective probes behind the OSU Micro-Benchmarks'
// interface, so figures line up with a site's OSU baselines. One program, the test named
// first: latency, bw, bibw, mbw_mr (point to point) or allreduce, bcast, alltoall, barrier;
// OSU's flags (-m MIN:MAX, -i iterations, -x warm-up, -W window, -f full statistics, -c
// validation) and OSU's columns (MB/s with MB = 10^6). pxq's own code, measured as OSU
// measures: latency = round trip / 2 on rank 0; bandwidth = window x size per window with
// one ack; bibw = both ways at once; mbw_mr = rank i with rank i + N/2, every pair at once;
// a collective's latency = its mean call time per rank (avg, min and max over the ranks),
// a barrier between calls. A probe that reports; never a test.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "pxq/comm/mpi_check.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/cli.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/proxy.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/probes/pt2pt.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace {

using pxq::comm::check_mpi;
using pxq::common::fmt;
using pxq::probes::fill;
using pxq::probes::round_trip;
using pxq::probes::wrong_bytes;

const std::vector<std::string> kPointToPoint{"latency", "bw", "bibw", "mbw_mr"};
const std::vector<std::string> kCollectives{"allreduce", "bcast", "alltoall", "barrier"};
constexpr std::size_t kLarge = 8192;  // OSU's large-message threshold for its default counts

struct OsuOptions {
  std::string test = "latency";
  std::string sizes;                 // -m: MIN:MAX, MAX or MIN: (empty: OSU's default range)
  long iterations = 0, warmup = -1;  // -i, -x (0 and -1: OSU's defaults for the size)
  int window = 64;                   // -W
  bool full = false, validate = false;
};

void add_osu_options(pxq::cli::App& app, OsuOptions& o) {
  std::vector<std::string> tests = kPointToPoint;
  tests.insert(tests.end(), kCollectives.begin(), kCollectives.end());
  app.add_option("test", o.test, "latency, bw, bibw, mbw_mr, allreduce, bcast, alltoall or barrier")->member(tests);
  app.add_option("-m,--message-size", o.sizes, "sizes MIN:MAX, MAX or MIN: (bytes, K/M suffixes), as OSU's -m");
  app.add_option("-i,--iterations", o.iterations, "timed iterations per size (default OSU's: fewer for large)");
  app.add_option("-x,--warmup", o.warmup, "untimed iterations per size first (default OSU's)");
  app.add_option("-W,--window-size", o.window, "messages in flight per window: bw, bibw, mbw_mr (default 64)");
  app.add_flag("-f,--full", o.full, "collectives: min and max over the ranks and the iterations too");
  app.add_flag("-c,--validation", o.validate, "check the data every size delivers (a Validation column)");
}

bool is_p2p(const std::string& test) {
  return test != "allreduce" && test != "bcast" && test != "alltoall" && test != "barrier";
}

struct Plan {
  std::vector<std::size_t> sizes;
  std::size_t largest = 0;
};

std::size_t parse_size(const std::string& text) { return text == "0" ? 0 : pxq::tiling::parse_bytes(text); }

// The sizes: powers of two from MIN to MAX (and 0 for latency when MIN is 0), as OSU steps.
Plan plan_of(const pxq::common::MpiWorld& w, const OsuOptions& o) {
  const bool p2p = is_p2p(o.test);
  if (p2p && o.test != "mbw_mr" && w.size != 2)
    throw std::invalid_argument("osu " + o.test +
                                " runs on 2 ranks, as OSU's does: use --layout 1x2 (one node) or 2x1");
  if (o.test == "mbw_mr" && w.size % 2 != 0)
    throw std::invalid_argument("osu mbw_mr pairs rank i with rank i + N/2: use an even number of ranks");
  if (p2p && o.full) throw std::invalid_argument("-f (full statistics) belongs to the collective tests, as in OSU");
  if (o.window < 1) throw std::invalid_argument("-W must be at least 1");
  if (o.iterations < 0) throw std::invalid_argument("-i must be at least 1");
  if (o.warmup < -1) throw std::invalid_argument("-x must be 0 or more");
  std::size_t lo = o.test == "latency" ? 0 : 1, hi = p2p ? (std::size_t{4} << 20) : (std::size_t{1} << 20);
  if (!o.sizes.empty()) {
    const auto colon = o.sizes.find(':');
    if (colon == std::string::npos) {
      hi = parse_size(o.sizes);
    } else {
      if (colon > 0) lo = parse_size(o.sizes.substr(0, colon));
      if (colon + 1 < o.sizes.size()) hi = parse_size(o.sizes.substr(colon + 1));
    }
  }
  if (hi < lo) throw std::invalid_argument("-m " + o.sizes + ": MAX is below MIN");
  if (hi > (std::size_t{1} << 30)) throw std::invalid_argument("-m " + o.sizes + ": messages above 1G");
  Plan p;
  if (o.test == "barrier") {
    p.sizes = {0};
    return p;
  }
  if (lo == 0 && o.test == "latency") p.sizes.push_back(0);
  // A reduction of doubles moves whole doubles: sizes below one are left out (OSU starts at 4).
  const std::size_t smallest = o.test == "allreduce" ? sizeof(double) : 1;
  for (std::size_t b = 1; b <= hi; b *= 2)
    if (b >= lo && b >= smallest) p.sizes.push_back(b);
  if (p.sizes.empty())
    throw std::invalid_argument("-m " + o.sizes + ": no power of two between MIN and MAX" +
                                (o.test == "allreduce" ? " (allreduce: 8 bytes or more)" : ""));
  p.largest = p.sizes.back();
  return p;
}

long iterations_for(const OsuOptions& o, std::size_t bytes) {
  if (o.iterations > 0) return o.iterations;
  const bool large = bytes > kLarge;
  if (o.test == "latency") return large ? 1000 : 10000;
  if (is_p2p(o.test)) return large ? 20 : 100;
  return large ? 100 : 1000;
}
long warmup_for(const OsuOptions& o, std::size_t bytes) {
  if (o.warmup >= 0) return o.warmup;
  const bool large = bytes > kLarge;
  if (o.test == "latency") return large ? 10 : 100;
  if (is_p2p(o.test)) return large ? 2 : 10;
  return large ? 10 : 200;
}

struct Row {
  std::size_t bytes = 0;
  double value = 0, min = 0, max = 0, rate = 0;  // us or MB/s; min/max over ranks; messages/s
  long iterations = 0;
  long wrong = -1;  // -1: not validated
};

struct Ctx {
  const pxq::common::MpiWorld& w;
  const OsuOptions& o;
  std::vector<unsigned char> s, r;
};

// After the timed loop, one message each way with a fresh pattern, checked on arrival.
long validate_pair(Ctx& c, int peer, bool first, std::size_t bytes, long stamp) {
  fill(c.s.data(), bytes, stamp);
  round_trip(c.s.data(), c.r.data(), static_cast<int>(bytes), peer, first, 7, c.w.comm);
  return wrong_bytes(c.r.data(), bytes, stamp);
}

// Rank 0 and 1: round trips; one-way latency in us (on rank 0).
Row latency(Ctx& c, std::size_t bytes) {
  const long iters = iterations_for(c.o, bytes), skip = warmup_for(c.o, bytes);
  const bool first = c.w.rank == 0;
  const int peer = 1 - c.w.rank, n = static_cast<int>(bytes);
  check_mpi(MPI_Barrier(c.w.comm), "MPI_Barrier");
  double t0 = 0;
  for (long i = 0; i < iters + skip; ++i) {
    if (i == skip) t0 = MPI_Wtime();
    round_trip(c.s.data(), c.r.data(), n, peer, first, 1, c.w.comm);
  }
  Row row{bytes, (MPI_Wtime() - t0) * 1e6 / (2.0 * static_cast<double>(iters))};
  row.iterations = iters;
  if (c.o.validate) row.wrong = validate_pair(c, peer, first, bytes, static_cast<long>(bytes) + 3);
  return row;
}

// Windows of non-blocking messages, one 4-byte ack each: MB/s (10^6 bytes) per rank pair.
// bw: the first half sends; bibw: both directions at once; mbw_mr: all pairs at once.
Row bandwidth(Ctx& c, std::size_t bytes) {
  const long iters = iterations_for(c.o, bytes), skip = warmup_for(c.o, bytes);
  const int half = c.w.size / 2, n = static_cast<int>(bytes), win = c.o.window;
  const bool sender = c.w.rank < half, both = c.o.test == "bibw";
  const int peer = sender ? c.w.rank + half : c.w.rank - half;
  std::vector<MPI_Request> reqs(static_cast<std::size_t>(2 * win));
  unsigned char ack[4] = {0, 0, 0, 0};
  check_mpi(MPI_Barrier(c.w.comm), "MPI_Barrier");
  double t0 = 0;
  for (long i = 0; i < iters + skip; ++i) {
    if (i == skip) t0 = MPI_Wtime();
    int k = 0;
    for (int m = 0; m < win; ++m) {
      if (sender || both) MPI_Isend(c.s.data(), n, MPI_BYTE, peer, 2, c.w.comm, &reqs[static_cast<std::size_t>(k++)]);
      if (!sender || both) MPI_Irecv(c.r.data(), n, MPI_BYTE, peer, 2, c.w.comm, &reqs[static_cast<std::size_t>(k++)]);
    }
    MPI_Waitall(k, reqs.data(), MPI_STATUSES_IGNORE);
    if (sender)
      MPI_Recv(ack, 4, MPI_BYTE, peer, 3, c.w.comm, MPI_STATUS_IGNORE);
    else
      MPI_Send(ack, 4, MPI_BYTE, peer, 3, c.w.comm);
  }
  const double mine = MPI_Wtime() - t0;
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, c.w.comm);
  const double moved = static_cast<double>(bytes) * static_cast<double>(iters) * win * (both ? 2 : 1);
  const int pairs = c.o.test == "mbw_mr" ? half : 1;
  Row row{bytes, moved * pairs / slowest / 1e6};
  row.rate = row.value * 1e6 / static_cast<double>(bytes);
  row.iterations = iters;
  if (c.o.validate) row.wrong = validate_pair(c, peer, sender, bytes, static_cast<long>(bytes) + 5);
  return row;
}

// The expected contents of collective buffers, for -c.
double reduce_in(int rank, std::size_t i) { return static_cast<double>(rank + 1) + static_cast<double>(i % 7); }

// One collective call of the test on `bytes` (per peer for alltoall); its own buffers.
void call(Ctx& c, std::size_t bytes) {
  const int n = static_cast<int>(bytes);
  if (c.o.test == "allreduce") {
    const int count = n / static_cast<int>(sizeof(double));
    MPI_Allreduce(c.s.data(), c.r.data(), count, MPI_DOUBLE, MPI_SUM, c.w.comm);
  } else if (c.o.test == "bcast") {
    MPI_Bcast(c.s.data(), n, MPI_BYTE, 0, c.w.comm);
  } else if (c.o.test == "alltoall") {
    MPI_Alltoall(c.s.data(), n, MPI_BYTE, c.r.data(), n, MPI_BYTE, c.w.comm);
  } else {
    MPI_Barrier(c.w.comm);
  }
}

// One checked call with known contents: wrong bytes (or elements) on this rank.
long validate_collective(Ctx& c, std::size_t bytes) {
  long bad = 0;
  const int size = c.w.size, me = c.w.rank;
  if (c.o.test == "allreduce") {
    const std::size_t count = bytes / sizeof(double);
    auto* in = reinterpret_cast<double*>(c.s.data());
    for (std::size_t i = 0; i < count; ++i) in[i] = reduce_in(me, i);
    call(c, bytes);
    const auto* out = reinterpret_cast<const double*>(c.r.data());
    for (std::size_t i = 0; i < count; ++i) {
      double want = 0;
      for (int r = 0; r < size; ++r) want += reduce_in(r, i);
      bad += out[i] != want;
    }
  } else if (c.o.test == "bcast") {
    if (me == 0) fill(c.s.data(), bytes, 11);
    call(c, bytes);
    bad += wrong_bytes(c.s.data(), bytes, 11);
  } else if (c.o.test == "alltoall") {
    for (int peer = 0; peer < size; ++peer)
      fill(c.s.data() + static_cast<std::size_t>(peer) * bytes, bytes, me * size + peer);
    call(c, bytes);
    for (int from = 0; from < size; ++from)
      bad += wrong_bytes(c.r.data() + static_cast<std::size_t>(from) * bytes, bytes, from * size + me);
  }
  return bad;
}

// OSU's collective latency: each rank's mean call time (a barrier between calls, untimed);
// avg, min and max over the ranks, in us, on rank 0.
Row collective(Ctx& c, std::size_t bytes) {
  const long iters = iterations_for(c.o, bytes), skip = warmup_for(c.o, bytes);
  double timer = 0;
  check_mpi(MPI_Barrier(c.w.comm), "MPI_Barrier");
  for (long i = 0; i < iters + skip; ++i) {
    const double t0 = MPI_Wtime();
    call(c, bytes);
    if (i >= skip) timer += MPI_Wtime() - t0;
    MPI_Barrier(c.w.comm);
  }
  const double mine = timer * 1e6 / static_cast<double>(iters);
  double sum = 0, lo = 0, hi = 0;
  MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, c.w.comm);
  MPI_Reduce(&mine, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, c.w.comm);
  MPI_Reduce(&mine, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, c.w.comm);
  Row row{bytes, sum / c.w.size, lo, hi};
  row.iterations = iters;
  if (c.o.validate && c.o.test != "barrier") row.wrong = validate_collective(c, bytes);
  return row;
}

std::string title(const std::string& test) {
  if (test == "latency") return "Latency Test";
  if (test == "bw") return "Bandwidth Test";
  if (test == "bibw") return "Bi-Directional Bandwidth Test";
  if (test == "mbw_mr") return "Multiple Bandwidth / Message Rate Test";
  std::string op = test;
  op[0] = static_cast<char>(op[0] - 'a' + 'A');
  return op + " Latency Test";
}

// OSU's columns: size left in 10, figures right in 18 or 20 with 2 decimals.
std::string table(const std::vector<Row>& rows, const OsuOptions& o, int ranks) {
  std::ostringstream out;
  const bool p2p = is_p2p(o.test), bw = p2p && o.test != "latency";
  out << "# pxq OSU-style MPI " << title(o.test) << " (" << ranks << " ranks)\n";
  if (o.test == "mbw_mr") out << "# [ pairs: " << ranks / 2 << " ] [ window size: " << o.window << " ]\n";
  if (o.test == "barrier")
    out << "# Avg Latency(us)";
  else if (o.test == "mbw_mr")
    out << "# Size                  MB/s        Messages/s";
  else if (bw)
    out << "# Size      Bandwidth (MB/s)";
  else if (p2p)
    out << "# Size          Latency (us)";
  else
    out << "# Size       Avg Latency(us)";
  if (o.full) out << "   Min Latency(us)   Max Latency(us)  Iterations";
  if (o.validate) out << "        Validation";
  out << "\n";
  for (const Row& r : rows) {
    if (o.test != "barrier") out << fmt("%-10.0f", static_cast<double>(r.bytes));
    out << fmt(bw ? "%20.2f" : "%18.2f", r.value);
    if (o.test == "mbw_mr") out << fmt("%20.2f", r.rate);
    if (o.full) out << fmt("%18.2f", r.min) << fmt("%18.2f", r.max) << fmt("%12.0f", static_cast<double>(r.iterations));
    if (o.validate) {
      const std::string verdict = r.wrong < 0 ? "-" : r.wrong == 0 ? "Pass" : "Fail";
      out << std::string(18 - verdict.size(), ' ') << verdict;
    }
    out << "\n";
  }
  return out.str();
}

int run(const pxq::common::MpiWorld& w, const pxq::common::CommonOptions& co, const OsuOptions& o) {
  const Plan plan = plan_of(w, o);
  const pxq::common::Variant variant = pxq::common::resolve_variant(co);
  if (variant.threads != 1 || variant.tile.kind != pxq::tiling::TilePolicy::Kind::off)
    throw std::invalid_argument("the OSU-style probe runs one thread per rank and no tiles: use --mode flat");
  const pxq::common::RunStart start =
      pxq::common::start_run(w, co, variant, std::max<std::size_t>(8, plan.largest), "");
  const std::size_t per_buffer = std::max<std::size_t>(8, plan.largest) * (o.test == "alltoall" ? w.size : 1);
  Ctx c{w, o, std::vector<unsigned char>(per_buffer, 1), std::vector<unsigned char>(per_buffer, 0)};
  std::vector<Row> rows;
  long wrong = 0;
  for (std::size_t bytes : plan.sizes) {
    Row row = is_p2p(o.test) && o.test != "latency" ? bandwidth(c, bytes)
              : o.test == "latency"                 ? latency(c, bytes)
                                                    : collective(c, bytes);
    if (row.wrong >= 0) {  // every rank's count, summed on rank 0
      long all = 0;
      MPI_Reduce(&row.wrong, &all, 1, MPI_LONG, MPI_SUM, 0, w.comm);
      row.wrong = all;
      wrong += all;
    }
    rows.push_back(row);
  }
  nlohmann::json jrows = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json j = {{"bytes", r.bytes}, {"iterations", r.iterations}, {"warmup", warmup_for(o, r.bytes)}};
    if (is_p2p(o.test) && o.test != "latency") {
      j["mb_per_s"] = r.value;
      if (o.test == "mbw_mr") j["messages_per_s"] = r.rate;
    } else {
      j["latency_us"] = r.value;
      if (!is_p2p(o.test)) j.update({{"min_us", r.min}, {"max_us", r.max}});
    }
    if (r.wrong >= 0) j["wrong"] = r.wrong;
    jrows.push_back(j);
  }
  const bool valid = !o.validate || wrong == 0;
  std::string text = table(rows, o, w.size);
  if (o.validate) text += " Validation      = " + std::string(valid ? "PASSED" : "FAILED") + "\n";
  const nlohmann::json body = {{"size",
                                {{"test", o.test},
                                 {"min", plan.sizes.front()},
                                 {"max", plan.sizes.back()},
                                 {"window", o.window},
                                 {"iterations", o.iterations},
                                 {"warmup", o.warmup}}},
                               {"osu", {{"test", o.test}, {"unit", "MB = 10^6 bytes; us"}, {"rows", jrows}}},
                               {"validation", {{"on", o.validate}, {"wrong", wrong}}}};
  return pxq::common::finish_probe(w, co, variant, start, "probe-osu", w.rank != 0 || valid, text,
                                   pxq::common::start_notes(start), body);
}

}  // namespace

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<OsuOptions>(
      argc, argv, "pxq probe osu: the ping-pong and collective probes with OSU's flags and columns", "pxq-probe-osu",
      add_osu_options, run);
}
