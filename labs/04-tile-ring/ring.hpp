// Lab 4, the harness's side: the update the ring applies and the function you write.
#pragma once

#include <cstddef>

namespace ring {

// One pass of the ring's update over count doubles from x: x[i] = a * x[i] + b. It reads and
// writes each double once, so a pass over data that is not in a cache runs at memory speed.
void update(double* x, std::size_t count);

// Yours (ring_compute.cpp): `passes` passes of update() over every one of the block's elems
// doubles. tile_elems is the tile size in doubles (--tile, 256 KiB by default).
void compute(double* block, std::size_t elems, int passes, std::size_t tile_elems);

}  // namespace ring
