// What every NAS proxy's set-up checks the same way: the class name and the process count.
// Header-only and MPI-free, so the problem libraries and their unit tests use it directly.
#pragma once

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

#include "pxq/common/apps.hpp"

namespace pxq::common {

inline int log2_floor(int n) {
  int l = 0;
  while ((1 << (l + 1)) <= n) ++l;
  return l;
}

// std::invalid_argument naming the nearest valid counts unless `nprocs` is a power of two.
inline void require_power_of_two(const char* app, int nprocs) {
  if (nprocs > 0 && (nprocs & (nprocs - 1)) == 0) return;
  const int below = 1 << log2_floor(std::max(1, nprocs));
  throw std::invalid_argument(std::string(app) + " needs a power-of-two number of processes, got " +
                              std::to_string(nprocs) + ": use " + std::to_string(below) + " or " +
                              std::to_string(below * 2));
}

// The entry of `table` (items with a char `name`) for a one-letter class, case-insensitive;
// std::invalid_argument naming the accepted classes otherwise.
template <class Table>
const auto& find_nas_class(const Table& table, const std::string& name) {
  if (name.size() == 1) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
    for (const auto& k : table)
      if (k.name == c) return k;
  }
  std::string letters;
  for (const auto& k : table) letters += k.name;
  throw std::invalid_argument("unknown class '" + name + "': use " + class_list(letters));
}

}  // namespace pxq::common
