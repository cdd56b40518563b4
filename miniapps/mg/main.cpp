// pxq-mg: entry point. Everything else lives in mg.cpp, mg_problem.cpp and the rooms.
#include "mg.hpp"

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<pxq::mg::MgOptions>(argc, argv,
                                                       "pxq mg: NAS MG (V-cycle multigrid on a periodic 3-D grid)",
                                                       "pxq-mg", pxq::mg::add_mg_options, pxq::mg::run_mg);
}
