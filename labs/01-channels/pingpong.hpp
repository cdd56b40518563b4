// Lab 1, the harness's side: a link between ranks 0 and 1, and the function you write.
#pragma once

#include <cstddef>
#include <vector>

#include "lab_world.hpp"

namespace pingpong {

class Link {
 public:
  explicit Link(const lab::World& w);
  // One round trip of `bytes` bytes: rank 0 sends and then receives the echo, rank 1 receives
  // and echoes. Both ranks must call it the same number of times. Every payload is checked.
  void round_trip(std::size_t bytes);
  int rank() const { return w_.rank; }
  long round_trips() const { return trips_; }
  // The size of round trip `trip` (0 for a trip not made): what the harness checks was timed.
  std::size_t size_of(long trip) const {
    return trip >= 0 && trip < static_cast<long>(sizes_.size()) ? sizes_[static_cast<std::size_t>(trip)] : 0;
  }
  bool intact() const { return intact_; }

 private:
  lab::World w_;
  std::vector<unsigned char> send_, recv_;
  long trips_ = 0;
  bool intact_ = true;
  std::vector<std::size_t> sizes_;  // the bytes of every round trip, in order
};

// Yours (pingpong.cpp): the time of one message of `bytes` bytes, one way, in seconds (what
// rank 0 returns is reported). Both ranks run it with the same arguments.
double one_way_seconds(Link& link, std::size_t bytes);

}  // namespace pingpong
