// pxq-ft: entry point. Everything else lives in ft.cpp, ft_problem.cpp and the rooms.
#include "ft.hpp"

int main(int argc, char** argv) {
  CLI::App app{"pxq ft: NAS FT (3-D FFT solution of a diffusion equation)", "pxq-ft"};
  // A later value wins, so the driver's defaults can be overridden by the user's app options.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  pxq::common::CommonOptions common;
  pxq::ft::FtOptions ft;
  pxq::common::add_common_options(app, common);
  pxq::ft::add_ft_options(app, ft);
  return pxq::common::run_miniapp(argc, argv, app, [&](const pxq::common::MpiWorld& w) {
    return pxq::ft::run_ft(w, common, ft);
  });
}
