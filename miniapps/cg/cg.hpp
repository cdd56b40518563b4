// The CG proxy (NAS CG): options and the run.
#pragma once

#include <string>

#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"

namespace pxq::cg {

struct CgOptions {
  std::string cls = "S";       // NAS problem class
  std::string matrix = "csr";  // csr (every entry, as NAS) or sym (the upper triangle, applied twice)
  bool quiet = false;          // no per-iteration lines
};

void add_cg_options(CLI::App& app, CgOptions& o);
int run_cg(const common::MpiWorld& w, const common::CommonOptions& co, const CgOptions& o);

}  // namespace pxq::cg
