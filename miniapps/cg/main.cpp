// pxq-cg: entry point. Everything else lives in cg.cpp, cg_problem.cpp and the rooms.
#include "cg.hpp"

int main(int argc, char** argv) {
  CLI::App app{"pxq cg: NAS CG (inverse power method with conjugate gradient solves)", "pxq-cg"};
  // A later value wins, so the driver's defaults can be overridden by the user's app options.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  pxq::common::CommonOptions common;
  pxq::cg::CgOptions cg;
  pxq::common::add_common_options(app, common);
  pxq::cg::add_cg_options(app, cg);
  return pxq::common::run_miniapp(argc, argv, app, [&](const pxq::common::MpiWorld& w) {
    return pxq::cg::run_cg(w, common, cg);
  });
}
