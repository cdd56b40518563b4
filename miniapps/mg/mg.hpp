// The MG proxy (NAS MG): options and the run.
#pragma once

#include <string>

#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"

namespace pxq::mg {

struct MgOptions {
  std::string cls = "S";  // NAS problem class
  bool quiet = false;     // no progress lines
};

void add_mg_options(CLI::App& app, MgOptions& o);
int run_mg(const common::MpiWorld& w, const common::CommonOptions& co, const MgOptions& o);

}  // namespace pxq::mg
