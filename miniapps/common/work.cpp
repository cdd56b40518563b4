// The derived figures of declared work (pxq/common/work.hpp), for the banner and the record.
#include "pxq/common/work.hpp"

#include <algorithm>
#include <cstdio>

namespace pxq::common {
namespace {

std::string fmt2(const char* spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), spec, v);
  return buf;
}

nlohmann::json rate(double amount, double seconds) {
  return seconds > 0 ? nlohmann::json(amount / seconds / 1e9) : nlohmann::json(nullptr);
}

nlohmann::json ratio(double num, double den) { return den > 0 ? nlohmann::json(num / den) : nlohmann::json(nullptr); }

constexpr std::size_t kShownPhases = 4;  // banner lines of declared work

}  // namespace

nlohmann::json work_json(const std::vector<PhaseTotals>& totals, const std::map<std::string, double>& seconds) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& t : totals) {
    const auto it = seconds.find(t.sum.phase);
    const double s = it == seconds.end() ? 0.0 : it->second;
    out[t.sum.phase] = {{"flops", t.sum.flops},
                        {"bytes", t.sum.bytes},
                        {"memory_bytes", t.sum.memory},
                        {"rank_max", {{"flops", t.max.flops}, {"bytes", t.max.bytes}, {"memory_bytes", t.max.memory}}},
                        {"footprint_bytes", t.sum.footprint},
                        {"working_set_bytes", t.sum.working_set},
                        {"seconds", s},
                        {"gflops", rate(t.sum.flops, s)},
                        {"gbs", rate(t.sum.bytes, s)},
                        {"memory_gbs", rate(t.sum.memory, s)},
                        {"intensity", ratio(t.sum.flops, t.sum.memory)},
                        {"core_intensity", ratio(t.sum.flops, t.sum.bytes)},
                        {"what", t.sum.what},
                        {"kind", t.sum.kind}};
    if (t.sum.also_share > 0) out[t.sum.phase]["also"] = {{"kind", t.sum.also_kind}, {"share", t.sum.also_share}};
    if (t.sum.edge > 0) {
      out[t.sum.phase]["edge_bytes"] = t.sum.edge;
      out[t.sum.phase]["rank_max"]["edge_bytes"] = t.max.edge;
    }
    if (t.sum.row_visits > 0) {
      out[t.sum.phase]["row_visits"] = t.sum.row_visits;
      out[t.sum.phase]["rank_max"]["row_visits"] = t.max.row_visits;
    }
  }
  return out;
}

nlohmann::json work_metrics(const std::vector<PhaseTotals>& totals, const std::map<std::string, double>& seconds,
                            double total) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& t : totals) {
    if (t.sum.metric.empty()) continue;
    const auto it = seconds.find(t.sum.phase);
    const double s = t.sum.over_total ? total : (it == seconds.end() ? 0.0 : it->second);
    out[t.sum.metric] = s > 0 ? (t.sum.memory_metric ? t.sum.memory : t.sum.bytes) / s / 1e9 : 0.0;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> work_lines(const nlohmann::json& work) {
  // The phases that move the most bytes, then one line for the rest (all in the record).
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [phase, w] : work.items()) order.emplace_back(-w["bytes"].get<double>(), phase);
  std::sort(order.begin(), order.end());
  std::vector<std::pair<std::string, std::string>> lines;
  const std::size_t shown = order.size() <= kShownPhases + 1 ? order.size() : kShownPhases;
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& w = work[order[i].second];
    std::string text = order[i].second + ": ";
    if (w["gbs"].is_null()) {
      text += "no time measured";
    } else {
      if (w["flops"].get<double>() > 0) text += fmt2("%.2f", w["gflops"].get<double>()) + " GFlop/s, ";
      text += fmt2("%.2f", w["gbs"].get<double>()) + " GB/s at the cores, " +
              fmt2("%.2f", w["memory_gbs"].get<double>()) + " GB/s compulsory from memory";
    }
    if (w["flops"].get<double>() > 0 && !w["intensity"].is_null())
      text += ", " + fmt2("%.3g", w["intensity"].get<double>()) + " flop/B";
    lines.emplace_back("Work", text);
  }
  if (shown < order.size())
    lines.emplace_back(
        "Work", std::to_string(order.size() - shown) + " phase(s) moving fewer bytes: see the record's \"work\"");
  return lines;
}

}  // namespace pxq::common
