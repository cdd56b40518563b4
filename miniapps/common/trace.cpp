// Phase spans kept for pxq run --trace, written per rank at the end of the run.
#include "pxq/common/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

namespace pxq::common::trace {
namespace {

struct Span {
  int name;  // index into names
  const char* cat;
  double t0, t1;
  long tid;
};

constexpr std::size_t kMaxSpans = std::size_t{1} << 21;  // a bound on memory: the rest are counted

struct Kept {
  std::mutex m;
  std::map<std::string, int> index;
  std::vector<std::string> names;
  std::vector<Span> spans;
  unsigned long long dropped = 0;
};

Kept& kept() {
  static Kept k;
  return k;
}

const char* directory() {
  static const char* dir = [] {
    const char* d = std::getenv("PXQ_TRACE_DIR");
    return d != nullptr && *d != '\0' ? d : nullptr;
  }();
  return dir;
}

}  // namespace

bool enabled() { return directory() != nullptr; }

void span(const std::string& name, const char* cat, double t0, double t1) {
  const long tid = static_cast<long>(::syscall(SYS_gettid));
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.m);
  if (k.spans.size() >= kMaxSpans) {
    ++k.dropped;
    return;
  }
  auto it = k.index.find(name);
  if (it == k.index.end()) {
    it = k.index.emplace(name, static_cast<int>(k.names.size())).first;
    k.names.push_back(name);
  }
  k.spans.push_back({it->second, cat, t0, t1, tid});
}

bool write(int rank, double sync) {
  if (!enabled()) return true;
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.m);
  const std::string path = std::string(directory()) + "/phases-" + std::to_string(rank) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "pxq: rank %d: error: cannot write the trace file %s\n", rank, path.c_str());
    return false;
  }
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const nlohmann::json head = {{"rank", rank},         {"pid", static_cast<long>(::getpid())},
                               {"host", host},         {"clock", "MPI_Wtime"},
                               {"sync", sync},         {"names", k.names},
                               {"dropped", k.dropped}, {"columns", {"name", "cat", "start", "end", "tid"}}};
  std::string text = head.dump();
  text.pop_back();  // the spans follow as one array, written without building a JSON tree
  std::fputs(text.c_str(), f);
  std::fputs(",\"spans\":[", f);
  for (std::size_t i = 0; i < k.spans.size(); ++i) {
    const Span& s = k.spans[i];
    std::fprintf(f, "%s[%d,\"%s\",%.17g,%.17g,%ld]", i ? "," : "", s.name, s.cat, s.t0, s.t1, s.tid);
  }
  std::fputs("]}\n", f);
  const bool ok = std::fflush(f) == 0 && std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::fprintf(stderr, "pxq: rank %d: error: could not finish the trace file %s\n", rank, path.c_str());
    return false;
  }
  return true;
}

}  // namespace pxq::common::trace
