// The proxy lifecycle: every miniapp runs the same steps in the same order, and supplies
// only what is its own. run_proxy does: resolve the variant, let the proxy check its input
// (its constructor), start the run (layout, tile, runtime, placement), set up (timed apart),
// one untimed warm-up, the timed iterations, phases reduced to the slowest rank, the
// traffic summary, verification on every rank, then rank 0's banner and record, both built
// from one Summary so that they never disagree.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pxq/comm/peer_traffic.hpp"
#include "pxq/common/app.hpp"
#include "pxq/common/efficiency.hpp"
#include "pxq/common/options.hpp"
#include "pxq/common/run_context.hpp"
#include "pxq/common/timer.hpp"
#include "pxq/common/work.hpp"

namespace pxq::common {

// What the lifecycle measured, handed to the proxy's summary.
struct Measured {
  double total = 0.0;                    // the timed iterations, slowest rank
  double setup = 0.0;                    // the set-up, slowest rank (not in total)
  double mpi_init = 0.0;                 // MPI_Init_thread, slowest rank
  std::map<std::string, double> phases;  // per phase, slowest rank
  nlohmann::json messages;               // comm::PeerTraffic::summarize
  nlohmann::json counters;               // RunCounters::summarize (null without --counters)
  Efficiency efficiency;                 // from every rank's times (rank 0)
  nlohmann::json work;                   // the declared work, reduced and rated (work_json)
  nlohmann::json work_metrics;           // the headline rates the declarations name
  double phase(const std::string& name) const;
};

// One banner line: " Label           = value".
using Line = std::pair<std::string, std::string>;

// The verification lines of a proxy checked by one number: its value, NAS's reference (each
// with its label) and the relative error beside its tolerance.
std::vector<Line> reference_checks(const std::pair<std::string, double>& value,
                                   const std::pair<std::string, double>& reference, double error, double tolerance);

// What a proxy reports, once: the banner's lines and the record's own keys. The lifecycle
// adds what every proxy shares (time, processes, layout, variant, tile, Mop/s, MPI traffic,
// notes, the verdict) in the same place for all.
struct Summary {
  std::string preamble;            // printed before the title (e.g. CG's iteration table)
  std::string title;               // "CG": the banner opens with " CG Benchmark Completed."
  std::vector<Line> head;          // Class, Size, Iterations, ...
  std::string setup_what;          // what the set-up did ("matrix generation"); "": no setup line
  std::string grid;                // the "Process grid" line
  std::string tile_detail;         // appended to the tile, e.g. "3 column window(s)"
  std::vector<Line> variant;       // after the tile line (e.g. FT's lines per batch)
  double operations = 0.0;         // NAS operation count; 0: no Mop/s lines
  std::vector<Line> metrics;       // phases and bandwidths
  std::vector<std::string> notes;  // beyond the start notes
  std::string tables;              // per-step or per-level tables (the proxy honours --quiet)
  std::vector<Line> checks;        // the verification figures, before the verdict
  nlohmann::json size = nlohmann::json::object();
  nlohmann::json time = nlohmann::json::object();  // phases; total and setup are added
  nlohmann::json metrics_json = nlohmann::json::object();
  nlohmann::json verification = nlohmann::json::object();  // "passed" is added
  nlohmann::json variant_json = nlohmann::json::object();  // merged into "variant"
};

// A proxy's own steps. Construction checks the input (std::invalid_argument for bad input)
// and does no MPI communication.
class Proxy {
 public:
  Proxy(const MpiWorld& w, const Variant& v) : w_(w), v_(v), traffic_(w.size) {}
  virtual ~Proxy() = default;
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // The bytes the tile bounds (--tile auto takes the app's tile kernel from the registry).
  virtual std::size_t tile_buffer_bytes() const = 0;
  // Why this run goes best untiled whatever the caches say (its untiled code skips work a
  // tile needs), in words; empty: the caches decide. --tile auto then runs it untiled.
  virtual std::string untiled_best() const { return {}; }
  // Builds the problem once the tile is known; timed as the set-up.
  virtual void set_up(const RunStart& start) = 0;
  // One untimed round that touches every page, leaving the state the timed run starts from.
  virtual void warm_up() = 0;
  // The phases the summary reads, so that every rank has the same set.
  virtual std::vector<std::string> phases() const = 0;
  // The timed part.
  virtual void iterate() = 0;
  // After the timed part, before the reduction: per-rank totals from finer timers (per
  // level, per step), traffic counted outside the timed loop.
  virtual void after_timing() {}
  // The phases (after after_timing) that are communication: time in MPI, for the efficiency
  // breakdown (load balance, communication efficiency).
  virtual std::vector<std::string> comm_phases() const { return {"comm"}; }
  // Collective; every rank returns the same verdict.
  virtual bool verify() = 0;
  // This rank's work over the timed run, per phase, from the proxy's own data structures
  // (after verify). Every rank declares the same phases in the same order.
  virtual Work work() const = 0;
  // Rank 0: the banner lines and the record's keys.
  virtual Summary summarize(const Measured& m, bool quiet) const = 0;

  // Keeps the resolved tile (tile_) and fusion, then set_up.
  void begin(const RunStart& start) {
    tile_ = start.tile;
    v_.fused = start.fused;
    set_up(start);
  }
  PhaseTimers& timers() { return timers_; }
  comm::PeerTraffic& traffic() { return traffic_; }

 protected:
  const MpiWorld& w_;
  Variant v_;  // as resolved; begin() settles its fusion with the tile
  tiling::TileResolution tile_;
  PhaseTimers timers_;
  comm::PeerTraffic traffic_;
};

// A NAS proxy: the common steps, its own options and its problem class (looked up before any
// member of the proxy is built).
template <class Options, class Class>
class NasProxy : public Proxy {
 protected:
  NasProxy(const MpiWorld& w, const Variant& v, const Options& o, const Class& cls) : Proxy(w, v), o_(o), cls_(cls) {}

  // The record's "size": the class's letter beside the facts given.
  nlohmann::json class_size(nlohmann::json facts) const {
    facts["class"] = std::string(1, cls_.name);
    return facts;
  }

  const Options o_;
  const Class& cls_;
};

// The whole run of one proxy; the exit code (0 verified, 1 verification failed).
// `make` constructs the proxy from the resolved variant (it may throw for bad input).
int run_proxy(const MpiWorld& w, const CommonOptions& co, const std::string& app, bool quiet,
              const std::function<std::unique_ptr<Proxy>(const Variant&)>& make);

// A proxy's whole main(): the shared options and the app's own (Options::add_to), then
// run_proxy with a P made from the world, the variant and the app's options (and the shared
// options, where P's constructor takes them); --quiet where the app has it (NasOptions).
template <class P, class Options>
int proxy_main(int argc, char** argv, const std::string& app, const std::string& description) {
  const auto add = [](pxq::cli::App& cli, Options& o) { o.add_to(cli); };
  const auto run = [&app](const MpiWorld& w, const CommonOptions& co, const Options& o) {
    bool quiet = false;
    if constexpr (std::is_base_of_v<NasOptions, Options>) quiet = o.quiet;
    return run_proxy(w, co, app, quiet, [&](const Variant& v) -> std::unique_ptr<Proxy> {
      if constexpr (std::is_constructible_v<P, const MpiWorld&, const Variant&, const Options&, const CommonOptions&>)
        return std::make_unique<P>(w, v, o, co);
      else
        return std::make_unique<P>(w, v, o);
    });
  };
  return miniapp_main<Options>(argc, argv, description, "pxq-" + app, add, run);
}

// The NAS-style banner of a summary.
std::string banner(const Summary& s, const Measured& m, const CommonOptions& co, const Variant& v,
                   const RunStart& start, int ranks, const std::vector<std::string>& notes, bool passed);

// The probes' epilogue, the same for every probe: rank 0 prints `text`, and appends the
// record (the shared frame plus `body`) when --json was given; the exit code follows `passed`.
int finish_probe(const MpiWorld& w, const CommonOptions& co, const Variant& v, const RunStart& start,
                 const std::string& app, bool passed, const std::string& text, const std::vector<std::string>& notes,
                 const nlohmann::json& body);

}  // namespace pxq::common

// A proxy's main(): PXQ_PROXY_MAIN(pxq::cg::CgProxy, pxq::cg::CgOptions, "cg", "pxq cg: ...").
#define PXQ_PROXY_MAIN(P, Options, app, description) \
  int main(int argc, char** argv) { return pxq::common::proxy_main<P, Options>(argc, argv, app, description); }
