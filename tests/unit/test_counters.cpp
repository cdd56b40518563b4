// Hardware counters: PAPI's event-set set-up and its error paths against a stand-in library,
// and the real PAPI and perf_event on this machine (counting where it has a PMU, a reason
// naming the way to simulated counts where it has none).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "pxq/common/counters.hpp"

namespace {

using pxq::common::CounterOpen;
using pxq::common::PapiCalls;

// A PAPI stand-in: presets it knows, presets the "machine" refuses, failures on demand, and a
// ledger of every event set it handed out and destroyed.
struct FakePapi {
  std::set<std::string> unknown;      // event_name_to_code fails
  std::map<std::string, int> refuse;  // add fails with this code
  int init_rc = 0, create_fail_at = -1, attach_fail_tid = -1, start_rc = 0;
  std::string disabled;
  std::map<int, long> attached;           // set -> thread
  std::map<int, std::vector<int>> added;  // set -> codes
  std::set<int> destroyed;
  int sets = 0;
  std::map<std::string, int> codes;

  PapiCalls calls() {
    PapiCalls c;
    c.init = [this] { return init_rc; };
    c.disabled_reason = [this] { return disabled; };
    c.code_of = [this](const std::string& name, int* code) {
      if (unknown.count(name)) return -7;  // PAPI_ENOEVNT
      if (!codes.count(name)) codes[name] = 100 + static_cast<int>(codes.size());
      *code = codes[name];
      return 0;
    };
    c.create = [this](int* set) {
      if (sets == create_fail_at) return -2;
      *set = sets++;
      return 0;
    };
    c.attach = [this](int set, long tid) {
      if (tid == attach_fail_tid) return -3;
      attached[set] = tid;
      return 0;
    };
    c.add = [this](int set, int code) {
      for (const auto& [name, rc] : refuse)
        if (codes.count(name) && codes[name] == code) return rc;
      added[set].push_back(code);
      return 0;
    };
    c.start = [this](int) { return start_rc; };
    c.read = [this](int set, long long* v) {
      for (std::size_t i = 0; i < added[set].size(); ++i)
        v[i] = 10 * static_cast<long long>(set + 1) + static_cast<long long>(i);
      return 0;
    };
    c.destroy = [this](int set) { destroyed.insert(set); };
    c.error = [](int rc) { return "error " + std::to_string(rc); };
    return c;
  }
};

TEST(Counters, PapiTakesTheFirstPresetEachEventHasAndSaysWhyOthersAreMissing) {
  FakePapi fake;
  fake.unknown = {"PAPI_L3_TCM", "PAPI_L3_DCM"};  // no last-level preset on this "machine"
  fake.refuse = {{"PAPI_MEM_SCY", -8}};           // a conflict: the fallback preset is taken
  const CounterOpen o = pxq::common::open_papi(fake.calls(), {11, 12, 13});
  ASSERT_TRUE(o.counters) << o.reason;
  EXPECT_EQ(o.counters->source(), "papi");
  std::vector<std::string> names, natives;
  for (const auto& e : o.counters->events()) {
    names.push_back(e.name);
    natives.push_back(e.native);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"instructions", "cycles", "l1d_misses", "l2_misses", "stall_cycles"}));
  EXPECT_EQ(natives,
            (std::vector<std::string>{"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_RES_STL"}));
  ASSERT_EQ(o.counters->skipped.count("llc_misses"), 1u);
  EXPECT_NE(o.counters->skipped.at("llc_misses").find("PAPI_L3_TCM: error -7"), std::string::npos);
  // One event set per thread, each attached to its thread with the same five events.
  ASSERT_EQ(fake.attached.size(), 3u);
  EXPECT_EQ(fake.attached.at(0), 11);
  EXPECT_EQ(fake.attached.at(2), 13);
  EXPECT_EQ(fake.added.at(1), fake.added.at(0));
  EXPECT_EQ(fake.added.at(2).size(), 5u);
}

TEST(Counters, PapiReadSumsTheThreadsAndDestroysEverySetOnClose) {
  FakePapi fake;
  {
    CounterOpen o = pxq::common::open_papi(fake.calls(), {1, 2});
    ASSERT_TRUE(o.counters);
    const std::vector<double> v = o.counters->read();
    ASSERT_EQ(v.size(), 6u);
    EXPECT_EQ(v[0], 10 + 20);  // set 0 reads 10, set 1 reads 20
    EXPECT_EQ(v[5], 15 + 25);
    EXPECT_TRUE(fake.destroyed.empty());
  }
  EXPECT_EQ(fake.destroyed, (std::set<int>{0, 1}));
}

TEST(Counters, PapiErrorPathsGiveAReasonAndLeaveNoEventSet) {
  {
    FakePapi fake;
    fake.init_rc = -1;
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {1});
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("PAPI did not start: error -1"), std::string::npos) << o.reason;
  }
  {
    FakePapi fake;
    fake.disabled = "perf_event: no default PMU found";
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {1});
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("disabled: perf_event: no default PMU found"), std::string::npos) << o.reason;
    EXPECT_EQ(fake.sets, 0);
  }
  {
    FakePapi fake;
    for (const auto& [name, presets] : pxq::common::papi_presets())
      for (const auto& p : presets) fake.unknown.insert(p);
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {1});
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("counts none of pxq's events"), std::string::npos) << o.reason;
    EXPECT_EQ(fake.destroyed, (std::set<int>{0}));
  }
  {
    FakePapi fake;
    fake.attach_fail_tid = 3;  // the third thread cannot be attached: every set made so far goes
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {1, 2, 3});
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("cannot attach to thread 3"), std::string::npos) << o.reason;
    EXPECT_EQ(fake.destroyed, (std::set<int>{0, 1, 2}));
  }
  {
    FakePapi fake;
    fake.create_fail_at = 1;
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {1, 2});
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("cannot create an event set"), std::string::npos) << o.reason;
    EXPECT_EQ(fake.destroyed, (std::set<int>{0}));
  }
  {
    FakePapi fake;
    fake.start_rc = -9;
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {1, 2});
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("cannot start counting: error -9"), std::string::npos) << o.reason;
    EXPECT_EQ(fake.destroyed, (std::set<int>{0, 1}));
  }
  {
    FakePapi fake;
    const CounterOpen o = pxq::common::open_papi(fake.calls(), {});
    EXPECT_FALSE(o.counters);
    EXPECT_EQ(fake.sets, 0);
  }
}

volatile double sink = 0;

void work() {
  double s = 0;
  for (int i = 0; i < 2000000; ++i) s += i * 0.5;
  sink = s;
}

// The real sources on this machine: with a PMU they count instructions; without one they say
// so and point at the simulator.
TEST(Counters, HardwareCountersCountOrSayWhyNotOnThisMachine) {
  CounterOpen o = pxq::common::open_hardware_counters();
  if (pxq::common::pmu_present()) {
    ASSERT_TRUE(o.counters) << o.reason;
    const std::vector<double> before = o.counters->read();
    work();
    const std::vector<double> after = o.counters->read();
    ASSERT_EQ(o.counters->events()[0].name, "instructions");
    EXPECT_GT(after[0] - before[0], 1e6);
  } else {
    EXPECT_FALSE(o.counters);
    EXPECT_NE(o.reason.find("no CPU performance-monitoring unit"), std::string::npos) << o.reason;
    EXPECT_NE(o.reason.find("--counters sim"), std::string::npos) << o.reason;
    const CounterOpen k = pxq::common::open_perf_event(pxq::common::process_threads());
    EXPECT_FALSE(k.counters);
    EXPECT_FALSE(k.reason.empty());
    // The linked library starts and says why it cannot count: its CPU component disabled,
    // or (where PAPI thinks that component usable) the event it cannot attach.
    if (pxq::common::papi_linked()) {
      const CounterOpen p = pxq::common::open_papi(pxq::common::papi_library(), pxq::common::process_threads());
      EXPECT_FALSE(p.counters);
      EXPECT_EQ(p.reason.rfind("PAPI", 0), 0u) << p.reason;
      EXPECT_GT(p.reason.size(), std::string("PAPI: ").size()) << p.reason;
    }
  }
}

TEST(Counters, PmuDetectionLooksForTheCpuEventSource) {
  const std::string root = testing::TempDir() + "pxq-event-sources";
  ::mkdir(root.c_str(), 0755);
  EXPECT_FALSE(pxq::common::pmu_present(root));  // software and tracepoint sources only: no PMU
  ::mkdir((root + "/cpu").c_str(), 0755);
  EXPECT_TRUE(pxq::common::pmu_present(root));
  ::rmdir((root + "/cpu").c_str());
  ::rmdir(root.c_str());
}

}  // namespace
