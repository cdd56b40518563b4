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
#define PXQ_APP_CHOICE(app, option, values, what)
#include "../../../../apps.def"
#undef PXQ_APP
#undef PXQ_APP_CHOICE
  };
  return list;
}

// An app's own choice (PXQ_APP_CHOICE in apps.def).
struct AppChoice {
  const char* app;
  const char* option;  // --option, and variant.<option> in the record
  const char* values;  // space-separated, the default first
  const char* what;    // the option's help
};

inline const std::vector<AppChoice>& app_choices() {
  static const std::vector<AppChoice> list = {
#define PXQ_APP(name, classes, tile, share, bench, headline, unit, what)
#define PXQ_APP_CHOICE(app, option, values, what) {#app, #option, values, what},
#include "../../../../apps.def"
#undef PXQ_APP
#undef PXQ_APP_CHOICE
  };
  return list;
}

// The values of one of an app's choices, the default first (std::invalid_argument if it has none).
inline std::vector<std::string> choice_values(const std::string& app, const std::string& option) {
  for (const auto& c : app_choices())
    if (app == c.app && option == c.option) {
      std::vector<std::string> out;
      std::string word;
      for (const char* p = c.values;; ++p) {
        if (*p == ' ' || *p == '\0') {
          if (!word.empty()) out.push_back(word);
          word.clear();
          if (*p == '\0') break;
        } else {
          word += *p;
        }
      }
      return out;
    }
  throw std::invalid_argument("app '" + app + "' has no choice --" + option);
}

// NAS classes as a reader would list them: "SWABC" -> "S, W, A, B or C".
inline std::string class_list(const std::string& letters) {
  std::string out;
  for (std::size_t i = 0; i < letters.size(); ++i) {
    if (i > 0) out += i + 1 == letters.size() ? " or " : ", ";
    out += letters[i];
  }
  return out;
}

inline const AppInfo& app_info(const std::string& name) {
  for (const auto& a : apps())
    if (name == a.name) return a;
  throw std::invalid_argument("unknown app '" + name + "'");
}

}  // namespace pxq::common
