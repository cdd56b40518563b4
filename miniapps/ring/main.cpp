// pxq-ring: entry point. Everything else lives in ring.cpp and the rooms it uses.
#include "ring.hpp"

int main(int argc, char** argv) {
  CLI::App app{"pxq ring: compute on a block, pass it to the right neighbour, repeat", "pxq-ring"};
  // A later value wins, so the driver's defaults can be overridden by the user's app options.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  pxq::common::CommonOptions common;
  pxq::ring::RingOptions ring;
  pxq::common::add_common_options(app, common);
  pxq::ring::add_ring_options(app, ring);
  return pxq::common::run_miniapp(argc, argv, app, [&](const pxq::common::MpiWorld& w) {
    return pxq::ring::run_ring(w, common, ring);
  });
}
