// What every miniapp checks before it starts and writes into its record about where it ran:
// the driver's facts, the layout (requested versus observed) and the placement.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"
#include "pxq/comm/placement.hpp"

namespace pxq::common {

// --driver-info as JSON (an empty object when not given); std::invalid_argument otherwise.
nlohmann::json parse_driver_info(const std::string& text);

// std::invalid_argument when --nodes x --ranks-per-node does not match the ranks started.
void check_layout(const CommonOptions& o, int ranks);

struct LayoutFacts {
  int nodes = 1;           // as the driver said, else as observed
  int ranks_per_node = 1;  // as the driver said, else ranks / observed nodes
  int observed_nodes = 1;
};
LayoutFacts layout_facts(const CommonOptions& o, int ranks,
                         const std::vector<comm::RankPlacement>& placement);

// The record's "layout" object.
nlohmann::json layout_json(const CommonOptions& o, const LayoutFacts& f, int ranks, int threads);

// The record's "placement" array.
nlohmann::json placement_json(const std::vector<comm::RankPlacement>& placement);

// Notes about the layout worth a line in the output (launcher and observation disagree).
std::vector<std::string> layout_notes(const LayoutFacts& f);

}  // namespace pxq::common
