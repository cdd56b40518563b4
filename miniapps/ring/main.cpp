// pxq-ring: entry point. Everything else lives in ring.cpp and the rooms it uses.
#include "ring.hpp"

int main(int argc, char** argv) {
  return pxq::common::miniapp_main<pxq::ring::RingOptions>(
      argc, argv, "pxq ring: compute on a block, pass it to the right neighbour, repeat", "pxq-ring",
      pxq::ring::add_ring_options, pxq::ring::run_ring);
}
