// libpxq-msgprof: a PMPI interposition library that counts every point-to-point message
// (blocking, non-blocking, sendrecv, persistent) and every collective call, per (source rank,
// destination rank, size bin), and the messages a standard algorithm would send for each
// collective (a model: see msgmodel.hpp). At MPI_Finalize rank 0 appends one record (JSON
// line) to $PXQ_MSGPROF_OUT (default pxq-msgprof.jsonl) with the sparse rank x rank x bin
// matrices and the observed placement of every rank. Link it, or LD_PRELOAD it into any MPI
// program: C and C++ through the MPI_* symbols; Fortran (mpif.h and `use mpi`, gfortran's
// names) through wrappers of the mpi_*_ symbols that count, then call the MPI library's own.
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
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

struct State {
  std::mutex m;
  bool ready = false, quiet = false;  // quiet: the profiler's own calls at finalize
  int world_size = 0, world_rank = 0;
  std::vector<u64> p2p_count, p2p_bytes, model_count, model_bytes;  // [dst * kSizeBins + bin]
  std::map<std::string, std::pair<u64, u64>> calls;                 // collective -> calls, bytes given
  std::unordered_map<MPI_Comm, std::vector<int>> world_of;          // communicator rank -> world rank
  std::unordered_map<MPI_Request, Pending> persistent;
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

void send(MPI_Comm comm, int dst, int count, MPI_Datatype type) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!ready(s)) return;
  add(s.p2p_count, s.p2p_bytes, to_world(s, comm, dst), bytes_of(count, type));
}

// A collective call: counted by name, and its modelled messages (peers are communicator ranks).
void collective(const char* name, MPI_Comm comm, u64 given, const std::vector<ModelMessage>& model) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!ready(s)) return;
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
template <typename Buf>
Buf gather_all(const Buf& mine, MPI_Datatype type, int rank, int size, std::vector<int>& counts) {
  int n = static_cast<int>(mine.size());
  std::vector<int> displs(static_cast<std::size_t>(size));
  counts.assign(static_cast<std::size_t>(size), 0);
  PMPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  Buf all(rank == 0 ? static_cast<std::size_t>(total) : 0, typename Buf::value_type{});
  PMPI_Gatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, 0, MPI_COMM_WORLD);
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

void write_record(State& s) {
  const auto placement = pxq::comm::observe_placement(MPI_COMM_WORLD, 1);  // quiet: not counted
  const auto p2p = gather_rows(rows(s, s.p2p_count, s.p2p_bytes), s.world_rank, s.world_size);
  const auto model = gather_rows(rows(s, s.model_count, s.model_bytes), s.world_rank, s.world_size);
  nlohmann::json mine = nlohmann::json::object();
  for (const auto& [name, c] : s.calls) mine[name] = {c.first, c.second};
  std::vector<std::string> texts;
  gather_text(mine.dump(), s.world_rank, s.world_size, texts);
  if (s.world_rank != 0) return;

  nlohmann::json calls = nlohmann::json::object();
  for (const auto& t : texts) {
    const nlohmann::json theirs = nlohmann::json::parse(t);
    for (const auto& [name, c] : theirs.items()) {
      auto& dst = calls[name];
      if (dst.is_null()) dst = {{"calls", 0}, {"bytes", 0}};
      dst["calls"] = dst["calls"].get<u64>() + c[0].get<u64>();
      dst["bytes"] = dst["bytes"].get<u64>() + c[1].get<u64>();
    }
  }
  nlohmann::json places = nlohmann::json::array();
  for (const auto& p : placement) places.push_back(pxq::comm::to_json(p));
  nlohmann::json upper = nlohmann::json::array();
  for (int b = 0; b < kSizeBins; ++b) upper.push_back(pxq::comm::bin_upper_bytes(b));
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  PMPI_Get_library_version(version, &len);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
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
      {"collectives", calls},
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

std::vector<u64> blocks(const int* counts, MPI_Datatype type, int n) {
  std::vector<u64> out(static_cast<std::size_t>(n), 0);
  if (counts)
    for (int k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = bytes_of(counts[k], type);
  return out;
}

}  // namespace

extern "C" {

// ---- point to point ----
using SendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using IsendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
static int counted(SendFn f, const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm) {
  send(comm, dst, count, type);
  return f(buf, count, type, dst, tag, comm);
}
static int counted_nb(IsendFn f, const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                      MPI_Request* req) {
  send(comm, dst, count, type);
  return f(buf, count, type, dst, tag, comm, req);
}
// The sends of one signature share their wrapper, written once.
#define PXQ_BLOCKING_SEND(name)                                                                    \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm) { \
    return counted(PMPI_##name, buf, count, type, dst, tag, comm);                                 \
  }
#define PXQ_REQUEST_SEND(name, through)                                                                              \
  int MPI_##name(const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm, MPI_Request* req) { \
    return through(PMPI_##name, buf, count, type, dst, tag, comm, req);                                              \
  }
PXQ_BLOCKING_SEND(Send)
PXQ_BLOCKING_SEND(Bsend)
PXQ_BLOCKING_SEND(Ssend)
PXQ_BLOCKING_SEND(Rsend)
PXQ_REQUEST_SEND(Isend, counted_nb)
PXQ_REQUEST_SEND(Ibsend, counted_nb)
PXQ_REQUEST_SEND(Issend, counted_nb)
PXQ_REQUEST_SEND(Irsend, counted_nb)
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dst, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  send(comm, dst, scount, stype);
  return PMPI_Sendrecv(sbuf, scount, stype, dst, stag, rbuf, rcount, rtype, src, rtag, comm, status);
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dst, int stag, int src, int rtag, MPI_Comm comm,
                         MPI_Status* status) {
  send(comm, dst, count, type);
  return PMPI_Sendrecv_replace(buf, count, type, dst, stag, src, rtag, comm, status);
}

// ---- persistent sends: counted at every start ----
static int persistent(IsendFn f, const void* buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                      MPI_Request* req) {
  const int rc = f(buf, count, type, dst, tag, comm, req);
  if (rc != MPI_SUCCESS) return rc;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (ready(s)) s.persistent[*req] = {to_world(s, comm, dst), bytes_of(count, type)};
  return rc;
}
PXQ_REQUEST_SEND(Send_init, persistent)
PXQ_REQUEST_SEND(Bsend_init, persistent)
PXQ_REQUEST_SEND(Ssend_init, persistent)
PXQ_REQUEST_SEND(Rsend_init, persistent)
static void started(MPI_Request req) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!ready(s)) return;
  auto it = s.persistent.find(req);
  if (it != s.persistent.end()) add(s.p2p_count, s.p2p_bytes, it->second.dst_world, it->second.bytes);
}
int MPI_Start(MPI_Request* req) {
  started(*req);
  return PMPI_Start(req);
}
int MPI_Startall(int n, MPI_Request reqs[]) {
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

// ---- collectives: counted by name, modelled as point-to-point messages ----
int MPI_Barrier(MPI_Comm comm) {
  const CommInfo c = info(comm);
  collective("barrier", comm, 0, pxq::comm::barrier_sends(c.me, c.n));
  return PMPI_Barrier(comm);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = bytes_of(count, type);
  collective("bcast", comm, c.me == root ? b : 0, pxq::comm::bcast_sends(c.me, root, c.n, b));
  return PMPI_Bcast(buf, count, type, root, comm);
}
int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = bytes_of(count, type);
  collective("reduce", comm, b, pxq::comm::reduce_sends(c.me, root, c.n, b));
  return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
}
int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = bytes_of(count, type);
  collective("allreduce", comm, b, pxq::comm::allreduce_sends(c.me, c.n, b));
  return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}
int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
  collective("alltoall", comm, b * static_cast<u64>(c.n > 0 ? c.n - 1 : 0), pxq::comm::alltoall_sends(c.me, c.n, b));
  return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}
int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  const CommInfo c = info(comm);
  const bool in_place = sbuf == MPI_IN_PLACE;
  const auto b = blocks(in_place ? rcounts : scounts, in_place ? rtype : stype, c.n);
  std::vector<ModelMessage> model;
  u64 given = 0;
  for (int k = 1; k < c.n; ++k) {
    const int peer = (c.me + k) % c.n;
    model.push_back({peer, b[static_cast<std::size_t>(peer)]});
    given += b[static_cast<std::size_t>(peer)];
  }
  collective("alltoallv", comm, given, model);
  return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}
int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
  collective("allgather", comm, b,
             pxq::comm::allgather_sends(c.me, c.n, std::vector<u64>(static_cast<std::size_t>(c.n), b)));
  return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}
int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  const CommInfo c = info(comm);
  const auto b = blocks(rcounts, rtype, c.n);
  collective("allgatherv", comm, c.n > 0 ? b[static_cast<std::size_t>(c.me)] : 0,
             pxq::comm::allgather_sends(c.me, c.n, b));
  return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}
int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
  collective("gather", comm, b, pxq::comm::gather_sends(c.me, root, c.n, b));
  return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}
int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = bytes_of(scount, stype);
  collective("gatherv", comm, b, pxq::comm::gather_sends(c.me, root, c.n, b));
  return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}
int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  const CommInfo c = info(comm);
  const u64 b = c.me == root ? bytes_of(scount, stype) : 0;
  collective("scatter", comm, b * static_cast<u64>(c.n > 0 ? c.n - 1 : 0),
             pxq::comm::scatter_sends(c.me, root, c.n, std::vector<u64>(static_cast<std::size_t>(c.n), b)));
  return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}
int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  collective("reduce_scatter (not modelled)", comm, 0, {});
  return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
}
int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
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
  if (write) write_record(s);
  return PMPI_Finalize();
}

// ---- Fortran (gfortran names): count, then call the MPI library's own binding ----
#define PXQ_NEXT(name, type)  \
  static type next = nullptr; \
  if (!next) next = reinterpret_cast<type>(dlsym(RTLD_NEXT, name))

using FSend = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
using FIsend = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_send_(void* b, MPI_Fint* n, MPI_Fint* t, MPI_Fint* d, MPI_Fint* tag, MPI_Fint* c, MPI_Fint* e) {
  PXQ_NEXT("mpi_send_", FSend);
  send(MPI_Comm_f2c(*c), *d, *n, MPI_Type_f2c(*t));
  next(b, n, t, d, tag, c, e);
}
void mpi_isend_(void* b, MPI_Fint* n, MPI_Fint* t, MPI_Fint* d, MPI_Fint* tag, MPI_Fint* c, MPI_Fint* r, MPI_Fint* e) {
  PXQ_NEXT("mpi_isend_", FIsend);
  send(MPI_Comm_f2c(*c), *d, *n, MPI_Type_f2c(*t));
  next(b, n, t, d, tag, c, r, e);
}
using FSendrecv = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                           MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_sendrecv_(void* sb, MPI_Fint* sn, MPI_Fint* st, MPI_Fint* d, MPI_Fint* stag, void* rb, MPI_Fint* rn,
                   MPI_Fint* rt, MPI_Fint* src, MPI_Fint* rtag, MPI_Fint* c, MPI_Fint* status, MPI_Fint* e) {
  PXQ_NEXT("mpi_sendrecv_", FSendrecv);
  send(MPI_Comm_f2c(*c), *d, *sn, MPI_Type_f2c(*st));
  next(sb, sn, st, d, stag, rb, rn, rt, src, rtag, c, status, e);
}
using FAllreduce = void (*)(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_allreduce_(void* sb, void* rb, MPI_Fint* n, MPI_Fint* t, MPI_Fint* op, MPI_Fint* c, MPI_Fint* e) {
  PXQ_NEXT("mpi_allreduce_", FAllreduce);
  const MPI_Comm comm = MPI_Comm_f2c(*c);
  const CommInfo ci = info(comm);
  const u64 b = bytes_of(*n, MPI_Type_f2c(*t));
  collective("allreduce", comm, b, pxq::comm::allreduce_sends(ci.me, ci.n, b));
  next(sb, rb, n, t, op, c, e);
}
using FReduce = void (*)(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_reduce_(void* sb, void* rb, MPI_Fint* n, MPI_Fint* t, MPI_Fint* op, MPI_Fint* root, MPI_Fint* c, MPI_Fint* e) {
  PXQ_NEXT("mpi_reduce_", FReduce);
  const MPI_Comm comm = MPI_Comm_f2c(*c);
  const CommInfo ci = info(comm);
  const u64 b = bytes_of(*n, MPI_Type_f2c(*t));
  collective("reduce", comm, b, pxq::comm::reduce_sends(ci.me, *root, ci.n, b));
  next(sb, rb, n, t, op, root, c, e);
}
using FBcast = void (*)(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_bcast_(void* buf, MPI_Fint* n, MPI_Fint* t, MPI_Fint* root, MPI_Fint* c, MPI_Fint* e) {
  PXQ_NEXT("mpi_bcast_", FBcast);
  const MPI_Comm comm = MPI_Comm_f2c(*c);
  const CommInfo ci = info(comm);
  const u64 b = bytes_of(*n, MPI_Type_f2c(*t));
  collective("bcast", comm, ci.me == *root ? b : 0, pxq::comm::bcast_sends(ci.me, *root, ci.n, b));
  next(buf, n, t, root, c, e);
}
using FAlltoall = void (*)(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_alltoall_(void* sb, MPI_Fint* sn, MPI_Fint* st, void* rb, MPI_Fint* rn, MPI_Fint* rt, MPI_Fint* c,
                   MPI_Fint* e) {
  PXQ_NEXT("mpi_alltoall_", FAlltoall);
  const MPI_Comm comm = MPI_Comm_f2c(*c);
  const CommInfo ci = info(comm);
  const u64 b = bytes_of(*sn, MPI_Type_f2c(*st));
  collective("alltoall", comm, b * static_cast<u64>(ci.n > 0 ? ci.n - 1 : 0),
             pxq::comm::alltoall_sends(ci.me, ci.n, b));
  next(sb, sn, st, rb, rn, rt, c, e);
}
using FBarrier = void (*)(MPI_Fint*, MPI_Fint*);
void mpi_barrier_(MPI_Fint* c, MPI_Fint* e) {
  PXQ_NEXT("mpi_barrier_", FBarrier);
  const MPI_Comm comm = MPI_Comm_f2c(*c);
  const CommInfo ci = info(comm);
  collective("barrier", comm, 0, pxq::comm::barrier_sends(ci.me, ci.n));
  next(c, e);
}
void mpi_finalize_(MPI_Fint* e) { *e = MPI_Finalize(); }

}  // extern "C"
