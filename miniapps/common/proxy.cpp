// The proxy lifecycle and its one report builder (banner and record from one Summary).
#include "pxq/common/proxy.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "pxq/comm/uncounted.hpp"
#include "pxq/common/apps.hpp"
#include "pxq/common/run_counters.hpp"
#include "pxq/common/run_record.hpp"
#include "pxq/common/trace.hpp"
#include "pxq/kernels/backend.hpp"
#include "pxq/tiling/tile_policy.hpp"

namespace pxq::common {
namespace {

template <class Map>
std::vector<std::string> keys_of(const Map& map) {
  std::vector<std::string> out;
  out.reserve(map.size());
  for (const auto& kv : map) out.push_back(kv.first);
  return out;
}

void put(std::ostringstream& out, const std::string& label, const std::string& value) {
  char head[40];
  std::snprintf(head, sizeof(head), " %-16s= ", label.c_str());
  out << head << value << "\n";
}

void put_all(std::ostringstream& out, const std::vector<Line>& lines) {
  for (const auto& [label, value] : lines) put(out, label, value);
}

std::string tile_text(const tiling::TileResolution& tile, const std::string& detail) {
  if (!tile.tiled) return "off";
  return tiling::format_bytes(tile.bytes) + " (" + tile.source + (detail.empty() ? "" : ", " + detail) + ")";
}

double slowest(double local, MPI_Comm comm) {
  const comm::Uncounted bookkeeping;
  double out = 0.0;
  MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

// How much of its tolerance a verified value used: the largest of the app's errors over the
// tolerance (0: exact; 1: at the limit), so a record says how close a pass came to a fail.
// -1 when the app reports no error and tolerance.
double tolerance_used(const nlohmann::json& v) {
  if (!v.contains("tolerance") || !v["tolerance"].is_number() || v["tolerance"].get<double>() <= 0) return -1;
  double worst = -1;
  for (const char* key : {"error", "max_error", "max_rel_error", "checksum_rel_error"})
    if (v.contains(key) && v[key].is_number()) worst = std::max(worst, std::abs(v[key].get<double>()));
  return worst < 0 ? -1 : worst / v["tolerance"].get<double>();
}

nlohmann::json record(const Summary& s, const Measured& m, const std::string& app, const CommonOptions& co,
                      const Variant& v, const RunStart& start, int ranks, const std::vector<std::string>& notes,
                      bool passed) {
  nlohmann::json rec = record_frame(app, passed, co, v, start, ranks, notes);
  nlohmann::json time = {{"total", m.total}};
  if (!s.setup_what.empty()) time["setup"] = m.setup;
  time["mpi_init"] = m.mpi_init;
  time["app_wall"] = seconds_since_start();  // rank 0, from main's first step to its record
  time.update(s.time);
  nlohmann::json metrics = nlohmann::json::object();
  if (s.operations > 0) {
    const double mops = s.operations / m.total / 1e6;
    metrics.update({{"mops_total", mops}, {"mops_per_process", mops / ranks}});
  }
  metrics.update(m.work_metrics);
  metrics.update(s.metrics_json);
  metrics.update({{"mpi_bytes", m.messages["bytes"]}, {"mpi_messages", m.messages["messages"]}});
  nlohmann::json verification = {{"passed", passed}};
  verification.update(s.verification);
  if (const double used = tolerance_used(s.verification); used >= 0) verification["tolerance_used"] = used;
  rec.update(nlohmann::json{{"size", s.size},
                            {"time", time},
                            {"metrics", metrics},
                            {"messages", m.messages},
                            {"verification", verification}});
  rec["variant"].update(s.variant_json);
  if (!m.counters.is_null()) rec["counters"] = m.counters;
  if (!m.work.empty()) rec["work"] = m.work;
  const Efficiency& e = m.efficiency;
  rec["efficiency"] = {{"load_balance", e.load_balance},
                       {"communication", e.communication},
                       {"parallel", e.parallel},
                       {"useful_s", e.useful},
                       {"comm_s", e.comm},
                       {"method",
                        "POP: useful = each rank's elapsed time outside its communication phases; load balance "
                        "= mean/max useful; communication = max useful / runtime; parallel = their product"}};
  return rec;
}

// Each phase's work over the ranks, on rank 0: flops, bytes, compulsory and edge bytes, row visits summed
// and their largest rank's; footprint and working set, the largest.
std::vector<PhaseTotals> reduce_work(const Work& mine, MPI_Comm comm, int rank) {
  std::vector<double> sums, maxes;
  for (const auto& p : mine) {
    sums.insert(sums.end(), {p.flops, p.bytes, p.memory, p.edge, p.row_visits});
    maxes.insert(maxes.end(), {p.flops, p.bytes, p.memory, p.footprint, p.working_set, p.edge, p.row_visits});
  }
  std::vector<double> sum(sums.size()), max(maxes.size());
  MPI_Reduce(sums.data(), sum.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, 0, comm);
  MPI_Reduce(maxes.data(), max.data(), static_cast<int>(maxes.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
  std::vector<PhaseTotals> out;
  if (rank != 0) return out;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    PhaseTotals t{mine[i], mine[i]};
    const std::size_t a = 5 * i, b = 7 * i;
    t.sum.flops = sum[a];
    t.sum.bytes = sum[a + 1];
    t.sum.memory = sum[a + 2];
    t.sum.edge = sum[a + 3];
    t.sum.row_visits = sum[a + 4];
    t.max.flops = max[b];
    t.max.bytes = max[b + 1];
    t.max.memory = max[b + 2];
    t.sum.footprint = t.max.footprint = max[b + 3];
    t.sum.working_set = t.max.working_set = max[b + 4];
    t.max.edge = max[b + 5];
    t.max.row_visits = max[b + 6];
    out.push_back(t);
  }
  return out;
}

// The proxy's declared work, reduced and rated on rank 0 (collective).
void rate_work(const Proxy& proxy, const MpiWorld& w, Measured& m) {
  const comm::Uncounted bookkeeping;
  const std::vector<PhaseTotals> totals = reduce_work(proxy.work(), w.comm, w.rank);
  if (w.rank != 0) return;
  m.work = work_json(totals, m.phases);
  m.work_metrics = work_metrics(totals, m.phases, m.total);
}

// --declare: the work the configuration declares once set up, appended to the file as a run
// record's frame with a "declared" kind and no time (collective; nothing iterated or verified).
int declare(const Proxy& proxy, const MpiWorld& w, const CommonOptions& co, const std::string& app, const Variant& v,
            const RunStart& start, Measured& m) {
  for (const auto& phase : proxy.phases()) m.phases[phase] = 0.0;
  rate_work(proxy, w, m);
  if (w.rank != 0) return kExitOk;
  nlohmann::json rec = record_frame(app, true, co, v, start, w.size, {});
  rec.erase("placement");
  rec.erase("placement_summary");
  rec.update({{"kind", "declared"}, {"status", "declared"}, {"work", m.work}, {"time", {{"setup", m.setup}}}});
  append_record(co.declare_path, rec);
  return kExitOk;
}

}  // namespace

std::vector<Line> reference_checks(const std::pair<std::string, double>& value,
                                   const std::pair<std::string, double>& reference, double error, double tolerance) {
  return {{value.first, fmt("%20.13E", value.second)},
          {reference.first, fmt("%20.13E", reference.second)},
          {"Error", fmt("%20.13E", error) + " (tolerance " + fmt("%.0e", tolerance) + ")"}};
}

double Measured::phase(const std::string& name) const {
  const auto it = phases.find(name);
  return it == phases.end() ? 0.0 : it->second;
}

std::string banner(const Summary& s, const Measured& m, const CommonOptions& co, const Variant& v,
                   const RunStart& start, int ranks, const std::vector<std::string>& notes, bool passed) {
  const int T = v.threads;
  std::ostringstream out;
  out << s.preamble << "\n " << s.title << " Benchmark Completed.\n";
  put_all(out, s.head);
  put(out, "Time in seconds", fmt("%.4f", m.total));
  if (!s.setup_what.empty()) put(out, "Setup seconds", fmt("%.4f", m.setup) + " (" + s.setup_what + ", untimed)");
  put(out, "Total processes", std::to_string(ranks));
  put(out, "Process grid", s.grid);
  put(out, "Layout",
      std::to_string(start.facts.nodes) + "x" + std::to_string(start.facts.ranks_per_node) + "x" + std::to_string(T) +
          " (" + std::to_string(start.facts.observed_nodes) + " node(s) observed, " + co.alloc + ")");
  put(out, "Threads/process", std::to_string(T));
  put(out, "Variant", v.mode + ", backend " + kernels::backend_name(v.backend) + (v.fused ? ", fused" : ""));
  put(out, "Tile", tile_text(start.tile, s.tile_detail));
  put_all(out, s.variant);
  if (s.operations > 0) {
    const double mops = s.operations / m.total / 1e6;
    put(out, "Mop/s total", fmt("%.2f", mops));
    put(out, "Mop/s/process", fmt("%.2f", mops / ranks));
    put(out, "Operation type", "floating point");
  }
  put_all(out, s.metrics);
  put_all(out, work_lines(m.work));
  put(out, "MPI",
      std::to_string(m.messages["messages"].get<std::uint64_t>()) + " messages, " +
          fmt("%.3f", static_cast<double>(m.messages["bytes"].get<std::uint64_t>()) / 1e6) + " MB");
  if (!m.counters.is_null()) put(out, "Counters", counters_line(m.counters));
  if (m.efficiency.parallel > 0)
    put(out, "Efficiency",
        "parallel " + fmt("%.2f", m.efficiency.parallel) + " = load balance " + fmt("%.2f", m.efficiency.load_balance) +
            " x communication " + fmt("%.2f", m.efficiency.communication));
  for (const auto& n : notes) put(out, "Note", n);
  out << s.tables;
  put_all(out, s.checks);
  put(out, "Verification", passed ? "SUCCESSFUL" : "UNSUCCESSFUL");
  return out.str();
}

// Runs `fn` as one of the run's stages begun at `t0`: the seconds from `t0` to its end, kept in
// the trace when one is asked for.
template <class Fn>
double stage(const char* name, double t0, Fn&& fn) {
  fn();
  const double t1 = MPI_Wtime();
  if (trace::enabled()) trace::span(name, "run", t0, t1);
  return t1 - t0;
}

int run_proxy(const MpiWorld& w, const CommonOptions& co, const std::string& app, bool quiet,
              const std::function<std::unique_ptr<Proxy>(const Variant&)>& make) {
  // ---- validate everything before any MPI work ----
  // pxq's own exchanges (placement, tiles, timer barriers, phase and traffic reductions) are
  // comm::Uncounted: a message profile of a proxy holds the application's messages only.
  Variant variant = resolve_variant(co);
  const std::unique_ptr<Proxy> proxy = make(variant);
  const RunStart start = [&] {
    const comm::Uncounted bookkeeping;
    const AppInfo& info = app_info(app);
    return start_run(w, co, variant, proxy->tile_buffer_bytes(), info.tile_kernel,
                     tiling::parse_auto_share(info.auto_share), proxy->untiled_best());
  }();
  variant.fused = start.fused;  // an auto tile left off takes auto fusion with it
  const auto synced = [&] {
    const comm::Uncounted bookkeeping;
    return synced_time(w.comm);
  };

  Measured m;
  const double t_setup = synced();
  m.setup = slowest(stage("setup", t_setup, [&] { proxy->begin(start); }), w.comm);
  if (!co.declare_path.empty()) return declare(*proxy, w, co, app, variant, start, m);
  stage("warm-up", MPI_Wtime(), [&] { proxy->warm_up(); });
  proxy->timers().reset();
  proxy->traffic().reset();
  for (const auto& phase : proxy->phases()) proxy->timers().add(phase, 0.0);
  RunCounters counters = [&] {
    const comm::Uncounted bookkeeping;
    return RunCounters(w.comm, co.counters);
  }();
  proxy->timers().count_with(counters.counters());

  const double t0 = synced();
  counters.start();
  const double elapsed = stage("timed iterations", t0, [&] {
    proxy->iterate();
    counters.stop(w.rank);
  });
  trace::write(w.rank, t0);  // with a trace asked for: this rank's spans, aligned on t0
  m.total = slowest(elapsed, w.comm);
  proxy->timers().count_with(nullptr);
  proxy->after_timing();
  {
    const comm::Uncounted bookkeeping;
    // Every rank's elapsed and communication time to rank 0: the efficiency breakdown.
    double mine[2] = {elapsed, 0.0};
    for (const auto& phase : proxy->comm_phases()) mine[1] += proxy->timers().get(phase);
    std::vector<double> all(2 * static_cast<std::size_t>(w.size), 0.0);
    MPI_Gather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, w.comm);
    if (w.rank == 0) {
      std::vector<double> ranks_elapsed, ranks_comm;
      for (int r = 0; r < w.size; ++r) {
        ranks_elapsed.push_back(all[2 * static_cast<std::size_t>(r)]);
        ranks_comm.push_back(all[2 * static_cast<std::size_t>(r) + 1]);
      }
      m.efficiency = efficiency_of(ranks_elapsed, ranks_comm);
    }
    m.phases = proxy->timers().max_over_ranks(w.comm);
    m.mpi_init = slowest(mpi_init_seconds(), w.comm);
    m.messages = proxy->traffic().summarize(w.comm, start.placement);
    m.counters = counters.summarize(w.comm, w.rank, proxy->timers().counts(), keys_of(m.phases));
  }

  const bool passed = proxy->verify();
  const int code = passed ? kExitOk : kExitVerificationFailed;
  rate_work(*proxy, w, m);
  if (w.rank != 0) return code;

  // ---- report (rank 0) ----
  const Summary s = proxy->summarize(m, quiet);
  std::vector<std::string> notes = start_notes(start);
  notes.insert(notes.end(), s.notes.begin(), s.notes.end());
  const std::string text = banner(s, m, co, variant, start, w.size, notes, passed);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!co.json_path.empty()) append_record(co.json_path, record(s, m, app, co, variant, start, w.size, notes, passed));
  return code;
}

int finish_probe(const MpiWorld& w, const CommonOptions& co, const Variant& v, const RunStart& start,
                 const std::string& app, bool passed, const std::string& text, const std::vector<std::string>& notes,
                 const nlohmann::json& body) {
  const int code = passed ? kExitOk : kExitVerificationFailed;
  if (w.rank != 0) return code;
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!co.json_path.empty()) {
    nlohmann::json rec = record_frame(app, passed, co, v, start, w.size, notes);
    rec.update(body);
    append_record(co.json_path, rec);
  }
  return code;
}

}  // namespace pxq::common
