// pxq-cg: entry point. Everything else lives in cg.cpp, cg_problem.cpp and the rooms.
#include "cg.hpp"

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<pxq::cg::CgOptions>(
      argc, argv, "pxq cg: NAS CG (inverse power method with conjugate gradient solves)", "pxq-cg",
      pxq::cg::add_cg_options, pxq::cg::run_cg);
}
