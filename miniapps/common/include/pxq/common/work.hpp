// Work a proxy declares once, per phase, from its own data structures: the floating-point
// operations it performs and the bytes it must move over the timed run. The lifecycle reduces
// the declarations over the ranks and renders every derived figure (GFlop/s, GB/s at the core
// and from memory, arithmetic intensity) for the banner and the record from them, so no proxy
// does that arithmetic by hand; `pxq roofline` places the run against its layout's ceilings
// with the same figures.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace pxq::common {

// One phase's work on this rank over the whole timed run (every iteration, every worker).
struct PhaseWork {
  std::string phase;         // the phase timer the work runs under ("compute", "spmv", ...)
  double flops = 0.0;        // floating-point operations
  double bytes = 0.0;        // loads + stores as the cores issue them (every sweep)
  double memory = 0.0;       // of those, the bytes that must cross the memory bus even when each sweep's
                             // working set stays in cache: the compulsory traffic (data arriving or
                             // leaving each iteration, streams read once)
  double footprint = 0.0;    // the bytes the phase touches on this rank: when all of it fits in the cache
                             // a rank owns, even the compulsory traffic is served from there
  double working_set = 0.0;  // the bytes one worker reuses from one sweep to the next (its tile, its block)
  std::string what;          // how the bytes were counted, in words (the record's "what")
  // The record's headline rate (metrics[metric], GB/s) where the app has one: the bytes at the
  // cores, or the compulsory bytes (memory_metric), over the phase's time or the run's
  // (over_total).
  std::string metric{};
  bool memory_metric = false, over_total = false;
  // The access kind whose measured ceiling bounds the phase: "stream" (sweeps the stream
  // curve gives), or a kind of the access-kind registry (pxq/probes/kinds.hpp: gather for CG's
  // SpMV, update for IS's counters, ...), as pxq-probe-bandwidth --kind measures them.
  std::string kind = "stream";
  // A phase that fuses two kinds' loops in one pass (MG's residual straight into the
  // restriction): this share of its flops (or bytes) runs at also_kind's rate, the rest at
  // kind's. The same on every rank.
  std::string also_kind{};
  double also_share = 0.0;
  // Of memory, the bytes a tiled pass moves again where two of its blocks meet (MG's rows at
  // the edges of its blocks of rows): what the tile costs, beyond what the kind's kernel
  // moves; priced at the memory roof on top of the kind's time.
  double edge = 0.0;
  // Rows the phase's kernel starts, each an inner loop of a length the branch predictor cannot
  // know (CG's SpMV: once per row, once per row and column window when tiled): what a row's
  // start costs beyond its bytes is priced from the two window kinds' rates (pxq roofline).
  double row_visits = 0.0;
};

// A proxy's declarations, in the order the banner shows them.
using Work = std::vector<PhaseWork>;

// One phase reduced over the ranks: sums of flops and bytes, and the largest rank's figures
// (what the slowest rank had to do).
struct PhaseTotals {
  PhaseWork sum;  // flops, bytes, memory: over every rank; footprint, working_set: the largest
  PhaseWork max;  // the largest rank's flops, bytes, memory
};

// The record's "work" object and the banner's lines, from the reduced declarations and each
// phase's time (slowest rank). A phase without time gets no rates (null in the record).
nlohmann::json work_json(const std::vector<PhaseTotals>& totals, const std::map<std::string, double>& seconds);
// The headline rates the declarations name (metric), for the record's "metrics".
nlohmann::json work_metrics(const std::vector<PhaseTotals>& totals, const std::map<std::string, double>& seconds,
                            double total);
std::vector<std::pair<std::string, std::string>> work_lines(const nlohmann::json& work);

}  // namespace pxq::common
