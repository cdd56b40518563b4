// pxq-ft: entry point. Everything else lives in ft.cpp, ft_problem.cpp and the rooms.
#include "ft.hpp"

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<pxq::ft::FtOptions>(argc, argv,
                                                       "pxq ft: NAS FT (3-D FFT solution of a diffusion equation)",
                                                       "pxq-ft", pxq::ft::add_ft_options, pxq::ft::run_ft);
}
