// Hardware counters: PAPI's presets, perf_event(2) as the fallback, and the reason when neither
// counts.
#include "pxq/common/counters.hpp"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <utility>

#ifdef PXQ_HAVE_PAPI
#include <papi.h>
#endif

namespace pxq::common {

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names = {"instructions", "cycles",     "l1d_misses",
                                                 "l2_misses",    "llc_misses", "stall_cycles"};
  return names;
}

const std::map<std::string, std::vector<std::string>>& papi_presets() {
  static const std::map<std::string, std::vector<std::string>> presets = {
      {"instructions", {"PAPI_TOT_INS"}},
      {"cycles", {"PAPI_TOT_CYC"}},
      {"l1d_misses", {"PAPI_L1_DCM"}},
      {"l2_misses", {"PAPI_L2_DCM", "PAPI_L2_TCM"}},
      {"llc_misses", {"PAPI_L3_TCM", "PAPI_L3_DCM"}},
      {"stall_cycles", {"PAPI_MEM_SCY", "PAPI_RES_STL"}},
  };
  return presets;
}

std::string simulated_hint() {
  return "For simulated cache misses run pxq run --counters sim (valgrind's cache simulator, on a reduced size)";
}

bool pmu_present(const std::string& root) {
  struct stat st {};
  return stat((root + "/cpu").c_str(), &st) == 0 || stat((root + "/cpu_core").c_str(), &st) == 0;
}

std::vector<long> process_threads() {
  std::vector<long> tids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') tids.push_back(std::strtol(e->d_name, nullptr, 10));
    closedir(d);
  }
  std::sort(tids.begin(), tids.end());
  if (tids.empty()) tids.push_back(static_cast<long>(syscall(SYS_gettid)));
  return tids;
}

// ------------------------------------------------------------------------------------ PAPI
namespace {

class PapiCounters final : public Counters {
 public:
  PapiCounters(PapiCalls api, std::vector<int> sets, std::vector<CounterEvent> events)
      : api_(std::move(api)), sets_(std::move(sets)), events_(std::move(events)) {}
  ~PapiCounters() override {
    for (const int s : sets_) api_.destroy(s);
  }
  std::string source() const override { return "papi"; }
  const std::vector<CounterEvent>& events() const override { return events_; }
  std::vector<double> read() override {
    std::vector<double> sum(events_.size(), 0.0);
    std::vector<long long> buf(events_.size(), 0);
    for (const int s : sets_) {
      if (api_.read(s, buf.data()) != 0) continue;  // a thread that ended: its counts are lost
      for (std::size_t i = 0; i < buf.size(); ++i) sum[i] += static_cast<double>(buf[i]);
    }
    return sum;
  }

 private:
  PapiCalls api_;
  std::vector<int> sets_;
  std::vector<CounterEvent> events_;
};

struct Chosen {
  std::vector<CounterEvent> events;
  std::vector<int> codes;
  std::map<std::string, std::string> skipped;
};

// Adds to `set` the first preset of each event the machine counts.
Chosen choose_presets(const PapiCalls& api, int set) {
  Chosen c;
  for (const auto& name : counter_names()) {
    std::string why;
    for (const auto& preset : papi_presets().at(name)) {
      int code = 0;
      int rc = api.code_of(preset, &code);
      if (rc == 0) rc = api.add(set, code);
      if (rc == 0) {
        c.events.push_back({name, preset});
        c.codes.push_back(code);
        why.clear();
        break;
      }
      why += (why.empty() ? "" : "; ") + preset + ": " + api.error(rc);
    }
    if (!why.empty()) c.skipped[name] = why;
  }
  return c;
}

}  // namespace

CounterOpen open_papi(const PapiCalls& api, const std::vector<long>& tids) {
  CounterOpen out;
  if (tids.empty()) {
    out.reason = "PAPI: no thread to count";
    return out;
  }
  if (const int rc = api.init(); rc != 0) {
    out.reason = "PAPI did not start: " + api.error(rc);
    return out;
  }
  if (const std::string off = api.disabled_reason(); !off.empty()) {
    out.reason = "PAPI's CPU component is disabled: " + off;
    return out;
  }
  std::vector<int> sets;
  const auto fail = [&](const std::string& what, int rc) {
    for (const int s : sets) api.destroy(s);
    out.reason = "PAPI: " + what + ": " + api.error(rc);
    return std::move(out);
  };
  int first = 0;
  if (const int rc = api.create(&first); rc != 0) return fail("cannot create an event set", rc);
  sets.push_back(first);
  if (const int rc = api.attach(first, tids[0]); rc != 0)
    return fail("cannot attach to thread " + std::to_string(tids[0]), rc);
  Chosen chosen = choose_presets(api, first);
  if (chosen.events.empty()) {
    std::string all;
    for (const auto& [name, why] : chosen.skipped) all += (all.empty() ? "" : "; ") + why;
    for (const int s : sets) api.destroy(s);
    out.reason = "PAPI counts none of pxq's events on this machine (" + all + ")";
    return out;
  }
  for (std::size_t t = 1; t < tids.size(); ++t) {
    int s = 0;
    if (const int rc = api.create(&s); rc != 0) return fail("cannot create an event set", rc);
    sets.push_back(s);
    if (const int rc = api.attach(s, tids[t]); rc != 0)
      return fail("cannot attach to thread " + std::to_string(tids[t]), rc);
    for (std::size_t i = 0; i < chosen.codes.size(); ++i)
      if (const int rc = api.add(s, chosen.codes[i]); rc != 0)
        return fail("cannot add " + chosen.events[i].native + " for thread " + std::to_string(tids[t]), rc);
  }
  for (const int s : sets)
    if (const int rc = api.start(s); rc != 0) return fail("cannot start counting", rc);
  out.counters = std::make_unique<PapiCounters>(api, std::move(sets), std::move(chosen.events));
  out.counters->skipped = std::move(chosen.skipped);
  return out;
}

#ifdef PXQ_HAVE_PAPI
bool papi_linked() { return true; }

PapiCalls papi_library() {
  PapiCalls c;
  c.init = [] {
    if (PAPI_is_initialized() != PAPI_NOT_INITED) return static_cast<int>(PAPI_OK);
    const int v = PAPI_library_init(PAPI_VER_CURRENT);
    return v == PAPI_VER_CURRENT ? static_cast<int>(PAPI_OK) : (v < 0 ? v : static_cast<int>(PAPI_EINVAL));
  };
  c.disabled_reason = []() -> std::string {
    const PAPI_component_info_t* info = PAPI_get_component_info(0);
    if (info == nullptr) return "PAPI has no CPU component";
    if (!info->disabled) return "";
    return std::string(info->name) + ": " + (info->disabled_reason[0] ? info->disabled_reason : "disabled");
  };
  c.code_of = [](const std::string& name, int* code) { return PAPI_event_name_to_code(name.c_str(), code); };
  c.create = [](int* set) {
    *set = PAPI_NULL;
    const int rc = PAPI_create_eventset(set);
    return rc != PAPI_OK ? rc : PAPI_assign_eventset_component(*set, 0);
  };
  c.attach = [](int set, long tid) { return PAPI_attach(set, static_cast<unsigned long>(tid)); };
  c.add = [](int set, int code) { return PAPI_add_event(set, code); };
  c.start = [](int set) { return PAPI_start(set); };
  c.read = [](int set, long long* v) { return PAPI_read(set, v); };
  c.destroy = [](int set) {
    long long ignored[16];
    PAPI_stop(set, ignored);
    PAPI_cleanup_eventset(set);
    PAPI_destroy_eventset(&set);
  };
  c.error = [](int rc) {
    const char* text = PAPI_strerror(rc);
    return std::string(text ? text : "PAPI error " + std::to_string(rc));
  };
  return c;
}
#else
bool papi_linked() { return false; }
PapiCalls papi_library() { return {}; }
#endif

// -------------------------------------------------------------------------------- perf_event
namespace {

struct PerfEvent {
  const char* name;
  const char* native;
  std::uint32_t type;
  std::uint64_t config;
};

constexpr std::uint64_t cache_event(std::uint64_t cache, std::uint64_t op, std::uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

// The kernel's generic events; it has none for the L2.
const std::vector<PerfEvent>& perf_events() {
  static const std::vector<PerfEvent> events = {
      {"instructions", "PERF_COUNT_HW_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {"cycles", "PERF_COUNT_HW_CPU_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {"l1d_misses", "PERF_COUNT_HW_CACHE_L1D:READ:MISS", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
      {"llc_misses", "PERF_COUNT_HW_CACHE_LL:READ:MISS", PERF_TYPE_HW_CACHE,
       cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
      {"stall_cycles", "PERF_COUNT_HW_STALLED_CYCLES_BACKEND", PERF_TYPE_HARDWARE,
       PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
  };
  return events;
}

std::string paranoid_level() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  in >> level;
  return level.empty() ? "unknown" : level;
}

std::string perf_error(int err) {
  if (err == EACCES || err == EPERM)
    return std::string(std::strerror(err)) + " (kernel.perf_event_paranoid is " + paranoid_level() +
           ": lower it with sysctl kernel.perf_event_paranoid=1, or ask the administrator)";
  if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
    return std::string(std::strerror(err)) + " (the kernel has no such hardware event here)";
  return std::strerror(err);
}

class PerfCounters final : public Counters {
 public:
  ~PerfCounters() override {
    for (const auto& fds : fds_)
      for (const int fd : fds) close(fd);
  }
  std::string source() const override { return "perf_event"; }
  const std::vector<CounterEvent>& events() const override { return events_; }
  // Scaled by enabled / running time, should the kernel multiplex the events.
  std::vector<double> read() override {
    std::vector<double> out(events_.size(), 0.0);
    for (std::size_t e = 0; e < fds_.size(); ++e)
      for (const int fd : fds_[e]) {
        std::uint64_t v[3] = {0, 0, 0};
        if (::read(fd, v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) continue;
        out[e] += v[2] > 0 ? static_cast<double>(v[0]) * static_cast<double>(v[1]) / static_cast<double>(v[2]) : 0.0;
      }
    return out;
  }
  void add(CounterEvent e, std::vector<int> fds) {
    events_.push_back(std::move(e));
    fds_.push_back(std::move(fds));
  }

 private:
  std::vector<CounterEvent> events_;
  std::vector<std::vector<int>> fds_;
};

int perf_open(const PerfEvent& e, long tid) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = e.type;
  attr.config = e.config;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.inherit = 1;  // threads the counted thread starts later
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1, 0UL));
}

}  // namespace

CounterOpen open_perf_event(const std::vector<long>& tids) {
  CounterOpen out;
  auto counters = std::make_unique<PerfCounters>();
  counters->skipped["l2_misses"] = "perf_event's generic events have no L2 event";
  for (const PerfEvent& e : perf_events()) {
    std::vector<int> fds;
    int err = 0;
    for (const long tid : tids) {
      const int fd = perf_open(e, tid);
      if (fd < 0) {
        err = errno;
        break;
      }
      fds.push_back(fd);
    }
    if (err != 0 || fds.empty()) {
      for (const int fd : fds) close(fd);
      counters->skipped[e.name] = std::string(e.native) + ": " + perf_error(err ? err : ESRCH);
      continue;
    }
    counters->add({e.name, e.native}, std::move(fds));
  }
  if (counters->events().empty()) {
    out.reason = "perf_event counts none of pxq's events (" + counters->skipped["instructions"] + ")";
    return out;
  }
  out.counters = std::move(counters);
  return out;
}

CounterOpen open_hardware_counters() {
  const std::vector<long> tids = process_threads();
  std::string papi_why = "PAPI: not in this build (install libpapi-dev and rebuild pxq)";
  if (papi_linked()) {
    CounterOpen p = open_papi(papi_library(), tids);
    if (p.counters) return p;
    papi_why = p.reason;
  }
  CounterOpen k = open_perf_event(tids);
  if (k.counters) return k;
  std::string why = "no hardware counters: ";
  if (!pmu_present())
    why +=
        "this machine exposes no CPU performance-monitoring unit (/sys/bus/event_source/devices/cpu is "
        "missing, as on many virtual machines); ";
  k.reason = why + papi_why + "; " + k.reason + ". " + simulated_hint();
  return k;
}

}  // namespace pxq::common
