// The app registry: miniapps/apps.def as C++ (pxq-envinfo exports it for the driver).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace pxq::common {

struct AppInfo {
  const char* name;
  const char* classes;        // NAS classes, one letter each ("" when the app has none)
  const char* tile_kernel;    // the tile profile's kernel for --tile auto
  const char* auto_share;     // --tile auto without a profile: "L2/N" or "L3/N" (tiling::AutoShare)
  const char* bench_kernels;  // space-separated kernels pxq-bench-tiling measures
  const char* headline;       // the record's headline metric
  const char* unit;
  const char* what;
};

inline const std::vector<AppInfo>& apps() {
  static const std::vector<AppInfo> list = {
#define PXQ_APP(name, classes, tile, share, bench, headline, unit, what) \
  {#name, classes, tile, share, bench, headline, unit, what},
#include "../../../../apps.def"
#undef PXQ_APP
  };
  return list;
}

inline const AppInfo& app_info(const std::string& name) {
  for (const auto& a : apps())
    if (name == a.name) return a;
  throw std::invalid_argument("unknown app '" + name + "'");
}

}  // namespace pxq::common
