// Cache discovery: hwloc's topology, with sysfs as a fallback for machines or containers
// where hwloc cannot see caches.
#include "pxq/tiling/cache_info.hpp"

#include <hwloc.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pxq::tiling {
namespace {

CacheLevel hwloc_level(hwloc_topology_t topo, hwloc_obj_type_t type) {
  CacheLevel out;
  hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
  if (obj == nullptr || obj->attr == nullptr) return out;
  out.bytes = static_cast<std::size_t>(obj->attr->cache.size);
  out.shared_by = obj->cpuset ? hwloc_bitmap_weight(obj->cpuset) : 0;
  out.line = static_cast<int>(obj->attr->cache.linesize);
  out.ways = obj->attr->cache.associativity;
  return out;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

}  // namespace

std::size_t parse_sysfs_size(const std::string& text) {
  std::size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("unreadable cache size '" + text + "'");
  }
  std::string rest = text.substr(pos);
  if (rest.empty()) return v;
  if (rest == "K") return v * 1024ull;
  if (rest == "M") return v * 1024ull * 1024ull;
  if (rest == "G") return v * 1024ull * 1024ull * 1024ull;
  throw std::invalid_argument("unreadable cache size '" + text + "'");
}

int count_cpu_list(const std::string& text) {
  int count = 0;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    auto dash = part.find('-');
    if (dash == std::string::npos) {
      ++count;
    } else {
      count += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    }
  }
  return count;
}

CacheInfo discover_caches_hwloc() {
  CacheInfo info;
  info.source = "none";
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return info;
  if (hwloc_topology_load(topo) == 0) {
    info.l1d = hwloc_level(topo, HWLOC_OBJ_L1CACHE);
    info.l2 = hwloc_level(topo, HWLOC_OBJ_L2CACHE);
    info.l3 = hwloc_level(topo, HWLOC_OBJ_L3CACHE);
    if (info.l1d.bytes || info.l2.bytes || info.l3.bytes) info.source = "hwloc";
  }
  hwloc_topology_destroy(topo);
  return info;
}

CacheInfo discover_caches_sysfs(const std::string& root) {
  CacheInfo info;
  info.source = "none";
  for (int index = 0; index < 16; ++index) {
    const std::string dir = root + "/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty()) continue;
    const std::string type = read_line(dir + "type");
    if (type == "Instruction") continue;
    CacheLevel c;
    try {
      c.bytes = parse_sysfs_size(read_line(dir + "size"));
      c.shared_by = count_cpu_list(read_line(dir + "shared_cpu_list"));
      c.line = std::atoi(read_line(dir + "coherency_line_size").c_str());  // 0 when missing
      c.ways = std::atoi(read_line(dir + "ways_of_associativity").c_str());
    } catch (const std::exception&) {
      continue;  // an unreadable entry is skipped, not guessed
    }
    if (level == "1") info.l1d = c;
    if (level == "2") info.l2 = c;
    if (level == "3") info.l3 = c;
    info.source = "sysfs";
  }
  return info;
}

CacheInfo discover_caches() {
  CacheInfo info = discover_caches_hwloc();
  if (info.l1d.bytes && info.l2.bytes) return info;
  CacheInfo fs = discover_caches_sysfs();
  if (fs.source == "none") return info;
  if (!info.l1d.bytes) info.l1d = fs.l1d;
  if (!info.l2.bytes) info.l2 = fs.l2;
  if (!info.l3.bytes) info.l3 = fs.l3;
  info.source = info.source == "hwloc" ? "hwloc+sysfs" : "sysfs";
  return info;
}

}  // namespace pxq::tiling
