// The FT proxy (NAS FT): options and the run.
#pragma once

#include <string>

#include "pxq/common/app.hpp"
#include "pxq/common/options.hpp"

namespace pxq::ft {

struct FtOptions {
  std::string cls = "S";        // NAS problem class
  std::string decomp = "auto";  // 1d, 2d or auto
  std::string fft = "pxq";      // who computes the 1-D FFTs: pxq or fftw
  bool quiet = false;           // no per-iteration lines and no per-step table
};

void add_ft_options(CLI::App& app, FtOptions& o);
int run_ft(const common::MpiWorld& w, const common::CommonOptions& co, const FtOptions& o);

}  // namespace pxq::ft
