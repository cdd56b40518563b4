// Hardware counters for a rank: PAPI's presets where the machine has a performance-monitoring
// unit, Linux perf_event where PAPI is missing, and a reason (with the way to simulated counts)
// where neither can count. No MPI here: the lifecycle reduces the counts over the ranks.
//
// Every source records the same names (counter_names()); an event a source cannot count is
// left out of its event list, never recorded as zero. Counts cover every thread the process
// has when the counters are opened (the OpenMP team exists by then), and threads it starts
// later.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pxq::common {

// The record's names, in order: instructions, cycles, l1d_misses, l2_misses, llc_misses,
// stall_cycles (cycles stalled on memory where the machine says so, else resource stalls).
const std::vector<std::string>& counter_names();

// One counted event: the record's name and the source's own (PAPI_L2_DCM, PERF_COUNT_...).
struct CounterEvent {
  std::string name;
  std::string native;
};

class Counters {
 public:
  virtual ~Counters() = default;
  virtual std::string source() const = 0;  // "papi" or "perf_event"
  virtual const std::vector<CounterEvent>& events() const = 0;
  // What the events counted since opening, one value per event, summed over the threads.
  virtual std::vector<double> read() = 0;
  // Events the source knows but the machine would not count, with the reason each.
  std::map<std::string, std::string> skipped;
};

// Counters, or the reason there are none (naming what to do about it).
struct CounterOpen {
  std::unique_ptr<Counters> counters;
  std::string reason;
};

// PAPI's calls as pxq makes them, so that the set-up and its error paths can be tested without
// a performance-monitoring unit. Codes are PAPI's: 0 is PAPI_OK, negative is an error.
struct PapiCalls {
  std::function<int()> init;                             // PAPI_library_init, 0 when the version matches
  std::function<std::string()> disabled_reason;          // the CPU component's, "" when it works
  std::function<int(const std::string&, int*)> code_of;  // PAPI_event_name_to_code
  std::function<int(int*)> create;                       // PAPI_create_eventset + the CPU component
  std::function<int(int, long)> attach;                  // PAPI_attach to one thread of this process
  std::function<int(int, int)> add;                      // PAPI_add_event
  std::function<int(int)> start;                         // PAPI_start
  std::function<int(int, long long*)> read;              // PAPI_read
  std::function<void(int)> destroy;                      // PAPI_stop, cleanup and destroy, errors ignored
  std::function<std::string(int)> error;                 // PAPI_strerror
};

// The presets pxq asks PAPI for, per record name, first choice first.
const std::map<std::string, std::vector<std::string>>& papi_presets();

// The linked PAPI library; false when this build has none.
bool papi_linked();
PapiCalls papi_library();

// Opens one event set per thread in `tids` with every preset the machine counts. No counters
// (and the reason) when the library does not start, the CPU component is disabled, or no
// preset can be added.
CounterOpen open_papi(const PapiCalls& api, const std::vector<long>& tids);

// The same through perf_event_open(2): the kernel's generic events, one per thread.
CounterOpen open_perf_event(const std::vector<long>& tids);

// PAPI when linked and counting, else perf_event; the reason names both failures and the way
// to simulated counts (pxq run --counters sim).
CounterOpen open_hardware_counters();

// The threads of this process (/proc/self/task).
std::vector<long> process_threads();

// Whether the kernel exposes a CPU performance-monitoring unit (<root>/cpu or cpu_core).
bool pmu_present(const std::string& root = "/sys/bus/event_source/devices");

// What to tell a user who asked for hardware counters on a machine without them.
std::string simulated_hint();

}  // namespace pxq::common
