// libpxq-msgprof: a PMPI interposition library that counts every point-to-point message
// (blocking, non-blocking, sendrecv, persistent) and every collective call, per (source rank,
// destination rank, size bin), and the messages a standard algorithm would send for each
// collective (a model: see msgmodel.hpp). At MPI_Finalize rank 0 appends one record (JSON
// line) to $PXQ_MSGPROF_OUT (default pxq-msgprof.jsonl) with the sparse rank x rank x bin
// matrices and the observed placement of every rank. Link it, or LD_PRELOAD it into any MPI
// program: C and C++ through the MPI_* symbols; Fortran (mpif.h and `use mpi`, gfortran's
// names) through wrappers of the mpi_*_ symbols that count, then call the MPI library's own.
//
// It also times every wrapped call (the seconds spent inside it, by call name, summed over
// ranks and on the busiest rank) and states what its own timing costs per call. Regions
// between MPI_Pcontrol(0) and MPI_Pcontrol(1) are not counted (pxq's own bookkeeping, or
// any region a user marks): the record says how many calls were left out that way.
//
// With $PXQ_TRACE_DIR set, every counted call is also kept with its start and end (MPI_Wtime,
// the clock of the proxies' phase timers), the OS thread that made it and, for a send, its
// destination and bytes; each rank writes them to $PXQ_TRACE_DIR/mpi-RANK.json at MPI_Finalize
// (pxq run --trace merges them with the phases into one timeline).
#include <dlfcn.h>
#include <mpi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pxq/comm/msgmodel.hpp"
#include "pxq/comm/placement.hpp"

namespace {

using pxq::comm::kSizeBins;
using pxq::comm::ModelMessage;
using u64 = std::uint64_t;

struct Pending {  // a persistent send: counted at every MPI_Start
  int dst_world = -1;
  u64 bytes = 0;
};

struct Timing {  // one MPI call's calls and seconds inside it, on one rank
  u64 calls = 0;
  double seconds = 0.0;
};

struct Dest {  // where a send goes: a world rank (-1: none) and its bytes
  int peer = -1;
  u64 bytes = 0;
};

struct Event {  // one call kept for the trace
  const char* name;
  double t0, t1;  // MPI_Wtime
  long tid;
  Dest to;
};

constexpr std::size_t kMaxEvents = std::size_t{1} << 21;  // a bound on memory: the rest are counted
constexpr int kGatherTag = 31457;                         // rank 0's rank-by-rank gather of a large profile

// The trace's folder, or nullptr when no trace was asked for (read once).
const char* trace_dir() {
  static const char* dir = [] {
    const char* d = std::getenv("PXQ_TRACE_DIR");
    return d != nullptr && *d != '\0' ? d : nullptr;
  }();
  return dir;
}

struct State {
  std::mutex m;
  bool ready = false, quiet = false;                // quiet: the profiler's own calls at finalize
  bool paused = false;                              // between MPI_Pcontrol(0) and MPI_Pcontrol(1)
  u64 excluded = 0;                                 // calls made while paused
  std::map<std::string, Timing, std::less<>> time;  // MPI call name -> calls, seconds
  int world_size = 0, world_rank = 0;
  std::vector<u64> p2p_count, p2p_bytes, model_count, model_bytes;  // [dst * kSizeBins + bin]
  std::map<std::string, std::pair<u64, u64>> calls;                 // collective -> calls, bytes given
  std::unordered_map<MPI_Comm, std::vector<int>> world_of;          // communicator rank -> world rank
  std::unordered_map<MPI_Request, Pending> persistent;
  std::vector<Event> events;  // with a trace asked for
  u64 dropped = 0;            // events beyond kMaxEvents
};

State& state() {
  static State s;
  return s;
}

// Called with the lock held.
bool ready(State& s) {
  if (s.quiet) return false;
  if (!s.ready) {
    int init = 0, done = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&done);
    if (!init || done) return false;
    PMPI_Comm_size(MPI_COMM_WORLD, &s.world_size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
    const std::size_t cells = static_cast<std::size_t>(s.world_size) * kSizeBins;
    s.p2p_count.assign(cells, 0);
    s.p2p_bytes.assign(cells, 0);
    s.model_count.assign(cells, 0);
    s.model_bytes.assign(cells, 0);
    s.ready = true;
  }
  return true;
}

int to_world(State& s, MPI_Comm comm, int rank) {
  if (rank < 0) return -1;  // MPI_PROC_NULL and friends
  if (comm == MPI_COMM_WORLD) return rank;
  auto it = s.world_of.find(comm);
  if (it == s.world_of.end()) {
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group group, world;
    if (inter)
      PMPI_Comm_remote_group(comm, &group);
    else
      PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int n = 0;
    PMPI_Group_size(group, &n);
    std::vector<int> ranks(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
    PMPI_Group_translate_ranks(group, n, ranks.data(), world, out.data());
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    it = s.world_of.emplace(comm, std::move(out)).first;
  }
  return rank < static_cast<int>(it->second.size()) ? it->second[static_cast<std::size_t>(rank)] : -1;
}

u64 bytes_of(int count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<u64>(count) * static_cast<u64>(size);
}

void add(std::vector<u64>& count, std::vector<u64>& bytes, int dst_world, u64 b) {
  if (dst_world < 0) return;
  const std::size_t i =
      static_cast<std::size_t>(dst_world) * kSizeBins + static_cast<std::size_t>(pxq::comm::size_bin(b));
  if (i >= count.size()) return;
  ++count[i];
  bytes[i] += b;
}

// Whether a call is counted now (called with the lock held); calls in a paused region are
// tallied as excluded.
bool counting(State& s) {
  if (!ready(s)) return false;
  if (s.paused) ++s.excluded;
  return !s.paused;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Whether MPI_Wtime may be read now (between MPI_Init and MPI_Finalize).
bool clock_ready() {
  int init = 0, done = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(&done);
  return init && !done;
}

// The seconds inside one MPI call, added to its name's total when it returns; with a trace
// asked for, the call itself is kept too.
class Timed {
 public:
  explicit Timed(const char* name)
      : name_(name), t0_(now()), w0_(trace_dir() != nullptr && clock_ready() ? PMPI_Wtime() : -1.0) {}
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;
  ~Timed() {
    const double dt = now() - t0_;
    const double w1 = w0_ >= 0.0 ? PMPI_Wtime() : -1.0;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.m);
    if (!ready(s) || s.paused) return;
    auto it = s.time.find(std::string_view(name_));  // no string built once the name is known
    if (it == s.time.end()) it = s.time.emplace(name_, Timing{}).first;
    ++it->second.calls;
    it->second.seconds += dt;
    if (w0_ < 0.0) return;
    if (s.events.size() >= kMaxEvents) {
      ++s.dropped;
      return;
    }
    s.events.push_back({name_, w0_, w1, static_cast<long>(::syscall(SYS_gettid)), to_});
  }
  // A send's destination, for the trace.
  void to(Dest d) { to_ = d; }

 private:
  const char* name_;
  double t0_, w0_;
  Dest to_;
};

// What timing one call costs: the best of several loops of what Timed does, in nanoseconds.
double timer_overhead_ns() {
  std::mutex m;
  std::map<std::string, Timing, std::less<>> scratch;
  double best = 1e30;
  constexpr int kLoops = 5, kCalls = 20000;
  for (int loop = 0; loop < kLoops; ++loop) {
    const double t0 = now();
    for (int i = 0; i < kCalls; ++i) {
      const double t = now();
      std::lock_guard<std::mutex> lock(m);
      auto it = scratch.find(std::string_view("MPI_Overhead"));
      if (it == scratch.end()) it = scratch.emplace("MPI_Overhead", Timing{}).first;
      ++it->second.calls;
      it->second.seconds += now() - t;
    }
    best = std::min(best, (now() - t0) / kCalls * 1e9);
  }
  return best;
}

Dest send(MPI_Comm comm, int dst, int count, MPI_Datatype type) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!counting(s)) return {};
  const Dest d{to_world(s, comm, dst), bytes_of(count, type)};
  add(s.p2p_count, s.p2p_bytes, d.peer, d.bytes);
  return d;
}

// A collective call: counted by name, and its modelled messages (peers are communicator ranks).
void collective(const char* name, MPI_Comm comm, u64 given, const std::vector<ModelMessage>& model) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!counting(s)) return;
  auto& c = s.calls[name];
  ++c.first;
  c.second += given;
  for (const auto& m : model) add(s.model_count, s.model_bytes, to_world(s, comm, m.peer), m.bytes);
}

struct CommInfo {
  int me = 0, n = 1;
};
CommInfo info(MPI_Comm comm) {
  CommInfo c;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return {0, 0};  // intercommunicator collectives are counted, not modelled
  PMPI_Comm_rank(comm, &c.me);
  PMPI_Comm_size(comm, &c.n);
  return c;
}

nlohmann::json entries(const std::vector<u64>& all) {
  // all: every rank's rows of (src, dst, bin, count, bytes), concatenated.
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i + 5 <= all.size(); i += 5)
    out.push_back({all[i], all[i + 1], all[i + 2], all[i + 3], all[i + 4]});
  return out;
}

std::vector<u64> rows(const State& s, const std::vector<u64>& count, const std::vector<u64>& bytes) {
  std::vector<u64> out;
  for (std::size_t i = 0; i < count.size(); ++i)
    if (count[i]) {
      out.push_back(static_cast<u64>(s.world_rank));
      out.push_back(i / kSizeBins);
      out.push_back(i % kSizeBins);
      out.push_back(count[i]);
      out.push_back(bytes[i]);
    }
  return out;
}

// Every rank's `mine` concatenated in rank order on rank 0; `counts` gets each rank's length.
// One MPI_Gatherv while the total fits its int displacements; beyond (an all-to-all profile
// of some 15,000 ranks), rank 0 receives rank by rank, its offsets in 64 bits: never an
// overflowed count.
// The largest total one MPI_Gatherv takes: INT_MAX, or PXQ_MSGPROF_GATHER_MAX (lower, for tests
// of the rank-by-rank path on a few ranks).
std::int64_t gather_max() {
  const char* given = std::getenv("PXQ_MSGPROF_GATHER_MAX");
  const long long v = given != nullptr ? std::strtoll(given, nullptr, 10) : 0;
  return v > 0 && v < std::numeric_limits<int>::max() ? v : std::numeric_limits<int>::max();
}

template <typename Buf>
Buf gather_all(const Buf& mine, MPI_Datatype type, int rank, int size, std::vector<int>& counts) {
  if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("message profile: one rank's table exceeds an MPI count");
  int n = static_cast<int>(mine.size());
  counts.assign(static_cast<std::size_t>(size), 0);
  PMPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::int64_t total = 0;
  for (int c : counts) total += c;
  int fits = total <= gather_max() ? 1 : 0;
  PMPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
  Buf all(rank == 0 ? static_cast<std::size_t>(total) : 0, typename Buf::value_type{});
  if (fits) {
    std::vector<int> displs(static_cast<std::size_t>(size));
    int at = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<std::size_t>(r)] = at;
      at += counts[static_cast<std::size_t>(r)];
    }
    PMPI_Gatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, 0, MPI_COMM_WORLD);
    return all;
  }
  if (rank != 0) {
    PMPI_Send(mine.data(), n, type, 0, kGatherTag, MPI_COMM_WORLD);
    return all;
  }
  std::copy(mine.begin(), mine.end(), all.begin());
  std::size_t at = mine.size();
  for (int r = 1; r < size; ++r) {
    const int c = counts[static_cast<std::size_t>(r)];
    PMPI_Recv(all.data() + at, c, type, r, kGatherTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    at += static_cast<std::size_t>(c);
  }
  return all;
}

std::vector<u64> gather_rows(const std::vector<u64>& mine, int rank, int size) {
  std::vector<int> counts;
  return gather_all(mine, MPI_UINT64_T, rank, size, counts);
}

// Every rank's text, in rank order, on rank 0.
void gather_text(const std::string& mine, int rank, int size, std::vector<std::string>& out) {
  std::vector<int> counts;
  const std::string all = gather_all(mine, MPI_CHAR, rank, size, counts);
  std::size_t at = 0;
  if (rank == 0)
    for (int c : counts) {
      out.push_back(all.substr(at, static_cast<std::size_t>(c)));
      at += static_cast<std::size_t>(c);
    }
}

std::string program() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (char& c : text)
    if (c == '\0') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// Every rank's call counts, times and exclusions merged on rank 0: {"collectives": ...,
// "time": {call: {calls, seconds (summed over ranks), max_rank_seconds}}, "excluded": n}.
nlohmann::json merge_ranks(const State& s) {
  nlohmann::json mine = {{"calls", nlohmann::json::object()}, {"time", nlohmann::json::object()}};
  for (const auto& [name, c] : s.calls) mine["calls"][name] = {c.first, c.second};
  for (const auto& [name, t] : s.time) mine["time"][name] = {t.calls, t.seconds};
  mine["excluded"] = s.excluded;
  std::vector<std::string> texts;
  gather_text(mine.dump(), s.world_rank, s.world_size, texts);
  nlohmann::json calls = nlohmann::json::object(), time = nlohmann::json::object();
  u64 excluded = 0;
  for (const auto& text : texts) {
    const nlohmann::json theirs = nlohmann::json::parse(text);
    for (const auto& [name, c] : theirs["calls"].items()) {
      auto& dst = calls[name];
      if (dst.is_null()) dst = {{"calls", 0}, {"bytes", 0}};
      dst["calls"] = dst["calls"].get<u64>() + c[0].get<u64>();
      dst["bytes"] = dst["bytes"].get<u64>() + c[1].get<u64>();
    }
    for (const auto& [name, t] : theirs["time"].items()) {
      auto& dst = time[name];
      if (dst.is_null()) dst = {{"calls", 0}, {"seconds", 0.0}, {"max_rank_seconds", 0.0}};
      dst["calls"] = dst["calls"].get<u64>() + t[0].get<u64>();
      dst["seconds"] = dst["seconds"].get<double>() + t[1].get<double>();
      dst["max_rank_seconds"] = std::max(dst["max_rank_seconds"].get<double>(), t[1].get<double>());
    }
    excluded += theirs["excluded"].get<u64>();
  }
  return {{"collectives", calls}, {"time", time}, {"excluded", excluded}};
}

// The cost of the timing itself, measured on this rank, against the time it measured.
nlohmann::json overhead(const nlohmann::json& time, int ranks) {
  const double per_call = timer_overhead_ns();
  u64 calls = 0;
  double inside = 0.0;
  for (const auto& [name, t] : time.items()) {
    calls += t["calls"].get<u64>();
    inside += t["seconds"].get<double>();
  }
  const double seconds = static_cast<double>(calls) * per_call * 1e-9;
  return {{"per_call_ns", per_call},
          {"timed_calls", calls},
          {"seconds_per_rank", ranks > 0 ? seconds / ranks : 0.0},
          {"share_of_time_in_mpi", inside > 0 ? seconds / inside : 0.0},
          {"how", "rank 0 times 5 loops of 20000 timer reads and tallies and keeps the fastest"}};
}

void write_record(State& s) {
  const auto placement = pxq::comm::observe_placement(MPI_COMM_WORLD, 1);  // quiet: not counted
  const auto p2p = gather_rows(rows(s, s.p2p_count, s.p2p_bytes), s.world_rank, s.world_size);
  const auto model = gather_rows(rows(s, s.model_count, s.model_bytes), s.world_rank, s.world_size);
  const nlohmann::json merged = merge_ranks(s);
  if (s.world_rank != 0) return;

  nlohmann::json places = nlohmann::json::array();
  for (const auto& p : placement) places.push_back(pxq::comm::to_json(p));
  nlohmann::json upper = nlohmann::json::array();
  for (int b = 0; b < kSizeBins; ++b) upper.push_back(pxq::comm::bin_upper_bytes(b));
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  PMPI_Get_library_version(version, &len);
  char date[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  const char* driver = std::getenv("PXQ_MSGPROF_DRIVER");
  nlohmann::json rec = {
      {"kind", "profile"},
      {"schema", 2},
      {"app", "msgprof"},
      {"status", "ok"},
      {"program", program()},
      {"ranks", s.world_size},
      {"bins", {{"kind", "bin 0: 0 B; bin k: (2^(k-2), 2^(k-1)] B"}, {"upper_bytes", upper}}},
      {"columns", {"src", "dst", "bin", "count", "bytes"}},
      {"p2p", entries(p2p)},
      {"collective_model", entries(model)},
      {"collectives", merged["collectives"]},
      {"time_in_mpi", merged["time"]},
      {"overhead", overhead(merged["time"], s.world_size)},
      {"excluded", {{"calls", merged["excluded"]}, {"how", "calls between MPI_Pcontrol(0) and MPI_Pcontrol(1)"}}},
      {"model",
       "a model of what the MPI library probably sends: all-to-all one message to each peer, allreduce "
       "recursive doubling, bcast and reduce binomial trees, allgather a ring, gather and scatter linear, "
       "barrier dissemination; the real library may choose other algorithms"},
      {"placement", places},
      {"context", {{"mpi_library", std::string(version, static_cast<std::size_t>(len))}, {"date", date}}},
      {"driver", driver ? nlohmann::json::parse(driver, nullptr, false) : nlohmann::json::object()}};
  const char* path = std::getenv("PXQ_MSGPROF_OUT");
  const std::string out = path && *path ? path : "pxq-msgprof.jsonl";
  std::ofstream f(out, std::ios::app);
  f << rec.dump() << "\n";
  f.flush();
  if (!f)
    std::fprintf(stderr, "pxq-msgprof: error: cannot append the record to %s\n", out.c_str());
  else
    std::fprintf(stderr, "pxq-msgprof: record appended to %s\n", out.c_str());
}

// This rank's kept calls, to $PXQ_TRACE_DIR/mpi-RANK.json (every rank writes its own).
void write_trace(const State& s) {
  if (trace_dir() == nullptr) return;
  const std::string path = std::string(trace_dir()) + "/mpi-" + std::to_string(s.world_rank) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "pxq-msgprof: rank %d: error: cannot write the trace file %s\n", s.world_rank, path.c_str());
    return;
  }
  std::map<const char*, int> index;
  nlohmann::json names = nlohmann::json::array();
  for (const Event& e : s.events)
    if (index.emplace(e.name, static_cast<int>(index.size())).second) names.push_back(e.name);
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const nlohmann::json head = {{"rank", s.world_rank},
                               {"pid", static_cast<long>(::getpid())},
                               {"host", host},
                               {"clock", "MPI_Wtime"},
                               {"names", names},
                               {"dropped", s.dropped},
                               {"columns", {"name", "start", "end", "tid", "peer", "bytes"}}};
  std::string text = head.dump();
  text.pop_back();  // the events follow as one array, written without building a JSON tree
  std::fputs(text.c_str(), f);
  std::fputs(",\"events\":[", f);
  bool first = true;
  for (const Event& e : s.events) {
    std::fprintf(f, "%s[%d,%.17g,%.17g,%ld,%d,%llu]", first ? "" : ",", index[e.name], e.t0, e.t1, e.tid, e.to.peer,
                 static_cast<unsigned long long>(e.to.bytes));
    first = false;
  }
  std::fputs("]}\n", f);
  const bool ok = std::fflush(f) == 0 && std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok)
    std::fprintf(stderr, "pxq-msgprof: rank %d: error: could not finish the trace file %s\n", s.world_rank,
                 path.c_str());
}

std::vector<u64> blocks(const int* counts, MPI_Datatype type, int n) {
  std::vector<u64> out(static_cast<std::size_t>(n), 0);
  if (counts)
    for (int k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = bytes_of(counts[k], type);
  return out;
}

// ---- what each collective sends (the C and the Fortran wrappers share these) ----
void note_barrier(MPI_Comm comm) {
  const CommInfo c = info(comm);
  collective("barrier", comm, 0, pxq::comm::barrier_sends(c.me, c.n));
}
void note_bcast(MPI_Comm comm, u64 b, int root) {
  const CommInfo c = info(comm);
  collective("bcast", comm, c.me == root ? b : 0, pxq::comm::bcast_sends(c.me, root, c.n, b));
}
void note_reduce(MPI_Comm comm, u64 b, int root) {
  const CommInfo c = info(comm);
  collective("reduce", comm, b, pxq::comm::reduce_sends(c.me, root, c.n, b));
}
void note_allreduce(MPI_Comm comm, u64 b) {
  const CommInfo c = info(comm);
  collective("allreduce", comm, b, pxq::comm::allreduce_sends(c.me, c.n, b));
}
void note_alltoall(MPI_Comm comm, u64 b) {  // b: bytes per peer
  const CommInfo c = info(comm);
  collective("alltoall", comm, b * static_cast<u64>(c.n > 0 ? c.n - 1 : 0), pxq::comm::alltoall_sends(c.me, c.n, b));
}
void note_alltoallv(MPI_Comm comm, const int* counts, MPI_Datatype type) {
  const CommInfo c = info(comm);
  const auto b = blocks(counts, type, c.n);
  std::vector<ModelMessage> model;
  u64 given = 0;
  for (int k = 1; k < c.n; ++k) {
    const int peer = (c.me + k) % c.n;
    model.push_back({peer, b[static_cast<std::size_t>(peer)]});
    given += b[static_cast<std::size_t>(peer)];
  }
  collective("alltoallv", comm, given, model);
}
void note_allgather(MPI_Comm comm, u64 b) {
  const CommInfo c = info(comm);
  collective("allgather", comm, b,
             pxq::comm::allgather_sends(c.me, c.n, std::vector<u64>(static_cast<std::size_t>(c.n), b)));
}
void note_allgatherv(MPI_Comm comm, const int* counts, MPI_Datatype type) {
  const CommInfo c = info(comm);
  const auto b = blocks(counts, type, c.n);
  collective("allgatherv", comm, c.n > 0 ? b[static_cast<std::size_t>(c.me)] : 0,
             pxq::comm::allgather_sends(c.me, c.n, b));
}
void note_gather(const char* name, MPI_Comm comm, u64 b, int root) {
  const CommInfo c = info(comm);
  collective(name, comm, b, pxq::comm::gather_sends(c.me, root, c.n, b));
}
void note_scatter(MPI_Comm comm, u64 b, int root) {  // b: bytes per member, significant at the root
  const CommInfo c = info(comm);
  const u64 given = c.me == root ? b : 0;
  collective("scatter", comm, given * static_cast<u64>(c.n > 0 ? c.n - 1 : 0),
             pxq::comm::scatter_sends(c.me, root, c.n, std::vector<u64>(static_cast<std::size_t>(c.n), given)));
}

void pcontrol(int level) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (level == 0) s.paused = true;
  if (level == 1) s.paused = false;
}

void remember_persistent(MPI_Request req, MPI_Comm comm, int dst, int count, MPI_Datatype type) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (ready(s)) s.persistent[req] = {to_world(s, comm, dst), bytes_of(count, type)};
}

Dest started(MPI_Request req) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!counting(s)) return {};
  auto it = s.persistent.find(req);
  if (it == s.persistent.end()) return {};
  add(s.p2p_count, s.p2p_bytes, it->second.dst_world, it->second.bytes);
  return {it->second.dst_world, it->second.bytes};
}

}  // namespace

extern "C" {

// ---- point to point: sends counted and timed, receives, waits and tests timed ----
// The sends of one signature share their wrapper, written once.
#define PXQ_BLOCKING_SEND(name)                                                                    \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm) { \
    Timed timed("MPI_" #name);                                                                     \
    timed.to(send(comm, dst, count, type));                                                        \
    return PMPI_##name(buf, count, type, dst, tag, comm);                                          \
  }
#define PXQ_REQUEST_SEND(name)                                                                                       \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm, MPI_Request* req) { \
    Timed timed("MPI_" #name);                                                                                       \
    timed.to(send(comm, dst, count, type));                                                                          \
    return PMPI_##name(buf, count, type, dst, tag, comm, req);                                                       \
  }
#define PXQ_PERSISTENT_SEND(name)                                                                                    \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm, MPI_Request* req) { \
    const int rc = PMPI_##name(buf, count, type, dst, tag, comm, req);                                               \
    if (rc == MPI_SUCCESS) remember_persistent(*req, comm, dst, count, type);                                        \
    return rc;                                                                                                       \
  }
PXQ_BLOCKING_SEND(Send)
PXQ_BLOCKING_SEND(Bsend)
PXQ_BLOCKING_SEND(Ssend)
PXQ_BLOCKING_SEND(Rsend)
PXQ_REQUEST_SEND(Isend)
PXQ_REQUEST_SEND(Ibsend)
PXQ_REQUEST_SEND(Issend)
PXQ_REQUEST_SEND(Irsend)
PXQ_PERSISTENT_SEND(Send_init)
PXQ_PERSISTENT_SEND(Bsend_init)
PXQ_PERSISTENT_SEND(Ssend_init)
PXQ_PERSISTENT_SEND(Rsend_init)
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dst, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  Timed timed("MPI_Sendrecv");
  timed.to(send(comm, dst, scount, stype));
  return PMPI_Sendrecv(sbuf, scount, stype, dst, stag, rbuf, rcount, rtype, src, rtag, comm, status);
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dst, int stag, int src, int rtag, MPI_Comm comm,
                         MPI_Status* status) {
  Timed timed("MPI_Sendrecv_replace");
  timed.to(send(comm, dst, count, type));
  return PMPI_Sendrecv_replace(buf, count, type, dst, stag, src, rtag, comm, status);
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Status* status) {
  Timed timed("MPI_Recv");
  return PMPI_Recv(buf, count, type, src, tag, comm, status);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Request* req) {
  Timed timed("MPI_Irecv");
  return PMPI_Irecv(buf, count, type, src, tag, comm, req);
}
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  Timed timed("MPI_Wait");
  return PMPI_Wait(req, status);
}
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  Timed timed("MPI_Waitall");
  return PMPI_Waitall(n, reqs, statuses);
}
int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  Timed timed("MPI_Waitany");
  return PMPI_Waitany(n, reqs, index, status);
}
int MPI_Waitsome(int n, MPI_Request reqs[], int* done, int indices[], MPI_Status statuses[]) {
  Timed timed("MPI_Waitsome");
  return PMPI_Waitsome(n, reqs, done, indices, statuses);
}
int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  Timed timed("MPI_Test");
  return PMPI_Test(req, flag, status);
}
int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  Timed timed("MPI_Testall");
  return PMPI_Testall(n, reqs, flag, statuses);
}
int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status* status) {
  Timed timed("MPI_Probe");
  return PMPI_Probe(src, tag, comm, status);
}
int MPI_Iprobe(int src, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Timed timed("MPI_Iprobe");
  return PMPI_Iprobe(src, tag, comm, flag, status);
}

// ---- persistent sends: counted at every start ----
int MPI_Start(MPI_Request* req) {
  Timed timed("MPI_Start");
  timed.to(started(*req));
  return PMPI_Start(req);
}
int MPI_Startall(int n, MPI_Request reqs[]) {
  Timed timed("MPI_Startall");
  for (int i = 0; i < n; ++i) started(reqs[i]);
  return PMPI_Startall(n, reqs);
}
int MPI_Request_free(MPI_Request* req) {
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.m);
    s.persistent.erase(*req);
  }
  return PMPI_Request_free(req);
}
int MPI_Comm_free(MPI_Comm* comm) {
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.m);
    s.world_of.erase(*comm);
  }
  return PMPI_Comm_free(comm);
}

// ---- regions left out: MPI_Pcontrol(0) pauses counting, MPI_Pcontrol(1) resumes it ----
int MPI_Pcontrol(const int level, ...) {
  pcontrol(level);
  return MPI_SUCCESS;
}

// ---- collectives: counted by name, modelled as point-to-point messages, timed ----
int MPI_Barrier(MPI_Comm comm) {
  Timed timed("MPI_Barrier");
  note_barrier(comm);
  return PMPI_Barrier(comm);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  Timed timed("MPI_Bcast");
  note_bcast(comm, bytes_of(count, type), root);
  return PMPI_Bcast(buf, count, type, root, comm);
}
int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  Timed timed("MPI_Reduce");
  note_reduce(comm, bytes_of(count, type), root);
  return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
}
int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Timed timed("MPI_Allreduce");
  note_allreduce(comm, bytes_of(count, type));
  return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}
int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  Timed timed("MPI_Alltoall");
  note_alltoall(comm, sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype));
  return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}
int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  Timed timed("MPI_Alltoallv");
  const bool in_place = sbuf == MPI_IN_PLACE;
  note_alltoallv(comm, in_place ? rcounts : scounts, in_place ? rtype : stype);
  return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}
int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  Timed timed("MPI_Allgather");
  note_allgather(comm, sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype));
  return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}
int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  Timed timed("MPI_Allgatherv");
  note_allgatherv(comm, rcounts, rtype);
  return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}
int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  Timed timed("MPI_Gather");
  note_gather("gather", comm, sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype), root);
  return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}
int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  Timed timed("MPI_Gatherv");
  note_gather("gatherv", comm, bytes_of(scount, stype), root);
  return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}
int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  Timed timed("MPI_Scatter");
  note_scatter(comm, bytes_of(scount, stype), root);
  return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}
int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Timed timed("MPI_Reduce_scatter");
  collective("reduce_scatter (not modelled)", comm, 0, {});
  return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
}
int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Timed timed("MPI_Scan");
  collective("scan (not modelled)", comm, bytes_of(count, type), {});
  return PMPI_Scan(sbuf, rbuf, count, type, op, comm);
}

// ---- the record ----
int MPI_Finalize(void) {
  State& s = state();
  bool write = false;
  {
    std::lock_guard<std::mutex> lock(s.m);
    write = ready(s);
    s.quiet = true;  // the profiler's own communication below is not counted
  }
  if (write) {
    write_trace(s);
    write_record(s);
  }
  return PMPI_Finalize();
}

// ---- Fortran (gfortran's mpif.h and `use mpi` names): count and time, then call the MPI
// library's own binding. Handles and counts arrive as MPI_Fint pointers. ----
#define PXQ_NEXT(name, type)  \
  static type next = nullptr; \
  if (!next) next = reinterpret_cast<type>(dlsym(RTLD_NEXT, name))
using F = MPI_Fint;
static MPI_Comm fcomm(const F* c) { return MPI_Comm_f2c(*c); }
static MPI_Datatype ftype(const F* t) { return MPI_Type_f2c(*t); }

using FSend = void (*)(void*, F*, F*, F*, F*, F*, F*);
#define PXQ_F_SEND(fname, cname)                              \
  void fname(void* b, F* n, F* t, F* d, F* tag, F* c, F* e) { \
    PXQ_NEXT(#fname, FSend);                                  \
    Timed timed(cname);                                       \
    timed.to(send(fcomm(c), *d, *n, ftype(t)));               \
    next(b, n, t, d, tag, c, e);                              \
  }
PXQ_F_SEND(mpi_send_, "MPI_Send")
PXQ_F_SEND(mpi_bsend_, "MPI_Bsend")
PXQ_F_SEND(mpi_ssend_, "MPI_Ssend")
PXQ_F_SEND(mpi_rsend_, "MPI_Rsend")

using FIsend = void (*)(void*, F*, F*, F*, F*, F*, F*, F*);
#define PXQ_F_ISEND(fname, cname)                                   \
  void fname(void* b, F* n, F* t, F* d, F* tag, F* c, F* r, F* e) { \
    PXQ_NEXT(#fname, FIsend);                                       \
    Timed timed(cname);                                             \
    timed.to(send(fcomm(c), *d, *n, ftype(t)));                     \
    next(b, n, t, d, tag, c, r, e);                                 \
  }
PXQ_F_ISEND(mpi_isend_, "MPI_Isend")
PXQ_F_ISEND(mpi_ibsend_, "MPI_Ibsend")
PXQ_F_ISEND(mpi_issend_, "MPI_Issend")
PXQ_F_ISEND(mpi_irsend_, "MPI_Irsend")

#define PXQ_F_SEND_INIT(fname)                                                                   \
  void fname(void* b, F* n, F* t, F* d, F* tag, F* c, F* r, F* e) {                              \
    PXQ_NEXT(#fname, FIsend);                                                                    \
    next(b, n, t, d, tag, c, r, e);                                                              \
    if (*e == MPI_SUCCESS) remember_persistent(MPI_Request_f2c(*r), fcomm(c), *d, *n, ftype(t)); \
  }
PXQ_F_SEND_INIT(mpi_send_init_)
PXQ_F_SEND_INIT(mpi_bsend_init_)
PXQ_F_SEND_INIT(mpi_ssend_init_)
PXQ_F_SEND_INIT(mpi_rsend_init_)

using FStart = void (*)(F*, F*);
void mpi_start_(F* r, F* e) {
  PXQ_NEXT("mpi_start_", FStart);
  Timed timed("MPI_Start");
  timed.to(started(MPI_Request_f2c(*r)));
  next(r, e);
}
using FStartall = void (*)(F*, F*, F*);
void mpi_startall_(F* n, F* r, F* e) {
  PXQ_NEXT("mpi_startall_", FStartall);
  Timed timed("MPI_Startall");
  for (F i = 0; i < *n; ++i) started(MPI_Request_f2c(r[i]));
  next(n, r, e);
}

using FSendrecv = void (*)(void*, F*, F*, F*, F*, void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_sendrecv_(void* sb, F* sn, F* st, F* d, F* stag, void* rb, F* rn, F* rt, F* src, F* rtag, F* c, F* status,
                   F* e) {
  PXQ_NEXT("mpi_sendrecv_", FSendrecv);
  Timed timed("MPI_Sendrecv");
  timed.to(send(fcomm(c), *d, *sn, ftype(st)));
  next(sb, sn, st, d, stag, rb, rn, rt, src, rtag, c, status, e);
}
using FSendrecvReplace = void (*)(void*, F*, F*, F*, F*, F*, F*, F*, F*, F*);
void mpi_sendrecv_replace_(void* b, F* n, F* t, F* d, F* stag, F* src, F* rtag, F* c, F* status, F* e) {
  PXQ_NEXT("mpi_sendrecv_replace_", FSendrecvReplace);
  Timed timed("MPI_Sendrecv_replace");
  timed.to(send(fcomm(c), *d, *n, ftype(t)));
  next(b, n, t, d, stag, src, rtag, c, status, e);
}
using FRecv = void (*)(void*, F*, F*, F*, F*, F*, F*, F*);
void mpi_recv_(void* b, F* n, F* t, F* src, F* tag, F* c, F* status, F* e) {
  PXQ_NEXT("mpi_recv_", FRecv);
  Timed timed("MPI_Recv");
  next(b, n, t, src, tag, c, status, e);
}
void mpi_irecv_(void* b, F* n, F* t, F* src, F* tag, F* c, F* r, F* e) {
  PXQ_NEXT("mpi_irecv_", FRecv);
  Timed timed("MPI_Irecv");
  next(b, n, t, src, tag, c, r, e);
}
using FWait = void (*)(F*, F*, F*);
void mpi_wait_(F* r, F* status, F* e) {
  PXQ_NEXT("mpi_wait_", FWait);
  Timed timed("MPI_Wait");
  next(r, status, e);
}
using FWaitall = void (*)(F*, F*, F*, F*);
void mpi_waitall_(F* n, F* r, F* statuses, F* e) {
  PXQ_NEXT("mpi_waitall_", FWaitall);
  Timed timed("MPI_Waitall");
  next(n, r, statuses, e);
}

using FPcontrol = void (*)(F*);
void mpi_pcontrol_(F* level) {
  PXQ_NEXT("mpi_pcontrol_", FPcontrol);
  pcontrol(*level);
  if (next) next(level);
}

using FBarrier = void (*)(F*, F*);
void mpi_barrier_(F* c, F* e) {
  PXQ_NEXT("mpi_barrier_", FBarrier);
  Timed timed("MPI_Barrier");
  note_barrier(fcomm(c));
  next(c, e);
}
using FBcast = void (*)(void*, F*, F*, F*, F*, F*);
void mpi_bcast_(void* buf, F* n, F* t, F* root, F* c, F* e) {
  PXQ_NEXT("mpi_bcast_", FBcast);
  Timed timed("MPI_Bcast");
  note_bcast(fcomm(c), bytes_of(*n, ftype(t)), *root);
  next(buf, n, t, root, c, e);
}
using FReduce = void (*)(void*, void*, F*, F*, F*, F*, F*, F*);
void mpi_reduce_(void* sb, void* rb, F* n, F* t, F* op, F* root, F* c, F* e) {
  PXQ_NEXT("mpi_reduce_", FReduce);
  Timed timed("MPI_Reduce");
  note_reduce(fcomm(c), bytes_of(*n, ftype(t)), *root);
  next(sb, rb, n, t, op, root, c, e);
}
using FAllreduce = void (*)(void*, void*, F*, F*, F*, F*, F*);
void mpi_allreduce_(void* sb, void* rb, F* n, F* t, F* op, F* c, F* e) {
  PXQ_NEXT("mpi_allreduce_", FAllreduce);
  Timed timed("MPI_Allreduce");
  note_allreduce(fcomm(c), bytes_of(*n, ftype(t)));
  next(sb, rb, n, t, op, c, e);
}
// (the receive count and type: in place, the send pair is not significant)
using FAlltoall = void (*)(void*, F*, F*, void*, F*, F*, F*, F*);
void mpi_alltoall_(void* sb, F* sn, F* st, void* rb, F* rn, F* rt, F* c, F* e) {
  PXQ_NEXT("mpi_alltoall_", FAlltoall);
  Timed timed("MPI_Alltoall");
  note_alltoall(fcomm(c), bytes_of(*rn, ftype(rt)));
  next(sb, sn, st, rb, rn, rt, c, e);
}
void mpi_allgather_(void* sb, F* sn, F* st, void* rb, F* rn, F* rt, F* c, F* e) {
  PXQ_NEXT("mpi_allgather_", FAlltoall);
  Timed timed("MPI_Allgather");
  note_allgather(fcomm(c), bytes_of(*rn, ftype(rt)));
  next(sb, sn, st, rb, rn, rt, c, e);
}
using FAlltoallv = void (*)(void*, F*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_alltoallv_(void* sb, F* sc, F* sd, F* st, void* rb, F* rc, F* rd, F* rt, F* c, F* e) {
  PXQ_NEXT("mpi_alltoallv_", FAlltoallv);
  Timed timed("MPI_Alltoallv");
  note_alltoallv(fcomm(c), rc, ftype(rt));  // receive counts: what each peer sends here, known in place too
  next(sb, sc, sd, st, rb, rc, rd, rt, c, e);
}
using FAllgatherv = void (*)(void*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_allgatherv_(void* sb, F* sn, F* st, void* rb, F* rc, F* displs, F* rt, F* c, F* e) {
  PXQ_NEXT("mpi_allgatherv_", FAllgatherv);
  Timed timed("MPI_Allgatherv");
  note_allgatherv(fcomm(c), rc, ftype(rt));
  next(sb, sn, st, rb, rc, displs, rt, c, e);
}
using FGather = void (*)(void*, F*, F*, void*, F*, F*, F*, F*, F*);
void mpi_gather_(void* sb, F* sn, F* st, void* rb, F* rn, F* rt, F* root, F* c, F* e) {
  PXQ_NEXT("mpi_gather_", FGather);
  Timed timed("MPI_Gather");
  note_gather("gather", fcomm(c), bytes_of(*sn, ftype(st)), *root);
  next(sb, sn, st, rb, rn, rt, root, c, e);
}
void mpi_scatter_(void* sb, F* sn, F* st, void* rb, F* rn, F* rt, F* root, F* c, F* e) {
  PXQ_NEXT("mpi_scatter_", FGather);
  Timed timed("MPI_Scatter");
  note_scatter(fcomm(c), bytes_of(*sn, ftype(st)), *root);
  next(sb, sn, st, rb, rn, rt, root, c, e);
}
using FGatherv = void (*)(void*, F*, F*, void*, F*, F*, F*, F*, F*, F*);
void mpi_gatherv_(void* sb, F* sn, F* st, void* rb, F* rc, F* displs, F* rt, F* root, F* c, F* e) {
  PXQ_NEXT("mpi_gatherv_", FGatherv);
  Timed timed("MPI_Gatherv");
  note_gather("gatherv", fcomm(c), bytes_of(*sn, ftype(st)), *root);
  next(sb, sn, st, rb, rc, displs, rt, root, c, e);
}
using FReduceScatter = void (*)(void*, void*, F*, F*, F*, F*, F*);
void mpi_reduce_scatter_(void* sb, void* rb, F* rc, F* t, F* op, F* c, F* e) {
  PXQ_NEXT("mpi_reduce_scatter_", FReduceScatter);
  Timed timed("MPI_Reduce_scatter");
  collective("reduce_scatter (not modelled)", fcomm(c), 0, {});
  next(sb, rb, rc, t, op, c, e);
}
void mpi_scan_(void* sb, void* rb, F* n, F* t, F* op, F* c, F* e) {
  PXQ_NEXT("mpi_scan_", FAllreduce);
  Timed timed("MPI_Scan");
  collective("scan (not modelled)", fcomm(c), bytes_of(*n, ftype(t)), {});
  next(sb, rb, n, t, op, c, e);
}
void mpi_finalize_(F* e) { *e = MPI_Finalize(); }

}  // extern "C"
