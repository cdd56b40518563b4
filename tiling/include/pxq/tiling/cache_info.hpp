// Cache discovery for the tile policy: hwloc first, Linux sysfs as the fallback.
// Sizes are per cache instance; `shared_by` counts the cores (PUs) that share one instance.
#pragma once

#include <cstddef>
#include <string>

namespace pxq::tiling {

struct CacheLevel {
  std::size_t bytes = 0;  // 0 when the level does not exist or could not be read
  int shared_by = 0;
  int line = 0;  // bytes per line; 0 when not known
  int ways = 0;  // associativity; 0 when not known, -1 fully associative
};

struct CacheInfo {
  CacheLevel l1d, l2, l3;
  std::string source;  // "hwloc", "sysfs" or "none"
};

// hwloc's view of the machine; source "none" when hwloc cannot load a topology.
CacheInfo discover_caches_hwloc();

// Reads <root>/cpu0/cache/index*/{level,type,size,shared_cpu_list}; the root is a
// parameter so tests can point it at a fake tree. Source "none" when nothing is there.
CacheInfo discover_caches_sysfs(const std::string& root = "/sys/devices/system/cpu");

// hwloc, then sysfs for any level hwloc did not give.
CacheInfo discover_caches();

// Parses sysfs size strings such as "48K", "2048K", "105M"; throws on anything else.
std::size_t parse_sysfs_size(const std::string& text);
// Number of CPUs in a list such as "0-3,8,10-11".
int count_cpu_list(const std::string& text);

}  // namespace pxq::tiling
