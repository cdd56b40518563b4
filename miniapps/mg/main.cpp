// pxq-mg: entry point. Everything else lives in mg.cpp, mg_problem.cpp and the rooms.
#include "mg.hpp"

int main(int argc, char** argv) {
  CLI::App app{"pxq mg: NAS MG (V-cycle multigrid on a periodic 3-D grid)", "pxq-mg"};
  // A later value wins, so the driver's defaults can be overridden by the user's app options.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  pxq::common::CommonOptions common;
  pxq::mg::MgOptions mg;
  pxq::common::add_common_options(app, common);
  pxq::mg::add_mg_options(app, mg);
  return pxq::common::run_miniapp(argc, argv, app, [&](const pxq::common::MpiWorld& w) {
    return pxq::mg::run_mg(w, common, mg);
  });
}
